"""CON-KONS (pros_n_kons_calandriello2017 §5, "Algorithms"): PROS-N-KONS without resets.

When the dictionary grows, the last ω (a function of H_{j-1} ⊂ H_j) is mapped into the new embedding,
ω̃_t = Σ_j⁻¹U_jᵀΦ_jᵀ w̃_{t-1}, and played as is at that round (no gradient step, no projection); Ã
is mapped the same way, with α on the new direction. In the nested Cholesky basis of
:mod:`okl.dictionary.nystrom` this appends a zero coordinate to ω and a row and column (0, …, 0, α)
to Ã.

Example: PROS-N-KONS without restarts: the same dictionary (same coins), no fresh start:

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> keys = dict(sigma=0.5, alpha=1.0, gamma=0.5, seed=0)
>>> con = LEARNERS.get("con_kons")(2, **keys); pros = LEARNERS.get("pros_n_kons")(2, **keys)
>>> mse(con.predict_learn_block(X, y)), mse(pros.predict_learn_block(X, y))
(0.0412, 0.3273)
>>> con.model_size == pros.model_size
True
"""

from __future__ import annotations

from okl.learners.base import register
from okl.learners.newton.pros_n_kons import ProsNKons


@register("con_kons")
class ConKons(ProsNKons):
    """PROS-N-KONS that carries its state over dictionary changes."""

    carry_over = True
