"""PKRR-Nyström: online kernel ridge regression projected on a KORS dictionary (pkawv_jezequel2019
§4, "PKRR with Nyström"): the forecaster of ``pkawv_nystrom`` without the f(x_t)² term,

    ŷ_t = f_t(x_t),   f_t ∈ argmin_{f ∈ H_t} Σ_{s<t} (y_s − f(x_s))² + λ||f||².
"""

from __future__ import annotations

from okl.learners.base import register
from okl.learners.pkawv_nystrom import PKAWVNystrom


@register("pkrr_nystrom")
class PKRRNystrom(PKAWVNystrom):
    """Online ridge on the span of a KORS dictionary."""

    awv = False
