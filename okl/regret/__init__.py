"""Regret against a comparator in hindsight (pkawv_jezequel2019 eq. (1)):

    regret_t = Σ_{s<=t} (ŷ_s − y_s)² − Σ_{s<=t} (f(x_s) − y_s)²,

with f chosen by ``comparator=`` (one module each: ``krr``, ``nystrom_krr``, ``oracle_prefix``, and
``krr_segments``, a time-varying f for the dynamic regret of raker_shen2018 eq. (26)).
Comparators are computed once per stream and cached (:mod:`okl.analyses.regret`); ``okl-regret``
scores runs after the fact."""

from okl.registry import import_all
from okl.regret.base import COMPARATORS, Comparator, register

import_all(__name__, __path__)

__all__ = ["COMPARATORS", "Comparator", "register"]
