"""CON-KONS (pros_n_kons_calandriello2017 §5, "Algorithms"): PROS-N-KONS without resets.

When the dictionary grows, the last ω (a function of H_{j-1} ⊂ H_j) is mapped into the new embedding,
ω̃_t = Σ_j⁻¹U_jᵀΦ_jᵀ w̃_{t-1}, and played as is at that round (no gradient step, no projection); Ã
is mapped the same way, with α on the new direction. In the nested Cholesky basis of
:mod:`okl.dictionary.nystrom` this appends a zero coordinate to ω and a row and column (0, …, 0, α)
to Ã.

Choice (``carry``): the text maps Ã "by a similar update rule" and says no more. Mapped literally,
M Ã_{t−1} Mᵀ with M the inclusion of H_{j−1} in H_j, Ã has no curvature on the new direction: it is
singular there. ``carry: alpha`` (the default) gives the new direction ONS's initial Ã = α I;
``carry: mapped`` keeps the literal map and uses the pseudo-inverse (Ã⁻¹ = 0 on the new direction, the
only inverse defined), so ω never moves along a direction added after round 1's dictionary. Measured on
the tables (arm con_kons_mapped of pros_n_kons_table1 and _table2, deviation con_kons_carry).

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

from dataclasses import dataclass, field

from okl.learners.base import register
from okl.learners.newton.pros_n_kons import ProsNKons, ProsNKonsParams
from okl.validation import one_of


@dataclass(frozen=True)
class ConKonsParams(ProsNKonsParams):
    """PROS-N-KONS's keys, and carry: Ã on a new direction, ``alpha`` (α) or ``mapped`` (the literal map: none)."""

    carry: str = field(default="alpha", metadata={"added": True})  # in a run's identity only when set

    def __post_init__(self) -> None:
        super().__post_init__()
        one_of("carry", self.carry, ("alpha", "mapped"))


@register("con_kons")
class ConKons(ProsNKons):
    """PROS-N-KONS that carries its state over dictionary changes."""

    Params = ConKonsParams
    carry_over = True

    def _new_direction(self, alpha: float) -> float:
        return 1.0 / alpha if self.params.carry == "alpha" else 0.0
