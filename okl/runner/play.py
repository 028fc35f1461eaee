"""The play loop: feed the stream to the learner block by block and hand every round to the writer.

For each chunk of the stream (:meth:`okl.config.Plan.stream`, checked finite) the loop plays blocks of ``block`` rounds
(``block = 1`` calls ``predict_one``/``learn_one`` round by round; a learner may ask for longer blocks
through ``Learner.next_block``; a block also ends at a held-out checkpoint), computes the evaluation
loss of the dataset's task and appends the rounds to the writer. Block boundaries depend on the rounds
only (never on time), so a resumed run replays exactly the blocks of an uninterrupted one.

An adaptive environment (:class:`okl.datasets.base.Environment`) chooses each round after querying
the learner's pure ``predict_many``; its rounds are played one at a time, its inputs recorded as
columns ``x_*`` and its time counted in ``environment_ns``.

With ``block = 1`` the loop plays up to ``ROUNDS`` rounds one by one (or ``ROUNDS_NS`` of learner time), then
scores and records them together: the loss, the columns and the writer's work for a single round cost about
100 µs, as much as the rounds of a fast learner, and evicted its matrices from the core's cache between its
rounds. Such a group ends where a block would (a checkpoint, the part's row limit, the chunk's end), so the
numbers, parts and held-out scores are those of recording each round alone.

Timing: ``elapsed_ns`` is the learner's cumulative time (``time.perf_counter_ns`` around learner
calls; data generation, loss and I/O excluded). Inside a block the block's time is spread evenly
over its rounds; rounds played one by one are timed each.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
from tqdm import tqdm

from okl.analyses import heldout
from okl.config import Plan
from okl.errors import NumericalError
from okl.learners.base import Learner
from okl.store import RoundWriter

ADVICE = "check its step size or regularisation (learner.*)"  # after a non-finite prediction (the report drops it)
ROUNDS = 256  # block = 1: rounds played one by one before they are scored and recorded together
ROUNDS_NS = 100_000_000  # ... or fewer, once they took this much learner time (a slow learner's timeout stays prompt)


class Timeout(Exception):
    """The learner's time exceeded ``timeout_s`` (checked after each block)."""


class Stop(Exception):
    """Raised by a run's observer (:func:`play`'s ``observe``) to end it there: a tuning study pruning a trial."""


@dataclass
class Position:
    """How far a run got: rounds played, cumulative loss and times. Saved with each snapshot."""

    t: int = 0
    cum_loss: float = 0.0
    learner_ns: int = 0
    environment_ns: int = 0  # time an adaptive environment took to choose its rounds
    checkpoints: list[int] = field(default_factory=list)  # rounds after which the held-out set is scored

    def next_checkpoint(self) -> int | None:
        return next((c for c in self.checkpoints if c > self.t), None)

    @property
    def average(self) -> float | None:
        return self.cum_loss / self.t if self.t else None


def prepare(plan: Plan, position: Position) -> None:
    """Show the stream to a ``beforehand`` learner first; its time counts as learner time."""
    learner = plan.learner
    if learner.beforehand is None:
        return
    for X, y in plan.stream(plan.rounds):
        t0 = time.perf_counter_ns()
        learner.prepare(X, y if learner.beforehand == "stream" else None)
        position.learner_ns += time.perf_counter_ns() - t0
    t0 = time.perf_counter_ns()
    learner.prepared()
    position.learner_ns += time.perf_counter_ns() - t0


def _blocks(plan: Plan, position: Position) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The blocks to play from ``position.t`` on: the configured (or learner-asked) sizes cut from each
    chunk's start, or one round at a time from an adaptive environment, which chooses each round after
    the learner has learned the previous one."""
    learner, block = plan.learner, plan.run.block
    if plan.dataset.adaptive:
        yield from plan.dataset.play(learner.predict_many, plan.rounds)
        return
    for X, y in plan.stream(plan.rounds, skip=position.t):
        start = 0
        while start < len(y):
            size = block if block == 1 else learner.next_block(position.t, block)
            checkpoint = position.next_checkpoint()
            if checkpoint is not None:  # end the block there
                size = min(size, checkpoint - position.t)
            yield X[start : start + size], y[start : start + size]
            start += size


def play(
    plan: Plan,
    writer: RoundWriter,
    position: Position,
    bar: tqdm,
    snapshot: Callable | None,
    observe: Callable[[int, float], None] | None = None,
) -> None:
    """Play from ``position`` to the end of the stream (or raise :class:`Timeout`); a part that is due closes
    after a block, with ``snapshot`` (the state to resume from) when given. ``observe(t, average loss)`` is
    called after each block (it may raise :class:`Stop`)."""
    learner, block, loss_fn = plan.learner, plan.run.block, plan.loss[1]
    timeout_ns = None if plan.run.timeout_s is None else int(plan.run.timeout_s * 1e9)
    blocks = _blocks(plan, position)
    while True:
        played = (
            _one_by_one(learner, blocks, position, _group(writer, position))
            if block == 1
            else _block(learner, blocks, position)
        )
        if played is None:
            return
        Xb, yb, y_hat, spent, diagnostics = played
        m = len(yb)
        loss = loss_fn(yb, y_hat)  # (numpy's warnings are off while a run plays: the loop checks what is not finite)
        # a prediction too: a binary task's zero-one loss of a nan is 0 (nan * y <= 0 is False), a correct round
        finite = np.isfinite(loss) & np.isfinite(y_hat)
        for values in diagnostics.values():  # and the learner's own numbers (BSGD's risk), written beside them
            if values.dtype.kind == "f":
                finite &= np.isfinite(values)
        keep = m if finite.all() else int(np.argmin(finite))  # rounds before the first bad one
        cum = np.add.accumulate(np.concatenate(([position.cum_loss], loss[:keep])))[1:]
        columns = {
            "t": np.arange(position.t + 1, position.t + keep + 1, dtype=np.int64),
            "y": yb[:keep],
            "y_hat": y_hat[:keep],
            "loss": loss[:keep],
            "cum_loss": cum,
            "elapsed_ns": position.learner_ns + spent[:keep],
            **{k: v[:keep] for k, v in diagnostics.items()},
        }
        if plan.dataset.adaptive:  # the chosen sequence, for dataset=replay and for scoring
            columns.update({f"x_{i}": Xb[:keep, i] for i in range(Xb.shape[1])})
        writer.append(columns)
        position.t += keep
        position.cum_loss = float(cum[-1]) if keep else position.cum_loss
        position.learner_ns += int(spent[keep - 1]) if keep else 0
        if keep < m:
            raise NumericalError(_non_finite(learner.name, position.t + 1, y_hat[keep], loss[keep], diagnostics, keep))
        if position.t in position.checkpoints:
            writer.checkpoint(**heldout.score(plan, position.t))
        if writer.due() and position.t < plan.rounds:  # the last part closes as the run finishes (lifecycle)
            writer.close_part(snapshot)
        bar.update(m)
        bar.set_postfix(avg_loss=f"{position.average:.4g}", refresh=False)
        if timeout_ns is not None and position.learner_ns > timeout_ns:
            raise Timeout
        if observe is not None:
            observe(position.t, position.average)


def _non_finite(name: str, t: int, y_hat: float, loss: float, diagnostics: dict[str, np.ndarray], i: int) -> str:
    """The error of round ``t``, the first whose loss, prediction or a diagnostic (row ``i``) is not finite."""
    if not np.isfinite(loss) or not np.isfinite(y_hat):
        what = "prediction" if np.isfinite(loss) else "loss"
        return f"{name} predicted {y_hat:.3g} at round {t:,}, a non-finite {what}: {ADVICE}"
    key = next(k for k, v in diagnostics.items() if v.dtype.kind == "f" and not np.isfinite(v[i]))
    return f"{name} predicted {y_hat:.3g} at round {t:,} with a non-finite {key} ({diagnostics[key][i]:.3g}): {ADVICE}"


Played = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]  # X, y, ŷ, ns, diagnostics


def _group(writer: RoundWriter, position: Position) -> int:
    """Rounds the next group of rounds played one by one may take: at most ``ROUNDS``, and none past the next
    checkpoint or past the row that makes the part due."""
    checkpoint = position.next_checkpoint()
    return min(ROUNDS, writer.room(), ROUNDS if checkpoint is None else checkpoint - position.t)


def _block(learner: Learner, blocks: Iterator, position: Position) -> Played | None:
    """The next block in one ``predict_learn_block`` call; its time spread evenly over its rounds."""
    Xb, yb = _next(blocks, position)
    if Xb is None:
        return None
    t0 = time.perf_counter_ns()
    y_hat = learner.predict_learn_block(Xb, yb)
    dt = time.perf_counter_ns() - t0
    m = len(yb)
    return Xb, yb, y_hat, dt * np.arange(1, m + 1, dtype=np.int64) // m, learner.diagnostics(m)


def _one_by_one(learner: Learner, blocks: Iterator, position: Position, limit: int) -> Played | None:
    """Up to ``limit`` rounds of one input each (``block = 1``: ``predict_one``, then ``learn_one``), each taken
    from ``blocks`` after the previous is learned (an adaptive environment chooses it then), each timed; fewer
    once they took ``ROUNDS_NS``, or after a non-finite prediction (the run stops there)."""
    X, y, y_hat, spent, diagnostics = [], [], [], [], []
    total = 0
    while len(y) < limit and total < ROUNDS_NS:
        Xb, yb = _next(blocks, position)
        if Xb is None:
            break
        t0 = time.perf_counter_ns()
        prediction = learner.predict_one(Xb[0])
        learner.learn_one(Xb[0], yb[0])
        total += time.perf_counter_ns() - t0
        X.append(Xb)
        y.append(yb)
        y_hat.append(prediction)
        spent.append(total)
        diagnostics.append(learner.diagnostics(1))
        if not np.isfinite(prediction):
            break
    if not y:
        return None
    columns = {k: np.concatenate([d[k] for d in diagnostics]) for k in diagnostics[0]}
    return np.concatenate(X), np.concatenate(y), np.array(y_hat), np.array(spent, dtype=np.int64), columns


def _next(blocks: Iterator, position: Position) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The next block of the stream (None, None at its end); an adaptive environment's time is counted."""
    t_env = time.perf_counter_ns()
    Xb, yb = next(blocks, (None, None))
    position.environment_ns += time.perf_counter_ns() - t_env
    return Xb, yb
