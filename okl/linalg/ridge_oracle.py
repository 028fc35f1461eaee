"""The kernel-ridge oracle of a growing sequence, and its loss if one more round were added.

After t rounds (x_s, y_s) the oracle is the kernel ridge fit f_t = argmin_f Σ_{s<=t} (f(x_s) − y_s)²
+ λ||f||² (pkawv_jezequel2019 eq. (1) comparator; Appendix G's "oracle"). With A = K_t + λI and
w = A⁻¹y, its fitted values are Kw = y − λw, so its loss on the rounds it was fitted on is

    L_t = Σ_{s<=t} (f_t(x_s) − y_s)² = λ² ||w||².

A candidate round (x, y) borders A with k = K(X_t, x) and k(x, x) + λ. With u = A⁻¹k,
s = k(x, x) + λ − kᵀu (the Schur complement), m = kᵀw (the oracle's prediction at x) and
e = (y − m)/s, the bordered inverse gives w' = (w − e u, e), hence

    L_{t+1}(x, y) = λ² (||w||² − 2e uᵀw + e² (||u||² + 1)),

a quadratic in y. The oracle keeps W = A⁻¹ explicitly (bordered in O(t²) per round) so that the
terms of a batch of B candidates cost one t×t by t×B product: this is what makes the greedy
adversary of :mod:`okl.datasets.adversary` incremental (O(t²) per candidate instead of a refit).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from okl.kernels import Kernel


@dataclass
class Terms:
    """Per-candidate quantities: m = kᵀw, s = k(x,x) + λ − kᵀA⁻¹k, uw = uᵀw, uu = ||u||²."""

    m: np.ndarray
    s: np.ndarray
    uw: np.ndarray
    uu: np.ndarray


class RidgeOracle:
    """Exact kernel ridge regression on a growing sequence, with explicit inverse."""

    def __init__(self, d: int, kernel: Kernel, lam: float) -> None:
        self.kernel, self.lam = kernel, lam
        self.t = 0
        self.X = np.zeros((0, d))
        self.W = np.zeros((0, 0))  # (K_t + λI)⁻¹, contiguous (BLAS reads it once per batch of candidates)
        self.w = np.zeros(0)  # A⁻¹ y
        self.q = 0.0  # ||w||²

    @property
    def loss(self) -> float:
        """L_t, the oracle's loss on the t rounds it was fitted on."""
        return self.lam**2 * self.q

    def terms(self, Xc: np.ndarray) -> tuple[Terms, np.ndarray]:
        """The terms of the candidates Xc (B×d), and u = A⁻¹k (t×B)."""
        K = self.kernel(self.X, Xc)  # t×B
        U = self.W @ K
        s = self.kernel.diag(Xc) + self.lam - np.einsum("ij,ij->j", K, U)
        return Terms(K.T @ self.w, s, U.T @ self.w, np.einsum("ij,ij->j", U, U)), U

    def loss_after(self, terms: Terms, y: np.ndarray) -> np.ndarray:
        """L_{t+1} if the candidates were added with labels y (broadcast against the candidates)."""
        e = (y - terms.m) / terms.s
        return self.lam**2 * (self.q - 2.0 * e * terms.uw + e * e * (terms.uu + 1.0))

    def add(self, x: np.ndarray, y: float) -> None:
        """Append the round (x, y): border W and w (a new (t+1)×(t+1) array, O(t²))."""
        terms, U = self.terms(x[None, :])
        t, s, u = self.t, float(terms.s[0]), U[:, 0]
        e = (y - float(terms.m[0])) / s
        W = np.empty((t + 1, t + 1))
        np.multiply.outer(u / s, u, out=W[:t, :t])
        W[:t, :t] += self.W
        W[:t, t] = W[t, :t] = -u / s
        W[t, t] = 1.0 / s
        self.W = W
        self.w = np.append(self.w - e * u, e)
        self.X = np.vstack([self.X, x])
        self.t = t + 1
        self.q = float(self.w @ self.w)
