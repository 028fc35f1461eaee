"""Random Fourier features of the Gaussian kernel (Rahimi & Recht; raker_shen2018 eq. (9)).

    z_V(x) = D^{-1/2} [sin(Vx); cos(Vx)] ∈ R^{2D},    V ∈ R^{D×d},  V_ij ~ N(0, σ^{-2}) i.i.d.,

so that z_V(x)ᵀz_V(x') = (1/D) Σ_i cos(v_iᵀ(x - x')) is an unbiased estimate of
k(x, x') = exp(-||x - x'||²/(2σ²)) with variance O(1/D). D counts frequencies; the map has 2D
coordinates (all sines, then all cosines; the order is immaterial). ||z_V(x)||² = 1 exactly.

Orthogonal random features (raker_shen2018 eq. (12), after Yu et al. 2016): V_ORF = σ⁻¹ S Q per block
of d rows, Q a uniformly distributed (Haar) orthogonal d×d matrix (QR of a Gaussian matrix with the
signs of R's diagonal moved into Q) and S diagonal with i.i.d. χ_d entries (the norms of independent
standard Gaussian d-vectors), so that each row has the law of a Gaussian row and the estimate stays
unbiased; D > d stacks ⌈D/d⌉ independent blocks and keeps the first D rows. Rows within a block are
orthogonal, which lowers the variance of the kernel estimate at equal D for nearby points (measured,
d = 8, D = 16, typical ||x − x'||: variance ratio 0.22 at 0.7σ, 0.41 at 1.4σ, 0.80 at 2.2σ, 1.05 at 4σ).
"""

from __future__ import annotations

import numpy as np

from okl.features.sincos import sincos_rows
from okl.seeding import rng
from okl.warmup import warm

BLOCKS = 4096  # orthogonal blocks drawn and factored at a time (_orthogonal_rows)


class RandomFourierFeatures:
    """The map z_V with D frequencies drawn from the stream ``rng(seed, "random_fourier")``."""

    def __init__(self, d: int, D: int, sigma: float, seed: int, orthogonal: bool = False) -> None:
        g = rng(seed, "random_fourier")
        self._use((_orthogonal_rows(g, D, d) if orthogonal else g.standard_normal((D, d))) / sigma, normalise=True)
        self.sigma = sigma

    @classmethod
    def from_frequencies(cls, V: np.ndarray, normalise: bool) -> RandomFourierFeatures:
        """The map [sin(Vx); cos(Vx)] of given frequencies V (D×d), times D^{-1/2} when ``normalise``
        (the Raker authors' code does not normalise: :mod:`okl.learners.multikernel.raker_code`)."""
        features = cls.__new__(cls)
        features._use(V, normalise)
        features.sigma = None
        return features

    def _use(self, V: np.ndarray, normalise: bool) -> None:
        self.V = np.ascontiguousarray(V, dtype=np.float64)
        self.D, self.d = V.shape
        self.dim = 2 * self.D
        self._scale = 1.0 / np.sqrt(self.D) if normalise else 1.0
        warm(self.transform, np.zeros((1, self.d)))  # compile (or load) the kernel now, not inside timed rounds

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Features of the rows of X (n×d) as an n×2D C-ordered array."""
        X = np.atleast_2d(X)
        Z = np.empty((X.shape[0], self.dim))
        sincos_rows(X @ self.V.T, self._scale, Z)
        return Z


def embed(maps: list[RandomFourierFeatures], X: np.ndarray) -> np.ndarray:
    """The features of the rows of X under each map, stacked: B × (number of maps) × 2D."""
    return np.stack([f.transform(X) for f in maps], axis=1)


def _orthogonal_rows(g: np.random.Generator, D: int, d: int) -> np.ndarray:
    """S Q stacked over ⌈D/d⌉ independent blocks (first D rows): Q Haar-orthogonal, S_ii ~ χ_d. Each block draws its
    Gaussian d×d matrix for Q, then the one for S; an eighth of the blocks (at most ``BLOCKS``) are drawn and factored
    together (stacked QR): the same numbers as block by block (tested), which took learner.D=40000000 minutes in
    Python's loop. Their temporaries (the Gaussians, Q, R, S·Q) take 5/8 of the rows' memory at most, so the peak
    stays below the block-by-block draw's stacking copy (twice the rows), which the learners' footprints allow for."""
    total = -(-D // d)
    V = np.empty((total * d, d))
    step = max(1, min(BLOCKS, total // 8))
    for a in range(0, total, step):
        k = min(step, total - a)
        G = g.standard_normal((k, 2, d, d))  # block by block: Q's matrix, then S's
        Q, R = np.linalg.qr(G[:, 0])
        Q *= np.sign(np.diagonal(R, axis1=1, axis2=2))[:, None, :]  # Haar measure (Mezzadri 2007)
        Q *= np.linalg.norm(G[:, 1], axis=2)[:, :, None]  # S: χ_d
        V[a * d : (a + k) * d] = Q.reshape(k * d, d)
    return V[:D]
