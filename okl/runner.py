"""The streaming runner: feeds a dataset to a learner block by block and records every round.

For each chunk of the stream the runner checks the values are finite, plays blocks of ``block``
rounds (``block = 1`` calls ``predict_one``/``learn_one`` round by round; a learner may ask for longer
blocks through ``Learner.next_block``), computes the evaluation
loss of the dataset's task and appends the rounds to the sink. It stops at ``n`` rounds, at the end
of the stream, when the learner's cumulative time exceeds ``timeout_s`` (checked after each block,
so a run may exceed it by one block), on Ctrl-C or SIGTERM, or on an error; in every case the rounds
finished so far are written and ``run.json`` records the status (``complete``, ``timeout``,
``interrupted``, ``failed``).

An adaptive environment (:class:`okl.datasets.base.Environment`) chooses each round after querying
the learner's pure ``predict_many``; its rounds are played one at a time, its inputs recorded as
columns ``x_*`` and its time reported as ``environment_s``. With a comparator (``comparator=``), a
complete or timed-out run then gets its ``regret`` column filled (:mod:`okl.regret.score`); a run
already complete is only scored.

Timing: ``elapsed_ns`` is the learner's cumulative time (``time.perf_counter_ns`` around learner
calls; data generation, loss and I/O excluded). Inside a block the block's time is spread evenly
over its rounds. BLAS runs on one thread (threadpoolctl) unless ``OKL_BLAS_THREADS`` says otherwise.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits
from tqdm import tqdm

from okl.config import Plan
from okl.dictionary import effective_dimension as deff
from okl.errors import DataError, Interrupted, NumericalError, OklError, ResourceError
from okl.losses import EVALUATION
from okl.registry import identity
from okl.regret.score import matches, score_run
from okl.sink import LOCK, ROUNDS, ParquetSink, lock_owner, read_manifest
from okl.system import git_state, peak_rss, process_alive, tune_allocator, versions

TEST_ROWS = 4096  # held-out rows scored per query


@dataclass
class Outcome:
    """What a run did: its status, rounds, average loss and where its files are."""

    status: str
    rounds: int
    average_loss: float | None
    run_dir: Path
    learner_s: float = 0.0
    error: str | None = None
    skipped: bool = False
    signum: int = signal.SIGINT  # the signal that interrupted the run
    regret: dict | None = None  # the manifest's regret entry, when a comparator scored the run

    def summary(self, plan: Plan) -> str:
        what = f"{plan.learner.name} on {plan.dataset.name} (seed {plan.run.seed})"
        if self.skipped and self.status == "running":
            return f"{what}: skipped, {self.error} in {self.run_dir}"
        regret = "" if self.regret is None else f", regret {self.regret['regret']:.6g} ({self.regret['comparator']})"
        if self.skipped:
            return f"{what}: already {self.status}{regret} in {self.run_dir} (sink.overwrite=true to redo it)"
        loss = "n/a" if self.average_loss is None else f"{self.average_loss:.6g}"
        name = EVALUATION[plan.dataset.task][0]
        return (
            f"{what}: {self.status}, {self.rounds:,} rounds in {self.learner_s:.2f} s, "
            f"average {name} loss {loss}{regret} -> {self.run_dir / ROUNDS}"
        )


class _Timeout(Exception):
    pass


def execute(plan: Plan, progress: bool) -> Outcome:
    """Run ``plan`` to completion (or timeout / interruption / failure) and return its outcome."""
    run_dir = plan.run_dir()
    try:
        return _claimed(plan, run_dir, progress)
    except OSError as exc:  # a results root that is a file, read-only, on a full disk
        raise ResourceError(_unwritable(exc, run_dir)) from None


def _unwritable(exc: OSError, run_dir: Path) -> str:
    where = exc.filename or run_dir
    return (
        f"cannot write {where}: {exc.strerror or exc}; set OKL_RESULTS (or sink.root) to a writable folder "
        f"with free space"
    )


def _claimed(plan: Plan, run_dir: Path, progress: bool) -> Outcome:
    with _claim(run_dir) as owner:
        previous = read_manifest(run_dir)
        if owner is not None:
            return Outcome("running", 0, None, run_dir, skipped=True, error=f"process {owner} is running it")
        if previous and _done(previous, plan) and not plan.sink.overwrite:
            outcome = Outcome(previous["status"], previous["rounds"], previous["average_loss"], run_dir, skipped=True)
            if plan.comparator is not None:
                scored = matches(previous.get("regret"), plan.comparator, outcome.rounds)
                # the inputs: recorded, or rebuilt from the run's config
                outcome.regret = previous["regret"] if scored else _score(plan, run_dir)
            return outcome
        return _execute(plan, run_dir, progress)


def _done(previous: dict, plan: Plan) -> bool:
    """A run is not redone if it completed, or timed out under at least the budget asked for now."""
    if previous.get("status") == "complete":
        return True
    if previous.get("status") != "timeout" or plan.run.timeout_s is None or previous.get("timeout_s") is None:
        return False
    return previous["timeout_s"] >= plan.run.timeout_s


def _execute(plan: Plan, run_dir: Path, progress: bool) -> Outcome:
    tune_allocator()
    loss_name, loss_fn = EVALUATION[plan.dataset.task]
    sink = ParquetSink(run_dir, plan.sink.part_rows)
    sink.start(
        {
            **plan.partition,
            "task": plan.dataset.task,
            "dataset_files": plan.dataset.provenance,
            "loss": loss_name,
            "planned_rounds": plan.rounds,
            "block": plan.run.block,
            "timeout_s": plan.run.timeout_s,
            "config": plan.config,
            "argv": sys.argv,
            "versions": versions(),
            "git": git_state(),
            "started_at": _now(),
        }
    )
    state = _Progress(checkpoints=_checkpoints(plan))
    status, error, signum = "complete", None, signal.SIGINT
    wall = time.perf_counter()
    bar = tqdm(total=plan.rounds, unit="round", unit_scale=True, disable=not progress, file=sys.stderr)
    blas_threads = int(os.environ.get("OKL_BLAS_THREADS", "1"))
    try:
        with threadpool_limits(limits=blas_threads), _sigterm_as_interrupt():
            sink.manifest["blas_threads"] = max((p["num_threads"] for p in threadpool_info()), default=None)
            _prepare(plan, state)
            try:
                _play(plan, loss_fn, sink, state, bar)
            except _Timeout:
                status = "timeout"
            if plan.learner.kors is not None and state.t:  # of the rounds played, complete or timed out
                sink.manifest["effective_dimension"] = _effective_dimension(plan, state.t)
    except KeyboardInterrupt as exc:
        status, signum = "interrupted", getattr(exc, "signum", signal.SIGINT)
    except OklError as exc:
        status, error = "failed", str(exc)
    except OSError as exc:  # a part could not be written (a full disk): the rounds before it are kept
        status, error = "failed", _unwritable(exc, run_dir)
    except Exception as exc:
        status, error = "failed", f"{type(exc).__name__}: {exc}"
        raise
    finally:
        bar.close()
        fields = {"error": error, "wall_s": time.perf_counter() - wall, "finished_at": _now()}
        if plan.dataset.adaptive:
            fields["environment_s"] = state.environment_ns / 1e9
        with _signals_deferred():
            try:
                sink.finish(status=status, **fields, peak_rss_bytes=peak_rss())
            except KeyboardInterrupt:  # tripped just before the mask: finish again, it is idempotent
                status = "interrupted" if status == "complete" else status
                sink.finish(status=status, **fields, peak_rss_bytes=peak_rss())
            except OSError as exc:  # the last rows could not be written (a full disk): say so in run.json
                status, error = "failed", _unwritable(exc, run_dir)
                sink.abandon(status=status, **{**fields, "error": error})
    m = sink.manifest
    outcome = Outcome(status, m["rounds"], m["average_loss"], run_dir, m["learner_s"], error, signum=signum)
    if plan.comparator is not None and status in ("complete", "timeout") and m["rounds"]:
        outcome.regret = _score(plan, run_dir, np.concatenate([X for _, X, _ in _rounds(plan, m["rounds"])]))
    return outcome


def _score(plan: Plan, run_dir: Path, X: np.ndarray | None = None) -> dict:
    """Fill the run's regret column against the plan's comparator (cached per stream)."""
    try:
        return score_run(run_dir, plan.comparator, X=X, root=Path(plan.sink.root))
    except OklError as exc:
        raise type(exc)(f"regret not computed: {exc} (the run is saved in {run_dir})") from None


@dataclass
class _Progress:
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


def _prepare(plan: Plan, state: _Progress) -> None:
    """Show the stream to a ``beforehand`` learner first; its time counts as learner time."""
    learner = plan.learner
    if learner.beforehand is None:
        return
    for _, X, y in _rounds(plan, plan.rounds):
        t0 = time.perf_counter_ns()
        learner.prepare(X, y if learner.beforehand == "stream" else None)
        state.learner_ns += time.perf_counter_ns() - t0
    t0 = time.perf_counter_ns()
    learner.prepared()
    state.learner_ns += time.perf_counter_ns() - t0


def _blocks(plan: Plan, state: _Progress) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The blocks to play: the configured (or learner-asked) sizes, or one round at a time from an
    adaptive environment, which chooses each round after the learner has learned the previous one."""
    learner, block = plan.learner, plan.run.block
    if plan.dataset.adaptive:
        yield from plan.dataset.play(learner.predict_many, plan.rounds)
        return
    for _, X, y in _rounds(plan, plan.rounds):
        start = 0
        while start < len(y):
            size = block if block == 1 else learner.next_block(state.t, block)
            checkpoint = state.next_checkpoint()
            if checkpoint is not None:  # end the block there
                size = min(size, checkpoint - state.t)
            yield X[start : start + size], y[start : start + size]
            start += size


def _play(plan: Plan, loss_fn, sink: ParquetSink, state: _Progress, bar: tqdm) -> None:
    learner, block, timeout_ns = plan.learner, plan.run.block, plan.run.timeout_s
    timeout_ns = None if timeout_ns is None else int(timeout_ns * 1e9)
    blocks = _blocks(plan, state)
    while True:
        t_env = time.perf_counter_ns()
        Xb, yb = next(blocks, (None, None))
        state.environment_ns += time.perf_counter_ns() - t_env
        if Xb is None:
            return
        m = len(yb)
        t0 = time.perf_counter_ns()
        if block == 1:
            y_hat = np.array([learner.predict_one(Xb[0])])
            learner.learn_one(Xb[0], yb[0])
        else:
            y_hat = learner.predict_learn_block(Xb, yb)
        dt = time.perf_counter_ns() - t0
        with np.errstate(over="ignore", invalid="ignore"):
            loss = loss_fn(yb, y_hat)
        finite = np.isfinite(loss)
        keep = m if finite.all() else int(np.argmin(finite))  # rounds before the first bad one
        cum = np.add.accumulate(np.concatenate(([state.cum_loss], loss[:keep])))[1:]
        columns = {
            "t": np.arange(state.t + 1, state.t + keep + 1, dtype=np.int64),
            "y": yb[:keep],
            "y_hat": y_hat[:keep],
            "loss": loss[:keep],
            "cum_loss": cum,
            "elapsed_ns": state.learner_ns + dt * np.arange(1, keep + 1, dtype=np.int64) // m,
            **{k: v[:keep] for k, v in learner.diagnostics(m).items()},
        }
        if plan.dataset.adaptive:  # the chosen sequence, for dataset=replay and for scoring
            columns.update({f"x_{i}": Xb[:keep, i] for i in range(Xb.shape[1])})
        sink.append(columns)
        state.t += keep
        state.cum_loss = float(cum[-1]) if keep else state.cum_loss
        state.learner_ns += dt * keep // m
        if keep < m:
            raise NumericalError(
                f"{learner.name} predicted {y_hat[keep]:.3g} at round {state.t + 1:,}, a non-finite "
                f"loss: check its step size or regularisation (learner.*)"
            )
        if state.t in state.checkpoints:
            _score_test(plan, loss_fn, sink, state.t)
        bar.update(m)
        bar.set_postfix(avg_loss=f"{state.average:.4g}", refresh=False)
        if timeout_ns is not None and state.learner_ns > timeout_ns:
            raise _Timeout


def _checkpoints(plan: Plan) -> list[int]:
    """``checkpoints`` evenly spaced rounds (the last one included) when the dataset holds out a test set."""
    k = plan.run.checkpoints
    if k == 0 or plan.dataset.adaptive or plan.dataset.test_set() is None:
        return []
    return sorted({max(1, round(plan.rounds * (i + 1) / k)) for i in range(k)})


def _score_test(plan: Plan, loss_fn, sink: ParquetSink, t: int) -> None:
    """The learner's average evaluation loss on the held-out set after round t (pure queries)."""
    t0 = time.perf_counter()
    X, y = plan.dataset.test_set()
    losses = [
        loss_fn(y[a : a + TEST_ROWS], plan.learner.predict_many(X[a : a + TEST_ROWS]))
        for a in range(0, len(y), TEST_ROWS)
    ]
    loss = float(np.concatenate(losses).mean())
    sink.checkpoint(t=t, test_loss=loss, model_size=plan.learner.model_size, seconds=time.perf_counter() - t0)


def _effective_dimension(plan: Plan, n: int) -> dict:
    """d_eff(γ) of the n inputs played, with the kernel and γ of the learner's KORS dictionary. Exact
    values depend on the stream only, so they are cached under the results root and shared by every
    learner run on the same stream, kernel and γ."""
    kors, t0 = plan.learner.kors, time.perf_counter()
    key = {
        "dataset": {"name": plan.dataset.name, **identity(plan.dataset.params)},
        "seed": plan.run.seed,
        "rounds": n,
        "kernel": [kors.kernel.kind, kors.kernel.sigma],
        "gamma": kors.gamma,
    }
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    cache = Path(plan.sink.root) / ".effective_dimension" / f"{digest}.json"
    exact = deff.can_be_exact(n)
    if exact and cache.exists():
        return json.loads(cache.read_text())

    inputs = (X for _, X, _ in _rounds(plan, n))
    out = {"gamma": kors.gamma, "rounds": n, "method": "exact" if exact else "nystrom"}
    if exact:
        out["value"] = deff.exact(np.concatenate(list(inputs)), kors.kernel, kors.gamma)
    else:
        out["value"], out["dictionary"] = deff.nystrom(inputs, kors.kernel, kors.gamma, kors.X)
    out["seconds"] = time.perf_counter() - t0
    if exact:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(out))
    return out


def _rounds(plan: Plan, n: int) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """The first n rounds of the stream, chunk by chunk: (offset, X, y), contiguous float64, checked finite."""
    seen = 0
    for X, y in plan.dataset.head(n):
        X, y = np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64)
        _check_finite(plan.dataset.name, X, y, seen)
        yield seen, X, y
        seen += len(y)


def _check_finite(name: str, X: np.ndarray, y: np.ndarray, offset: int) -> None:
    for what, values in (("x", X), ("y", y)):
        finite = np.isfinite(values)
        if not finite.all():
            row = offset + 1 + int(np.argmin(finite.reshape(len(values), -1).all(axis=1)))
            raise DataError(
                f"dataset {name!r} has a non-finite {what} at round {row:,}: clean the data or "
                f"choose a missing-value policy for this dataset"
            )


@contextmanager
def _claim(run_dir: Path) -> Iterator[int | None]:
    """Hold ``run_dir/.lock`` for this process; yield None, or the pid of a live process holding it.

    Identical runs of one sweep (a key that a learner ignores, e.g. ``M`` for ``krr``) or two users
    starting the same run would otherwise write the same directory at once. A lock left by a dead
    process is taken over.
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    lock = run_dir / LOCK
    while True:
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            owner = lock_owner(run_dir)
            if process_alive(owner):
                yield owner
                return
            lock.unlink(missing_ok=True)
            continue
        with os.fdopen(fd, "w") as fh:
            fh.write(str(os.getpid()))
        try:
            yield None
        finally:
            lock.unlink(missing_ok=True)
        return


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM (e.g. a scheduler ending the job) like Ctrl-C; the exit status says which it was."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise Interrupted(signum)

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """Block SIGINT/SIGTERM while the last part and the manifest are written."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    mask = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, mask)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, mask)
