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
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from importlib.resources import files

import yaml

from okl import runner
from okl.errors import OklError
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
    tags: list = field(compare=False)  # every submitter of this run (artefacts can share a run)
    started: float = field(default=0.0, compare=False)  # when a worker took it (perf_counter)
    shown: float = field(default=0.0, compare=False)  # when its last progress line was printed


PROGRESS_EVERY = 10.0  # seconds between the progress lines of a run that plays in a worker
WORKER_DIED = "its worker process died (out of memory, or killed): run the command again to resume it"


class Pool:
    """Runs played ``jobs`` at a time, longest expected first; :meth:`results` yields each as it finishes and
    takes the runs submitted meanwhile. A run submitted again while it waits or plays (two artefacts sharing
    it) is played once and reported to each submitter. Every run is planned afresh where it plays, so no
    trained learner outlives its run. ``busy_s`` sums the time each run took in its worker (planning it, playing
    it, its post-run analyses), so :attr:`utilisation` is the share of the workers' time spent on runs."""

    def __init__(self, jobs: int = 1, fresh: bool = False, say=print, launcher: str = "local", folder=None) -> None:
        self.jobs, self.fresh, self.say = jobs, fresh, say
        self.launcher, self.folder = launcher, folder
        self._queue: list[_Queued] = []
        self._pending: dict[str, _Queued] = {}  # run directory -> its entry, queued or playing
        self._running: dict[Future, _Queued] = {}
        self._executor = self._new_executor()
        self.submitted = self.finished = 0
        self.busy_s = 0.0
        self._start = time.perf_counter()

    def _new_executor(self) -> ProcessPoolExecutor | _Submitit | None:
        if self.launcher != "local":
            return _Submitit(self.jobs, self.launcher, self.folder)
        if self.jobs == 1 and not self.fresh:
            return None
        context = multiprocessing.get_context("spawn")
        return ProcessPoolExecutor(self.jobs, mp_context=context, max_tasks_per_child=1 if self.fresh else None)

    def submit(self, run: Run, tag: object, seconds: float) -> None:
        """Queue ``run`` (``seconds``: its expected cost); ``tag`` comes back with its result."""
        key = str(run.plan.run_dir().path)
        if key in self._pending:
            self._pending[key].tags.append(tag)
            return
        self._pending[key] = queued = _Queued(-seconds, self.submitted, run, [tag])
        heapq.heappush(self._queue, queued)
        self.submitted += 1

    def results(self) -> Iterator[tuple[object, Played]]:
        """(tag, what happened) for each run and submitter, in completion order, until none is queued or playing."""
        try:
            while self._queue or self._running:
                if self._executor is None:  # the run's line starts before it plays: a long run shows which it is
                    queued = heapq.heappop(self._queue)
                    self.say(self._name(queued.run), end=" ", flush=True)
                    yield from self._done(queued, *_in_child(queued.run.overrides))
                    continue
                self._fill()
                done, _ = wait(self._running, timeout=PROGRESS_EVERY / 2, return_when=FIRST_COMPLETED)
                self._progress()
                results = []
                for future in done:
                    queued = self._running.pop(future)
                    try:
                        results.append((queued, *future.result()))
                    except BrokenProcessPool:  # every run of the broken pool is lost with it: none is to blame
                        yield from self._broken(queued)
                        break
                    except Exception as exc:  # noqa: BLE001 - reported in one line; the other runs go on
                        results.append((queued, "failed", one_line(exc), 0.0))
                self._fill()  # the freed workers start their next runs before the caller draws what just ended
                for queued, status, line, seconds in results:
                    self.say(self._name(queued.run), end=" ")
                    yield from self._done(queued, status, line, seconds)
        except KeyboardInterrupt:
            self.close(cancel=True)
            raise

    def _fill(self) -> None:
        while self._executor is not None and self._queue and len(self._running) < self.jobs:
            queued = heapq.heappop(self._queue)
            queued.started = queued.shown = time.perf_counter()
            self._running[self._executor.submit(_in_child, queued.run.overrides)] = queued

    def _progress(self) -> None:
        """A line every ``PROGRESS_EVERY`` seconds for each run playing in a worker: how far its manifest says
        it got (updated as each part closes) and how long it has played."""
        now = time.perf_counter()
        for future, queued in self._running.items():
            if future.done() or now - queued.shown < PROGRESS_EVERY:
                continue
            queued.shown = now
            manifest = queued.run.plan.run_dir().manifest()
            rounds = manifest.rounds if manifest else 0  # "complete" before the future says done
            planned = queued.run.plan.rounds
            self.say(
                f"  … {queued.run.label}: {rounds:,} of {planned:,} rounds saved ({100 * rounds / planned:.0f}%), "
                f"{now - queued.started:.0f} s",
                flush=True,
            )

    def _broken(self, first: _Queued) -> Iterator[tuple[object, Played]]:
        lost = [first, *self._running.values()]
        self._running.clear()
        self._executor.shutdown(cancel_futures=True)
        self._executor = self._new_executor()
        for queued in lost:
            self.say(self._name(queued.run), end=" ")
            yield from self._done(queued, "failed", WORKER_DIED, 0.0)

    def _name(self, run: Run) -> str:
        return f"  [{self.finished + 1}/{self.submitted}] {run.label}:"

    def _done(self, queued: _Queued, status: str, line: str, seconds: float) -> Iterator[tuple[object, Played]]:
        self.finished += 1
        self.busy_s += seconds
        self.say(line, flush=True)
        del self._pending[str(queued.run.plan.run_dir().path)]
        if status == "interrupted":
            raise KeyboardInterrupt
        for tag in queued.tags:
            yield tag, Played(queued.run, status, line)

    @property
    def elapsed(self) -> float:
        """Seconds since the pool started."""
        return time.perf_counter() - self._start

    @property
    def utilisation(self) -> float:
        """Summed run time over the workers' time since the pool started (1: no worker ever idle)."""
        return self.busy_s / max(self.jobs * self.elapsed, 1e-9)

    def close(self, cancel: bool = False) -> None:
        if self._executor is not None:
            self._executor.shutdown(cancel_futures=cancel)


class _Submitit(ThreadPoolExecutor):
    """Runs as submitit jobs, ``jobs`` at a time: on this machine's processes (``submitit_local``) or SLURM
    (``slurm``), with the settings of ``conf/hydra/launcher/slurm.yaml`` (``okl-run -m hydra/launcher=slurm``'s).
    Each of the ``jobs`` threads submits one job and waits for it, so the pool sees ordinary futures."""

    def __init__(self, jobs: int, launcher: str, folder) -> None:
        super().__init__(jobs)
        try:
            import submitit
        except ImportError:
            raise OklError(f"--launcher {launcher} needs submitit: pip install 'okl[slurm]'") from None
        self.executor = submitit.AutoExecutor(
            folder=folder, cluster="local" if launcher == "submitit_local" else "slurm"
        )
        self.executor.update_parameters(**_slurm_settings(launcher == "slurm"))

    def submit(self, fn, /, *args, **kwargs) -> Future:
        return super().submit(lambda: self.executor.submit(fn, *args, **kwargs).result())


def _slurm_settings(slurm: bool) -> dict:
    """submitit's parameters from the SLURM launcher's config (the SLURM-only ones on a cluster only)."""
    node = yaml.safe_load((files("okl.conf") / "hydra" / "launcher" / "slurm.yaml").read_text())
    settings = {k: node[k] for k in ("timeout_min", "cpus_per_task", "tasks_per_node", "mem_gb")}
    if slurm:
        settings |= {f"slurm_{k}": node[k] for k in ("partition", "setup") if node.get(k) is not None}
    return settings


def _in_child(overrides: tuple[str, ...]) -> tuple[str, str, float]:
    """Plan the run from its overrides (as okl-run would) and play it: (status, line, seconds)."""
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
        return "failed", outcome.failure()
    if outcome.skipped and outcome.status == "running":  # another okl process plays it now
        return "failed", f"skipped: {outcome.error}; run the command again once it has finished"
    loss = "" if outcome.average_loss is None else f", average {plan.loss[0]} loss {outcome.average_loss:.6g}"
    reused = " (reused)" if outcome.skipped else ""
    return outcome.status, f"{outcome.status}{reused}, {outcome.played} in {outcome.learner_s:.2f} s{loss}"


def one_line(exc: BaseException) -> str:
    """An error in one line: an OklError's message as it is, anything else with its type's name."""
    from okl.errors import OklError

    text = (str(exc).strip().splitlines() or [""])[0]
    return text if isinstance(exc, OklError) else f"{type(exc).__name__}: {text}"
