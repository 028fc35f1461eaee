"""One-step-ahead predictions of a block from the Cholesky factor of its innovation covariance.

For a block of B rounds, let m be the predictions made from the state before the block (Φ A⁻¹ b for
features, Wᵀz for kernels) and C the lower Cholesky factor of the block's innovation covariance
(S = I + Φ A⁻¹ Φᵀ, or K_BB + λI - WᵀW for kernels). The within-block ridge predictions are

    u = C⁻¹ (y - m),      ŷ_t = m_t + Σ_{s<t} C_ts u_s,

the Cholesky form of "y - L⁻¹(y - m)" with L = C diag(c)⁻¹ unit lower. Writing ŷ_t with the strictly
lower part of C (not as y_t - c_t u_t, which is the same number in exact arithmetic) keeps the
prediction at round t a function of y_1..y_{t-1} bit for bit: forward substitution computes u_s from
y_1..y_s only.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import blas


def one_step_ahead(C: np.ndarray, m: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (ŷ, u) for a block; C lower triangular (B×B), m and y of length B."""
    u = blas.dtrsv(C, y - m, lower=1)
    pred = m.copy()
    if len(y) > 1:
        pred[1:] += blas.dtrmv(C[1:, :-1], u[:-1], lower=1)  # row t uses u_1..u_{t-1}
    return pred, u
