"""Kernels. The Gaussian kernel k(x, x') = exp(-||x - x'||² / (2σ²)) is used by every learner of the
papers; the linear kernel k(x, x') = xᵀx' serves to check kernel methods against their explicit
counterparts in R^d (KONS against ONS, Lemmas 1-2 of sketched_kons_calandriello2017)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from okl.jit import njit

KINDS = ("gaussian", "linear")


def gaussian(X: np.ndarray, Y: np.ndarray, sigma: float) -> np.ndarray:
    """Kernel matrix K[i, j] = k(X[i], Y[j]) for rows X (n×d) and Y (m×d).

    With x̄ = x/σ, the exponent -||x̄ - ȳ||²/2 = x̄ᵀȳ - ||x̄||²/2 - ||ȳ||²/2 is formed in place on one
    matrix product (a third of the memory traffic of building the squared distances first) and
    clipped at 0 against round-off; the diagonal of ``gaussian(X, X)`` is therefore 1 to within a few ulps.
    """
    Xs, Ys = X / sigma, Y / sigma
    return gaussian_scaled(Xs, half_norms(Xs), Ys, half_norms(Ys))


def half_norms(Xs: np.ndarray) -> np.ndarray:
    """||x̄||²/2 of each row of the scaled points X̄ = X/σ (each row's sum is the same alone as in the matrix)."""
    return 0.5 * np.einsum("ij,ij->i", Xs, Xs)


def gaussian_scaled(Xs: np.ndarray, x_half: np.ndarray, Ys: np.ndarray, y_half: np.ndarray) -> np.ndarray:
    """:func:`gaussian` from the scaled rows X̄, Ȳ and their :func:`half_norms`, bit for bit: for a learner that
    keeps its scaled points and their norms beside its points (BSGD), which every call rescaled and summed again."""
    E = Xs @ Ys.T
    E -= x_half[:, None]
    E -= y_half[None, :]
    np.minimum(E, 0.0, out=E)
    return np.exp(E, out=E)


@njit
def squared_distance(a: np.ndarray, b: np.ndarray) -> float:
    """||a − b||² by a compiled loop, for compiled code that evaluates the Gaussian kernel point by point."""
    s = 0.0
    for i in range(a.size):
        diff = a[i] - b[i]
        s += diff * diff
    return s


@njit(nogil=True)
def kernel_row(gaussian: bool, sigma: float, x: np.ndarray, Y: np.ndarray, out: np.ndarray) -> float:
    """out[j] = k(x, Y[j]) by a compiled loop (the Gaussian kernel from the squared distance, else xᵀY[j]),
    for compiled code that plays one round or grows a dictionary; returns k(x, x)."""
    if not gaussian:
        for j in range(Y.shape[0]):
            out[j] = np.dot(x, Y[j])
        return np.dot(x, x)
    _squared_distances(x, Y, out)
    c = -0.5 / (sigma * sigma)
    for j in range(Y.shape[0]):
        out[j] = np.exp(c * out[j])
    return 1.0


CHUNK_BYTES = 256 * 1024  # the rows of Y that :func:`kernel_rows` keeps in cache while every row of X goes over them


@njit(nogil=True)
def kernel_rows(gaussian: bool, sigma: float, X: np.ndarray, Y: np.ndarray, out: np.ndarray) -> None:
    """out[p, j] = k(X[p], Y[j]): :func:`kernel_row` for each row of X, bit for bit, with Y taken by chunks of
    ``CHUNK_BYTES`` (a multiple of four rows, so each row is summed as in the whole) that stay in cache while
    every row of X goes over them. KOMP's mini-batch of 32 points against a dictionary of 3,000 MNIST digits
    (19 MB) read the dictionary 32 times, once per point."""
    n, d = Y.shape
    step = max(4, CHUNK_BYTES // (8 * max(d, 1)) // 4 * 4)
    for a in range(0, n, step):
        b = min(a + step, n)
        for p in range(X.shape[0]):
            kernel_row(gaussian, sigma, X[p], Y[a:b], out[p, a:b])


@njit(nogil=True)
def _squared_distances(x: np.ndarray, Y: np.ndarray, out: np.ndarray) -> None:
    """out[j] = ||x − Y[j]||², each sum in index order (:func:`squared_distance`'s bits), four rows at a time so
    that vector units add the four rows' terms side by side (at d = 784: 1.8× faster than one row at a time,
    2.0× slower than a reassociated sum). A reassociated sum (fastmath) is not used: its vector code depended
    on whether the caller was compiled in the same process or loaded from numba's cache, so the first run on a
    machine and the later ones differed in the last bits (POLK, the Nyström and KONS learners; measured)."""
    n, d = Y.shape
    whole = n - n % 4
    for j in range(0, whole, 4):
        s0, s1, s2, s3 = 0.0, 0.0, 0.0, 0.0
        for i in range(d):
            e0, e1, e2, e3 = x[i] - Y[j, i], x[i] - Y[j + 1, i], x[i] - Y[j + 2, i], x[i] - Y[j + 3, i]
            s0 += e0 * e0
            s1 += e1 * e1
            s2 += e2 * e2
            s3 += e3 * e3
        out[j], out[j + 1], out[j + 2], out[j + 3] = s0, s1, s2, s3
    for j in range(whole, n):
        out[j] = squared_distance(x, Y[j])


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
