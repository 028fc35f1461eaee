"""Taylor basis of the Gaussian RKHS (pkawv_jezequel2019, §3.1, eq. (6)).

For a multi-index k ∈ N^d,

    g_k(x) = Π_i ψ_{k_i}(x^(i)),    ψ_k(z) = z^k / (σ^k √(k!)) · exp(-z² / (2σ²)),

and G_M = {g_k : |k| <= M} has C(d+M, M) functions (190 for d = 18, M = 2). The g_k are an
orthonormal basis of the Gaussian RKHS (Lemma 11, proved in Appendix F.1), so the Gram matrix Q of H.1
eq. (38) is the identity and φ(x) = (g_k(x))_k is used as is. By the multinomial theorem
(Appendix F.2)

    Σ_{|k|<=M} g_k(x) g_k(x') = exp(-(||x||² + ||x'||²)/(2σ²)) Σ_{j=0}^{M} (xᵀx'/σ²)^j / j!,

which tends to k(x, x') = exp(-||x - x'||²/(2σ²)) as M grows (Lemma 12), with error at most
(R/σ)^(2M+2) / (M+1)! for ||x||, ||x'|| <= R (Lemma 13).

The authors' code (Appendix H.2) builds the same kernel from repeated outer products, Σ_j d^j
features (343 for d = 18, M = 2) with duplicates; this map has one feature per multi-index.
Features are ordered by degree, then lexicographically; degree j is built from degree j - 1 by
multiplying by x^(v) with v >= the last variable used, so each monomial appears once.
"""

from __future__ import annotations

from math import comb, factorial

import numpy as np

from okl.jit import njit
from okl.warmup import warm


def taylor_dim(d: int, M: int) -> int:
    """Number of multi-indices k ∈ N^d with |k| <= M."""
    return comb(d + M, M)


class TaylorFeatures:
    """The map x ↦ (g_k(x))_{|k|<=M} for inputs of dimension d."""

    def __init__(self, d: int, M: int, sigma: float) -> None:
        self.d, self.M, self.sigma = d, M, sigma
        exponents = [np.zeros(d, dtype=np.int64)]
        parent, variable = [0], [0]  # feature k = feature parent[k] · x^(variable[k]) (k >= 1)
        previous = [0]  # indices of degree j - 1
        for _ in range(M):
            current = []
            for p in previous:
                for v in range(variable[p], d):
                    exponent = exponents[p].copy()
                    exponent[v] += 1
                    exponents.append(exponent)
                    parent.append(p)
                    variable.append(v)
                    current.append(len(exponents) - 1)
            previous = current
        self.exponents = np.array(exponents)
        self.dim = len(exponents)
        self._parent = np.array(parent, dtype=np.int64)
        self._variable = np.array(variable, dtype=np.int64)
        norm = np.array([np.prod([factorial(int(e)) for e in row]) for row in self.exponents], float)
        self._scale = 1.0 / np.sqrt(norm)  # 1 / √(Π_i k_i!)
        warm(self.transform, np.zeros((1, d)))  # compile (or load) the kernel now, not inside timed rounds

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Features of the rows of X (n×d) as an n×r C-ordered array."""
        X = np.ascontiguousarray(np.atleast_2d(X), dtype=np.float64)
        F = np.empty((X.shape[0], self.dim))
        _taylor_rows(X, 1.0 / self.sigma, self._parent, self._variable, self._scale, F)
        return F


@njit
def _taylor_rows(X, inv_sigma, parent, variable, scale, F):
    n, d = X.shape
    xs = np.empty(d)
    for i in range(n):
        sq = 0.0
        for j in range(d):
            xs[j] = X[i, j] * inv_sigma
            sq += xs[j] * xs[j]
        f = F[i]
        damp = np.exp(-0.5 * sq)
        if damp == 0.0:  # ||x||/σ > 38.6: every feature underflows to 0 (its powers could overflow: inf·0 = nan)
            f[:] = 0.0
            continue
        f[0] = 1.0
        for k in range(1, f.size):
            f[k] = f[parent[k]] * xs[variable[k]]
        for k in range(f.size):
            f[k] *= scale[k] * damp
