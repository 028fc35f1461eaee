"""AdaMKL: OMKL instances on dyadic intervals, the adaptive baseline of raker_shen2018 §4 ("its
adaptive version that we term AdaMKL"): the interval ensemble of :mod:`okl.learners.ensembles.intervals` with
OMKL (:mod:`okl.learners.multikernel.omkl`, exact Gaussian kernels with support vectors) as the instance A_I,
at rate η^(I) = min{η, η₀/√|I|}. An instance keeps the support vectors of its interval only (at most
``budget`` per kernel), so the state is O(log t) instances of at most t vectors in all.

Example: OMKL instances on dyadic intervals:

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> learner = LEARNERS.get("adamkl")(2, sigma2=(0.1, 1.0), budget=50)
>>> mse(learner.predict_learn_block(X, y)), mse(0 * y)
(0.213, 0.5214)
"""

from __future__ import annotations

from dataclasses import dataclass

from okl.learners.base import register
from okl.learners.ensembles.intervals import AdaptiveParams, IntervalEnsemble
from okl.learners.multikernel.omkl import OMKL, OMKLParams
from okl.learners.multikernel.raker import KERNELS


@dataclass(frozen=True)
class AdaMKLParams(AdaptiveParams, OMKLParams):
    """sigma2, lam, budget as OMKL; eta: the cap of η^(I) (the paper's 1/2); eta0: η₀."""


@register("adamkl")
class AdaMKL(IntervalEnsemble):
    """OMKL on the dyadic intervals, weighted by eq. (23)."""

    Params = AdaMKLParams
    instead = KERNELS
    Instance = OMKL
