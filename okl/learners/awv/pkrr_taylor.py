"""PKRR-Taylor: online kernel ridge regression projected on the Taylor basis (pkawv_jezequel2019 §4).

The "ridge variant" of PKAWV used on the i.i.d. real datasets of Figures 2 and 4: the same features
and state, without the f(x_t)² term of eq. (4), i.e. ŷ_t = φ(x_t)ᵀ A_{t-1}⁻¹ b_{t-1}.

Example: The ridge twin of ``pkawv_taylor``: the same features, without the f(x_t)² term:

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> taylor = dict(M=4, sigma=1.0, lam=1.0)
>>> ridge = LEARNERS.get("pkrr_taylor")(2, **taylor).predict_learn_block(X, y)
>>> awv = LEARNERS.get("pkawv_taylor")(2, **taylor).predict_learn_block(X, y)
>>> bool(np.all(np.abs(awv) <= np.abs(ridge) + 1e-12)), mse(ridge)
(True, 0.0833)
"""

from __future__ import annotations

from okl.learners.awv.pkawv_taylor import PKAWVTaylor
from okl.learners.base import register


@register("pkrr_taylor")
class PKRRTaylor(PKAWVTaylor):
    """Online ridge on the Taylor features of eq. (6)."""

    awv = False
