"""AdaMKL: OMKL instances on dyadic intervals, the adaptive baseline of raker_shen2018 §4 ("its
adaptive version that we term AdaMKL"): the interval ensemble of :mod:`okl.learners.intervals` with
OMKL (:mod:`okl.learners.omkl`, exact Gaussian kernels with support vectors) as the instance A_I,
at rate η^(I) = min{η, η₀/√|I|}. An instance keeps the support vectors of its interval only (at most
``budget`` per kernel), so the state is O(log t) instances of at most t vectors in all.
"""

from __future__ import annotations

from dataclasses import dataclass

from okl.learners.base import register
from okl.learners.intervals import AdaptiveParams, IntervalEnsemble
from okl.learners.omkl import OMKL, OMKLParams


@dataclass(frozen=True)
class AdaMKLParams(AdaptiveParams, OMKLParams):
    """sigma2, lam, budget as OMKL; eta: the cap of η^(I) (the paper's 1/2); eta0: η₀."""


@register("adamkl")
class AdaMKL(IntervalEnsemble):
    """OMKL on the dyadic intervals, weighted by eq. (23)."""

    Params = AdaMKLParams
    Instance = OMKL
