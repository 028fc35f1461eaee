"""PKRR-Taylor: online kernel ridge regression projected on the Taylor basis (pkawv_jezequel2019 §4).

The "ridge variant" of PKAWV used on the i.i.d. real datasets of Figures 2 and 4: the same features
and state, without the f(x_t)² term of eq. (4), i.e. ŷ_t = φ(x_t)ᵀ A_{t-1}⁻¹ b_{t-1}.
"""

from __future__ import annotations

from okl.learners.base import register
from okl.learners.pkawv_taylor import PKAWVTaylor


@register("pkrr_taylor")
class PKRRTaylor(PKAWVTaylor):
    """Online ridge on the Taylor features of eq. (6)."""

    awv = False
