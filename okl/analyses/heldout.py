"""Held-out scoring: at evenly spaced checkpoints of the play, the learner's average evaluation loss on
the dataset's test set (pure ``predict_many`` queries; the learner does not change). It runs inside the
play, since it needs the learner as it is at round t; its rows go to ``test.parquet``."""

from __future__ import annotations

import time

import numpy as np

from okl.config import Plan

ROWS = 4096  # held-out rows scored per query


def checkpoints(plan: Plan) -> list[int]:
    """``checkpoints`` evenly spaced rounds (the last one included) when the dataset holds out a test set."""
    k = plan.run.checkpoints
    if k == 0 or plan.dataset.adaptive or plan.dataset.test_set() is None:
        return []
    return sorted({max(1, round(plan.rounds * (i + 1) / k)) for i in range(k)})


def score(plan: Plan, t: int) -> dict[str, float]:
    """The learner's average evaluation loss on the held-out set after round t, with its model size."""
    t0 = time.perf_counter()
    X, y = plan.dataset.test_set()
    loss_fn = plan.loss[1]
    losses = [loss_fn(y[a : a + ROWS], plan.learner.predict_many(X[a : a + ROWS])) for a in range(0, len(y), ROWS)]
    return {
        "t": t,
        "test_loss": float(np.concatenate(losses).mean()),
        "model_size": plan.learner.model_size,
        "seconds": time.perf_counter() - t0,
    }
