"""Play the runs that artefacts are missing through the normal runner: one pool for all of them.

Runs that are done (complete, or timed out under the same budget) are reused, not played. A :class:`Pool`
takes runs at any time (an artefact's replays join once its runs are done) and starts the longest expected
first, so that no long run is left to the end while the other workers idle. With ``jobs > 1`` the runs go
to that many worker processes (each composes and plans its run again from the overrides, as ``okl-run``
would, with one BLAS thread); ``fresh`` gives every run a process of its own (the benchmarks); ``jobs = 1``
without ``fresh`` plays them in this process. A run that fails is reported in one line and the others go
on; Ctrl-C stops everything after the runs in progress have saved their rounds.
"""

from __future__ import annotations

import heapq
import multiprocessing
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field

from okl import runner
from okl.reproduce.sweep import Run, compose_config
from okl.store import FINISHED


@dataclass(frozen=True)
class Played:
    run: Run
    status: str  # the runner's status, or "failed" for a run that raised
    line: str  # the runner's summary, or the error

    @property
    def failed(self) -> bool:
        return self.status not in FINISHED


def missing(runs: list[Run]) -> list[Run]:
    return [r for r in runs if not runner.finished(r.plan)]


@dataclass(order=True)
class _Queued:
    priority: float  # minus the expected seconds: the longest first
    order: int
    run: Run = field(compare=False)
    tag: object = field(compare=False)


class Pool:
    """Runs played ``jobs`` at a time, longest expected first; :meth:`results` yields each as it finishes and
    takes the runs submitted meanwhile. ``busy_s`` sums the runs' wall times, so :attr:`utilisation` is the
    share of the workers' time spent playing."""

    def __init__(self, jobs: int = 1, fresh: bool = False, say=print) -> None:
        self.jobs, self.say = jobs, say
        self._queue: list[_Queued] = []
        self._running: dict[Future, _Queued] = {}
        self._executor = None
        if jobs > 1 or fresh:
            context = multiprocessing.get_context("spawn")
            self._executor = ProcessPoolExecutor(jobs, mp_context=context, max_tasks_per_child=1 if fresh else None)
        self.submitted = self.finished = 0
        self.busy_s = 0.0
        self._start = time.perf_counter()

    def submit(self, run: Run, tag: object, seconds: float) -> None:
        """Queue ``run`` (``seconds``: its expected cost); ``tag`` comes back with its result."""
        heapq.heappush(self._queue, _Queued(-seconds, self.submitted, run, tag))
        self.submitted += 1

    def results(self) -> Iterator[tuple[object, Played]]:
        """(tag, what happened) for each run, in completion order, until none is queued or playing."""
        try:
            while self._queue or self._running:
                if self._executor is None:  # the run's line starts before it plays: a long run shows which it is
                    queued = heapq.heappop(self._queue)
                    self.say(self._name(queued.run), end=" ", flush=True)
                    start = time.perf_counter()
                    played = Played(queued.run, *_execute(queued.run.plan))
                    yield queued.tag, self._done(played, time.perf_counter() - start)
                    continue
                while self._queue and len(self._running) < self.jobs:
                    queued = heapq.heappop(self._queue)
                    self._running[self._executor.submit(_in_child, queued.run.overrides)] = queued
                done, _ = wait(self._running, return_when=FIRST_COMPLETED)
                for future in done:
                    queued = self._running.pop(future)
                    status, line, seconds = future.result()
                    self.say(self._name(queued.run), end=" ")
                    yield queued.tag, self._done(Played(queued.run, status, line), seconds)
        except KeyboardInterrupt:
            self.close(cancel=True)
            raise

    def _name(self, run: Run) -> str:
        return f"  [{self.finished + 1}/{self.submitted}] {run.label}:"

    def _done(self, played: Played, seconds: float) -> Played:
        self.finished += 1
        self.busy_s += seconds
        self.say(played.line, flush=True)
        if played.status == "interrupted":
            raise KeyboardInterrupt
        return played

    @property
    def utilisation(self) -> float:
        """Summed run time over the workers' time since the pool started (1: no worker ever idle)."""
        return self.busy_s / max(self.jobs * (time.perf_counter() - self._start), 1e-9)

    def close(self, cancel: bool = False) -> None:
        if self._executor is not None:
            self._executor.shutdown(cancel_futures=cancel)


def _in_child(overrides: tuple[str, ...]) -> tuple[str, str, float]:
    from okl import config

    start = time.perf_counter()
    try:
        plan = config.plan(compose_config(list(overrides)))
    except Exception as exc:  # noqa: BLE001 - reported in one line; the other runs go on
        return "failed", one_line(exc), time.perf_counter() - start
    return (*_execute(plan), time.perf_counter() - start)


def _execute(plan) -> tuple[str, str]:
    try:
        outcome = runner.execute(plan, progress=False)
    except Exception as exc:  # noqa: BLE001 - a crash in one run (a numba error, ...) must not stop the others
        return "failed", one_line(exc)
    if outcome.status == "failed":
        return "failed", f"{outcome.error} ({outcome.rounds:,} rounds saved in {outcome.run.path})"
    loss = "" if outcome.average_loss is None else f", average {plan.loss[0]} loss {outcome.average_loss:.6g}"
    reused = " (reused)" if outcome.skipped else ""
    return outcome.status, f"{outcome.status}{reused}, {outcome.rounds:,} rounds in {outcome.learner_s:.2f} s{loss}"


def one_line(exc: BaseException) -> str:
    """An error in one line: an OklError's message as it is, anything else with its type's name."""
    from okl.errors import OklError

    text = (str(exc).strip().splitlines() or [""])[0]
    return text if isinstance(exc, OklError) else f"{type(exc).__name__}: {text}"
