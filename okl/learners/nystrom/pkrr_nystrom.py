"""PKRR-Nyström: online kernel ridge regression projected on a KORS dictionary (pkawv_jezequel2019
§4, "PKRR with Nyström"): the forecaster of ``pkawv_nystrom`` without the f(x_t)² term,

    ŷ_t = f_t(x_t),   f_t ∈ argmin_{f ∈ H_t} Σ_{s<t} (y_s − f(x_s))² + λ||f||².

Example: On a KORS dictionary, close to the exact online KRR at a fraction of its cost:

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> y_hat = LEARNERS.get("pkrr_nystrom")(2, sigma=0.5, lam=1.0, seed=0).predict_learn_block(X, y)
>>> exact = LEARNERS.get("online_krr")(2, sigma=0.5, lam=1.0).predict_learn_block(X, y)
>>> mse(y_hat), mse(exact)
(0.0237, 0.024)
"""

from __future__ import annotations

from okl.learners.base import register
from okl.learners.nystrom.pkawv_nystrom import PKAWVNystrom


@register("pkrr_nystrom")
class PKRRNystrom(PKAWVNystrom):
    """Online ridge on the span of a KORS dictionary."""

    awv = False
