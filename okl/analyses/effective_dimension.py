"""The effective dimension d_eff(γ) of the rounds a KORS-dictionary learner played, with the kernel and γ
of its dictionary (:mod:`okl.dictionary.effective_dimension`): the quantity its dictionary size and
regret grow with. Exact when the n×n kernel matrix fits (n <= 20,000 and half the available memory),
cached per stream, kernel and γ; otherwise the Nyström estimate on the learner's dictionary (a lower
bound, close for a KORS dictionary), which the entry's ``method`` says."""

from __future__ import annotations

import time
from typing import Any

from okl.analyses.base import Analysis
from okl.config import Plan
from okl.dictionary import effective_dimension as deff
from okl.errors import DataError
from okl.learners import Learner
from okl.registry import identity
from okl.store import Cache, RunDir, digest
from okl.system import GIB

KEY = "effective_dimension"


class EffectiveDimension(Analysis):
    key = KEY
    needs_learner = True  # its dictionary, for the Nyström estimate beyond the exact computation's reach

    def wanted(self, plan: Plan) -> bool:
        return "kors" in plan.learner.report()

    def current(self, entry: dict[str, Any] | None, plan: Plan, rounds: int) -> bool:
        gamma = plan.learner.report()["kors"]["gamma"]
        return entry is not None and entry.get("rounds") == rounds and entry.get("gamma") == gamma

    def describe(self, plan: Plan, rounds: int) -> str:
        if deff.can_be_exact(rounds):
            size = 8 * rounds * rounds / GIB
            return (
                f"effective dimension, exact on {rounds:,} rounds ({size:,.1f} GiB; Ctrl-C stops it, the run stays "
                "complete; analyses=false skips it)"
            )
        return f"effective dimension, Nyström estimate on the dictionary ({rounds:,} rounds: too many for the exact)"

    def compute(self, plan: Plan, run: RunDir, learner: Learner, rounds: int) -> dict[str, Any]:
        kors, t0 = learner.report()["kors"], time.perf_counter()
        kernel, Z = learner.dictionary()
        if not deff.can_be_exact(rounds):
            if len(Z) == 0:
                raise DataError(
                    f"the Nyström estimate of d_eff needs the learner's final dictionary, which run {str(run.path)!r} "
                    f"no longer keeps: rerun it with sink.overwrite=true"
                )
            value, size = deff.nystrom((X for X, _ in plan.stream(rounds)), kernel, kors["gamma"], Z)
            return {
                "gamma": kors["gamma"],
                "rounds": rounds,
                "method": "nystrom",
                "value": value,
                "dictionary": size,
                "seconds": time.perf_counter() - t0,
            }
        cache = Cache(run.root, KEY)
        key = digest(
            {
                "dataset": {"name": plan.dataset.name, **identity(plan.dataset.params)},
                "seed": plan.run.seed,
                "rounds": rounds,
                "kernel": [kernel.kind, kernel.sigma],
                "gamma": kors["gamma"],
            }
        )
        entry = cache.get_json(key)
        if entry is None:
            value = deff.exact(plan.inputs(rounds), kernel, kors["gamma"])
            entry = {
                "gamma": kors["gamma"],
                "rounds": rounds,
                "method": "exact",
                "value": value,
                "seconds": time.perf_counter() - t0,
            }
            cache.put_json(key, entry)
        return entry
