"""One-step-ahead predictions of a block from the Cholesky factor of its innovation covariance.

For a block of B rounds, let m be the predictions made from the state before the block (Φ A⁻¹ b for
features, Wᵀz for kernels) and C the lower Cholesky factor of the block's innovation covariance
(S = I + Φ A⁻¹ Φᵀ, or K_BB + λI - WᵀW for kernels). The within-block ridge predictions are

    u = C⁻¹ (y - m),      ŷ_t = m_t + Σ_{s<t} C_ts u_s,   u_t = (y_t - ŷ_t) / C_tt,

the Cholesky form of "y - L⁻¹(y - m)" with L = C diag(c)⁻¹ unit lower. Writing ŷ_t with the strictly
lower part of C (not as y_t - c_t u_t, which is the same number in exact arithmetic) keeps the
prediction at round t a function of y_1..y_{t-1} bit for bit: forward substitution computes u_s from
y_1..y_s only.
"""

from __future__ import annotations

import numpy as np

from okl.jit import njit


def one_step_ahead(C: np.ndarray, m: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (ŷ, u) for a block; C lower triangular (B×B), m and y of length B."""
    pred, u = np.empty(len(y)), np.empty(len(y))
    forward(C, m, y, pred, u)
    return pred, u


@njit(nogil=True)
def forward(C, m, y, pred, u):
    # One loop instead of trsv + trmv: at B ≈ 48 the O(B²) work is smaller than the cost of the
    # BLAS wrappers' calls and copies (13 µs per block). Row t reads u_1..u_{t-1} only.
    for t in range(len(y)):
        s = 0.0
        for j in range(t):
            s += C[t, j] * u[j]
        pred[t] = m[t] + s
        u[t] = (y[t] - pred[t]) / C[t, t]


def compile_now() -> None:
    """Compile (or load) the kernel for the Fortran-ordered factors LAPACK returns, before timing."""
    one_step_ahead(np.asfortranarray(np.eye(2)), np.zeros(2), np.zeros(2))
