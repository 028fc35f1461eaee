"""B-KONS (pros_n_kons_calandriello2017 §5): PROS-N-KONS whose dictionary stops growing at
J_max = ``budget`` points (100 in the paper); it then keeps learning in the last embedding."""

from __future__ import annotations

from dataclasses import dataclass

from okl.learners.base import register
from okl.learners.pros_n_kons import ProsNKons, ProsNKonsParams


@dataclass(frozen=True)
class BKonsParams(ProsNKonsParams):
    """PROS-N-KONS's keys with budget J_max = 100 by default."""

    budget: int | None = 100


@register("b_kons")
class BKons(ProsNKons):
    """PROS-N-KONS with a dictionary budget."""

    Params = BKonsParams
