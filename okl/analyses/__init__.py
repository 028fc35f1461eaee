"""Analyses of a run: held-out scoring during the play (:mod:`~okl.analyses.heldout`), and the post-run
analyses under one protocol (:mod:`~okl.analyses.base`): regret against a comparator
(:mod:`~okl.analyses.regret`) and the effective dimension of a KORS learner's stream
(:mod:`~okl.analyses.effective_dimension`). A new post-run analysis is one :class:`Analysis` subclass
added to ``POST_RUN``."""

from __future__ import annotations

from okl.analyses.base import Analysis, in_child
from okl.analyses.effective_dimension import EffectiveDimension
from okl.analyses.regret import Regret
from okl.config import Plan
from okl.learners import Learner
from okl.store import Manifest, RunDir

POST_RUN: tuple[Analysis, ...] = (EffectiveDimension(), Regret())


def pending(plan: Plan, manifest: Manifest) -> list[Analysis]:
    """The post-run analyses the plan wants whose entry the manifest lacks (or holds for other settings)."""
    rounds = manifest.rounds
    return [
        a for a in POST_RUN if rounds and a.wanted(plan) and not a.current(manifest.analyses.get(a.key), plan, rounds)
    ]


def keep_learner(plan: Plan) -> bool:
    """Whether a finished run of this plan keeps its learner (a final snapshot) for a post-run analysis that reads
    it (regret does not: it plays the comparator)."""
    return any(a.needs_learner and a.wanted(plan) for a in POST_RUN)


def run_pending(plan: Plan, run: RunDir, learner: Learner, progress: bool) -> Manifest:
    """Compute and record the pending analyses one by one (each recorded as soon as it is done); returns
    the manifest."""
    manifest = run.manifest() or Manifest()
    rounds = manifest.rounds
    for analysis in pending(plan, manifest):
        label = analysis.describe(plan, rounds)
        try:
            entry = in_child(lambda a=analysis: a.compute(plan, run, learner, rounds), label, progress)
        except KeyboardInterrupt as exc:
            exc.analysis = label.split(" (")[0]
            raise
        manifest = run.record(**{analysis.key: entry})
    return manifest


__all__ = ["POST_RUN", "Analysis", "keep_learner", "pending", "run_pending"]
