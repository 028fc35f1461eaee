"""Kernels. The Gaussian kernel k(x, x') = exp(-||x - x'||² / (2σ²)) is used by every learner of the
papers; the linear kernel k(x, x') = xᵀx' serves to check kernel methods against their explicit
counterparts in R^d (KONS against ONS, Lemmas 1-2 of sketched_kons_calandriello2017)."""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

KINDS = ("gaussian", "linear")


def gaussian(X: np.ndarray, Y: np.ndarray, sigma: float) -> np.ndarray:
    """Kernel matrix K[i, j] = k(X[i], Y[j]) for rows X (n×d) and Y (m×d).

    With x̄ = x/σ, the exponent -||x̄ - ȳ||²/2 = x̄ᵀȳ - ||x̄||²/2 - ||ȳ||²/2 is formed in place on one
    matrix product (a third of the memory traffic of building the squared distances first) and
    clipped at 0 against round-off; the diagonal of ``gaussian(X, X)`` is therefore 1 to within a few ulps.
    """
    Xs, Ys = X / sigma, Y / sigma
    E = Xs @ Ys.T
    E -= 0.5 * np.einsum("ij,ij->i", Xs, Xs)[:, None]
    E -= 0.5 * np.einsum("ij,ij->i", Ys, Ys)[None, :]
    np.minimum(E, 0.0, out=E)
    return np.exp(E, out=E)


@numba.njit(cache=True)
def squared_distance(a: np.ndarray, b: np.ndarray) -> float:
    """||a − b||² by a compiled loop, for compiled code that evaluates the Gaussian kernel point by point."""
    s = 0.0
    for i in range(a.size):
        diff = a[i] - b[i]
        s += diff * diff
    return s


@numba.njit(nogil=True, cache=True)
def kernel_row(gaussian: bool, sigma: float, x: np.ndarray, Y: np.ndarray, out: np.ndarray) -> float:
    """out[j] = k(x, Y[j]) by a compiled loop (the Gaussian kernel from the squared distance, else xᵀY[j]),
    for compiled code that plays one round or grows a dictionary; returns k(x, x)."""
    c = -0.5 / (sigma * sigma)
    for j in range(Y.shape[0]):
        out[j] = np.exp(c * _distance2(x, Y[j])) if gaussian else np.dot(x, Y[j])
    return 1.0 if gaussian else np.dot(x, x)


@numba.njit(nogil=True, cache=True, fastmath={"reassoc", "contract"})
def _distance2(a: np.ndarray, b: np.ndarray) -> float:
    """||a − b||², its sum reassociated so that it runs on vector units (5× the ordered loop at d = 784; the
    order of a sum is the only change, and it is the same on every call)."""
    s = 0.0
    for i in range(a.size):
        diff = a[i] - b[i]
        s += diff * diff
    return s


@dataclass(frozen=True)
class Kernel:
    """A kernel by name (``gaussian`` with bandwidth ``sigma``, or ``linear``)."""

    kind: str = "gaussian"
    sigma: float = 1.0

    def __call__(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """K[i, j] = k(X[i], Y[j])."""
        X, Y = np.atleast_2d(X), np.atleast_2d(Y)
        return gaussian(X, Y, self.sigma) if self.kind == "gaussian" else X @ Y.T

    @property
    def compiled(self) -> tuple[bool, float]:
        """The arguments of :func:`kernel_row` that name this kernel."""
        return self.kind == "gaussian", float(self.sigma)

    def diag(self, X: np.ndarray) -> np.ndarray:
        """k(x, x) for each row."""
        X = np.atleast_2d(X)
        return np.ones(len(X)) if self.kind == "gaussian" else (X * X).sum(axis=1)
