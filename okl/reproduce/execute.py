"""Run what an artefact is missing through the normal runner, one line of progress per run.

Runs that are done (complete, or timed out under the same budget) are reused, not played. With
``jobs > 1`` the runs go to that many worker processes (each composes and plans its run again from the
overrides, as ``okl-run`` would, with one BLAS thread); ``fresh`` gives every run a process of its own,
so that its peak RSS is its own (the benchmarks). A run that fails is reported in one line and the others
go on; Ctrl-C stops everything after the runs in progress have saved their rounds.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass

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


def play(runs: list[Run], jobs: int = 1, fresh: bool = False, say=print) -> list[Played]:
    """Play ``runs``; returns what happened to each, in completion order."""
    done = []
    if jobs == 1 and not fresh:  # the run's line starts before it plays: a long run shows which it is
        for i, run in enumerate(runs, 1):
            say(_name(run, i, len(runs)), end=" ", flush=True)
            done.append(_report(_in_process(run), say))
        return done
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(jobs, mp_context=context, max_tasks_per_child=1 if fresh else None) as pool:
        futures = {pool.submit(_in_child, run.overrides): run for run in runs}
        try:
            for i, future in enumerate(as_completed(futures), 1):
                status, line = future.result()
                say(_name(futures[future], i, len(runs)), end=" ")
                done.append(_report(Played(futures[future], status, line), say))
        except KeyboardInterrupt:
            pool.shutdown(cancel_futures=True)
            raise
    return done


def _name(run: Run, i: int, n: int) -> str:
    return f"  [{i}/{n}] {run.label}:"


def _report(played: Played, say) -> Played:
    say(played.line, flush=True)
    if played.status == "interrupted":
        raise KeyboardInterrupt
    return played


def _in_process(run: Run) -> Played:
    status, line = _execute(run.plan)
    return Played(run, status, line)


def _in_child(overrides: tuple[str, ...]) -> tuple[str, str]:
    from okl import config

    try:
        plan = config.plan(compose_config(list(overrides)))
    except Exception as exc:  # noqa: BLE001 - reported in one line; the other runs go on
        return "failed", one_line(exc)
    return _execute(plan)


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
