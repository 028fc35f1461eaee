"""B-KONS (pros_n_kons_calandriello2017 §5): PROS-N-KONS whose dictionary stops growing at
J_max = ``budget`` points (100 in the paper); it then keeps learning in the last embedding.

Example: The dictionary stops growing at ``budget`` points:

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> learner = LEARNERS.get("b_kons")(2, sigma=0.3, alpha=1.0, gamma=0.5, budget=5, seed=0)
>>> y_hat = learner.predict_learn_block(X, y)
>>> learner.model_size, mse(y_hat)
(5, 0.3272)
"""

from __future__ import annotations

from dataclasses import dataclass

from okl.learners.base import register
from okl.learners.newton.pros_n_kons import ProsNKons, ProsNKonsParams


@dataclass(frozen=True)
class BKonsParams(ProsNKonsParams):
    """PROS-N-KONS's keys with budget J_max = 100 by default."""

    budget: int | None = 100


@register("b_kons")
class BKons(ProsNKons):
    """PROS-N-KONS with a dictionary budget."""

    Params = BKonsParams
