"""What the tables report of a run, read back through :mod:`okl.results`.

Each metric is a function of one finished run; the table shows its mean ± std over the seeds of a
(dataset, arm) row. ``loss`` is the average loss of the whole run: the square loss on regression streams,
the online error in % on classification streams (as the papers print it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from okl import config, results
from okl.reproduce.checks import ROUNDWISE
from okl.reproduce.sweep import Run, compose_config

TAIL = 0.05  # polk_koppel2019 Table 2: "averaged over the final 5% of processed training examples"


class Finished:
    """A run of an artefact with its row of ``okl.results.runs`` and its rounds, read once."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.root = run.plan.sink.root

    @cached_property
    def row(self) -> dict:
        (row,) = results.runs(self.root, run=self.run.plan.run_id).to_dict("records")
        return row

    @cached_property
    def plan(self):
        """The run's plan, composed afresh from its overrides (its stream and an untrained learner)."""
        return config.plan(compose_config(list(self.run.overrides)))

    @cached_property
    def learner(self):
        """The run's learner as the run left it, played again from the run's plan over its stream (the play is
        deterministic, and a block split gives the per-round loop's numbers): what Figure 3 draws."""
        plan = self.plan
        for X, y in plan.stream(plan.rounds):
            plan.learner.predict_learn_block(X, y)
        return plan.learner

    @cached_property
    def rounds(self) -> pd.DataFrame:
        return results.load(self.root, run=self.run.plan.run_id).sort_values("t", ignore_index=True)

    @cached_property
    def heldout(self) -> pd.DataFrame | None:
        return results.heldout(self.root, run=self.run.plan.run_id)

    @property
    def percent(self) -> float:
        """100 on classification streams (errors in %), 1 on regression."""
        return 1.0 if self.run.plan.dataset.task == "regression" else 100.0

    def tail(self) -> pd.DataFrame:
        return self.rounds.iloc[-max(1, int(round(TAIL * len(self.rounds)))) :]

    # the results table's cell (okl.reproduce.checks.Cell)
    @property
    def seed(self) -> int:
        return self.run.seed

    @property
    def played(self) -> int:
        return int(self.row["rounds"])

    def value(self, metric: str) -> float | None:
        return METRICS[metric].value(self)

    def series(self, column: str, t: int) -> np.ndarray:
        """``column`` of rounds 1..t, read with column and row push-down."""
        df = results.load(self.root, run=self.run.plan.run_id, columns=["t", column], where=results.field("t") <= t)
        return df.sort_values("t")[column].to_numpy(dtype=float)

    def at(self, metric: str, t: int) -> float | None:
        """A metric after round ``t``: the average loss (in % on classification), the learner time, the
        regret or the model size there, read from that one stored round."""
        column = ROUNDWISE[metric]
        df = results.load(self.root, run=self.run.plan.run_id, columns=["t", column], where=results.field("t") == t)
        if df.empty or df[column].isna().all():
            return None
        x = float(df[column].iloc[0])
        return self.percent * x / t if metric == "loss" else x / 1e9 if metric == "learner_s" else x


@dataclass(frozen=True)
class Metric:
    header: str
    value: Callable[[Finished], float | None]
    digits: int = 4  # significant digits shown


def _last(column: str) -> Callable[[Finished], float | None]:
    def value(f: Finished) -> float | None:
        if column not in f.rounds or f.rounds[column].isna().all():
            return None
        return float(f.rounds[column].dropna().iloc[-1])

    return value


def _tail_of(f: Finished, column: str, less: str | None = None) -> float | None:
    """The mean of ``column`` (less the column ``less``) over the final 5% of the rounds; None for a run without
    them (a column an older revision did not record) or without a finite value there."""
    if any(c not in f.rounds for c in filter(None, (column, less))):
        return None
    tail = f.tail()
    values = (tail[column] - (tail[less] if less else 0.0)).dropna()
    return float(values.mean()) if len(values) else None


def _heldout(f: Finished) -> float | None:
    return None if f.heldout is None else 100.0 * float(f.heldout.test_loss.iloc[-1])


def _row(column: str) -> Callable[[Finished], float | None]:
    """A number of the run's row in :func:`okl.results.runs`, which derives them (one definition for okl-results,
    this report and okl-bench)."""

    def value(f: Finished) -> float | None:
        x = f.row.get(column)
        return None if x is None or x != x else float(x)  # absent, or NaN

    return value


def _dataset(method: str) -> Callable[[Finished], float | None]:
    """A number of the run's draw of its dataset, in % (multidist's Bayes error and exact batch kernel fit),
    or None for a dataset without it."""

    def value(f: Finished) -> float | None:
        compute = getattr(f.run.plan.dataset, method, None)
        return None if compute is None else 100.0 * float(np.atleast_1d(compute())[0])

    return value


def _dictionary_to_modes(f: Finished) -> float | None:
    """How close a dictionary learner's points lie to the mixture's modes, against the stream's own points: the
    mean over its dictionary points of the distance to the nearest mean μ_{c,j}, over the same mean for the stream's
    inputs (below 1: closer to the modes than the data). polk_koppel2019 Figure 3: the points concentrate at the
    modes. (Against the 1.25σ at which a point lies from its own mode, the dictionary of the overlapping §5.2 draw
    "held" at 0.91σ where the stream's points lie at 0.93σ from their nearest mode.)"""
    dataset, learner = f.run.plan.dataset, f.learner
    points = getattr(getattr(learner, "dictionary", None), "X", None)
    if not hasattr(dataset, "means") or points is None or not len(points):
        return None
    means = dataset.means.reshape(-1, 2)
    stream = np.concatenate([X for X, _ in f.plan.stream(f.plan.rounds)])
    return float(_nearest(points, means).mean() / _nearest(stream, means).mean())


def _nearest(points: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Each point's distance to its nearest mean."""
    return np.sqrt(((points[:, None, :] - means[None]) ** 2).sum(axis=-1)).min(axis=1)


METRICS: dict[str, Metric] = {
    "loss": Metric("loss (square; % error)", lambda f: f.percent * f.row["average_loss"]),
    # |y_t − ŷ_t| = √(square loss); on ±1 labels √ of the 0-1 loss is itself: river's MAE, or the % error
    "abs_error": Metric("MAE; % error", lambda f: f.percent * float(np.sqrt(f.rounds.loss).mean())),
    "rounds": Metric("rounds played", _row("rounds"), digits=7),
    "learner_s": Metric("learner s", _row("learner_s"), digits=3),
    "us_per_round": Metric("µs/round", _row("us_per_round"), digits=3),
    "wall_s": Metric("wall s", _row("wall_s"), digits=3),
    "peak_rss_mb": Metric("peak RSS (MB)", _row("peak_rss_mb"), digits=4),
    "model_size": Metric("#SV / features", _row("model_size"), digits=4),
    "regret": Metric("regret at n", _last("regret")),
    "risk_tail": Metric("risk (final 5%)", lambda f: _tail_of(f, "risk")),
    # the risk's two terms: ℓ(f(x_t), y_t) and the penalty (λ/2)Σ_c||f_c||² (fsgd, polk, bsgd record it)
    "risk_loss_tail": Metric("risk less penalty (final 5%)", lambda f: _tail_of(f, "risk", less="penalty")),
    "penalty_tail": Metric("penalty (λ/2)Σ‖f_c‖² (final 5%)", lambda f: _tail_of(f, "penalty")),
    "error_tail": Metric("error % (final 5%)", lambda f: 100.0 * float(f.tail().loss.mean())),
    "heldout": Metric("held-out error % (end)", _heldout),
    "bayes_error": Metric("Bayes error % (its draw)", _dataset("bayes_error_mc")),
    "batch_error": Metric("batch kernel fit error %", _dataset("batch_error")),
    "dictionary_to_modes": Metric("dictionary / stream: distance to nearest mode", _dictionary_to_modes, digits=3),
}


@dataclass(frozen=True)
class Row:
    """The runs of one (dataset, arm) of an artefact, one per seed, in seed order."""

    dataset: str
    arm: str
    runs: tuple[Finished, ...]

    @property
    def first(self) -> Finished:
        return self.runs[0]

    def summary(self, metric: str) -> tuple[float, float] | None:
        return results.mean_std([METRICS[metric].value(f) for f in self.runs])


def rows(finished: list[Finished]) -> list[Row]:
    """Group runs by (dataset, arm), keeping the order in which they first appear."""
    groups: dict[tuple[str, str], list[Finished]] = {}
    for f in finished:
        groups.setdefault((f.run.dataset, f.run.arm), []).append(f)
    return [Row(d, a, tuple(sorted(fs, key=lambda f: f.run.seed))) for (d, a), fs in groups.items()]
