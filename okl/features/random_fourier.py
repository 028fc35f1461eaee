"""Random Fourier features of the Gaussian kernel (Rahimi & Recht; raker_shen2018 eq. (9)).

    z_V(x) = D^{-1/2} [sin(Vx); cos(Vx)] ∈ R^{2D},    V ∈ R^{D×d},  V_ij ~ N(0, σ^{-2}) i.i.d.,

so that z_V(x)ᵀz_V(x') = (1/D) Σ_i cos(v_iᵀ(x - x')) is an unbiased estimate of
k(x, x') = exp(-||x - x'||²/(2σ²)) with variance O(1/D). D counts frequencies; the map has 2D
coordinates (all sines, then all cosines; the order is immaterial). ||z_V(x)||² = 1 exactly.
"""

from __future__ import annotations

import numpy as np

from okl.features.sincos import sincos_rows
from okl.seeding import rng


class RandomFourierFeatures:
    """The map z_V with D frequencies drawn from the stream ``rng(seed, "random_fourier")``."""

    def __init__(self, d: int, D: int, sigma: float, seed: int) -> None:
        self.d, self.D, self.sigma = d, D, sigma
        self.V = rng(seed, "random_fourier").standard_normal((D, d)) / sigma
        self.dim = 2 * D
        self._scale = 1.0 / np.sqrt(D)
        self.transform(np.zeros((1, d)))  # compile (or load) the kernel now, not inside timed rounds

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Features of the rows of X (n×d) as an n×2D C-ordered array."""
        X = np.atleast_2d(X)
        Z = np.empty((X.shape[0], self.dim))
        sincos_rows(X @ self.V.T, self._scale, Z)
        return Z
