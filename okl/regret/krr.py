"""``comparator=krr``: the best kernel-ridge function in hindsight on the whole stream, exact.

    f = argmin_f Σ_{s<=n} (f(x_s) − y_s)² + λ||f||²,   f = Σ_s α_s k(x_s, ·),   α = (K + λI)⁻¹ y,

so f(x_s) − y_s = (Kα − y)_s = −λα_s and ℓ_s = λ²α_s²; λ||f||² = λ αᵀKα = λ(αᵀy − λ||α||²).
The regret against f is the left side of Proposition 1 (pkawv_jezequel2019). One Cholesky factor
of K + λI: O(n³/3) flops and 8n² bytes (n = 20,000: 3.2 GB, about a minute on one core); longer
streams use ``nystrom_krr``.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve

from okl.linalg.kernel_cholesky import kernel_cholesky
from okl.regret.base import Comparator, register, ridge_penalty


@register("krr")
class KRR(Comparator):
    """Kernel ridge regression on the whole stream."""

    def losses(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
        lam = self.params.lam
        L = kernel_cholesky(X, self.kernel, lam, "comparator=krr (use comparator=nystrom_krr)")
        alpha = cho_solve((L, True), y, check_finite=False)
        return (lam * alpha) ** 2, ridge_penalty(alpha, y, lam)
