"""The Gaussian kernel k(x, x') = exp(-||x - x'||² / (2σ²)) used by every learner of the PKAWV paper."""

from __future__ import annotations

import numpy as np


def gaussian(X: np.ndarray, Y: np.ndarray, sigma: float) -> np.ndarray:
    """Kernel matrix K[i, j] = k(X[i], Y[j]) for rows X (n×d) and Y (m×d).

    Squared distances use ||x||² + ||y||² - 2 xᵀy (one matrix product), clipped at 0 against
    round-off; the diagonal of ``gaussian(X, X)`` is therefore 1 to within a few ulps.
    """
    sq = (X * X).sum(axis=1)[:, None] + (Y * Y).sum(axis=1)[None, :] - 2.0 * (X @ Y.T)
    np.maximum(sq, 0.0, out=sq)
    sq *= -0.5 / (sigma * sigma)
    return np.exp(sq, out=sq)
