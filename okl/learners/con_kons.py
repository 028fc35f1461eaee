"""CON-KONS (pros_n_kons_calandriello2017 §5, "Algorithms"): PROS-N-KONS without resets.

When the dictionary grows, the last ω (a function of H_{j-1} ⊂ H_j) is mapped into the new embedding,
ω̃_t = Σ_j⁻¹U_jᵀΦ_jᵀ w̃_{t-1}, and played as is at that round (no gradient step, no projection); Ã
is mapped the same way, with α on the new direction. In the nested Cholesky basis of
:mod:`okl.dictionary.nystrom` this appends a zero coordinate to ω and a row and column (0, …, 0, α)
to Ã.
"""

from __future__ import annotations

from okl.learners.base import register
from okl.learners.pros_n_kons import ProsNKons


@register("con_kons")
class ConKons(ProsNKons):
    """PROS-N-KONS that carries its state over dictionary changes."""

    carry_over = True
