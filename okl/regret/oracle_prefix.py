"""``comparator=oracle_prefix``: pkawv_jezequel2019 Figure 3's oracle, refit at every t.

At each t the comparator is f_t, kernel ridge on rounds 1..t, evaluated on those rounds:

    regret_t = Σ_{s<=t} (ŷ_s − y_s)² − L_t,    L_t = Σ_{s<=t} (f_t(x_s) − y_s)² = λ² ||A_t⁻¹ y_{1:t}||²,

with A_t = K_t + λI (:mod:`okl.linalg.ridge_oracle`). All n values come from one factorisation:
with A_n = LLᵀ and M = L⁻¹ (lower triangular), the leading blocks satisfy A_t = L_t L_tᵀ and
M_t = L_t⁻¹, so A_t⁻¹y_{1:t} = M_tᵀ z_{1:t} with z = My, and

    ||A_t⁻¹ y_{1:t}||² = Σ_{k<=t} (Σ_{i=k..t} M_ik z_i)² = Σ_k C_tk²,   C = cumsum_rows(diag(z) M).

Cost: O(n³/3) for L and O(n³/3) for M (LAPACK, in place), then O(n²): 8n² bytes in all. The
per-round losses ℓ_t = L_t − L_{t−1} may be negative (the refit can fit old rounds better).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

from okl.errors import NumericalError
from okl.linalg.kernel_cholesky import kernel_cholesky
from okl.regret.base import Comparator, register, ridge_penalty


@register("oracle_prefix")
class OraclePrefix(Comparator):
    """Kernel ridge refit on each prefix of the stream."""

    def losses(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
        lam = self.params.lam
        L = kernel_cholesky(X, self.kernel, lam, "comparator=oracle_prefix (use comparator=nystrom_krr)")
        M, info = lapack.dtrtri(L, lower=1, overwrite_c=1)
        if info != 0:
            raise NumericalError(f"comparator=oracle_prefix: K + λI is singular (LAPACK info={info})")
        z = M @ y
        alpha = M.T @ z  # A_n⁻¹ y, for λ||f_n||²
        M *= z[:, None]
        np.cumsum(M, axis=0, out=M)
        cumulative = lam**2 * np.einsum("ij,ij->i", M, M)
        return np.diff(cumulative, prepend=0.0), ridge_penalty(alpha, y, lam)
