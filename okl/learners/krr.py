"""Exact online kernel ridge regression (KRR), the i.i.d. counterpart of Kernel-AWV
(pkawv_jezequel2019 §2: eq. (3) without the f(x_t)² term; "Kernel Ridge Regression" in §4).

    ŷ_t = k_tᵀ (K_{t-1} + λI)⁻¹ y_{1:t-1}.
"""

from __future__ import annotations

from okl.learners.base import register
from okl.learners.kernel_awv import KernelAWV


@register("krr")
class KRR(KernelAWV):
    """Exact online kernel ridge regression."""

    awv = False
