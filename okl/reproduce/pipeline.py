"""Reproduce one artefact: check its data, run what is missing, read the runs, draw, tabulate.

:func:`reproduce` never raises for a problem of the artefact itself (absent data, a failing run, a figure
that cannot be drawn): it returns an :class:`Outcome` whose ``failures`` say what went wrong in one line
each, so that the caller attempts every artefact.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from okl.data.cache import on_disk
from okl.data.catalog import SPECS
from okl.data.sources import data_dir, mirror_root
from okl.reproduce import execute, figures, metrics, report, sweep
from okl.reproduce.catalog import Artefact
from okl.reproduce.metrics import Finished
from okl.store import FINISHED

SMOKE_ROUNDS = 200  # --smoke: rounds per run (the whole path in about a minute)


@dataclass(frozen=True)
class Options:
    run: bool = True  # run what is missing (False: draw from existing runs only)
    overrides: tuple[str, ...] = ()  # okl-run overrides added to every run (n=, seed=, ...)
    jobs: int = 1
    out: Path = Path("figures")
    report: Path = Path("REPRODUCTION.md")
    roots: tuple[str | None, ...] = (None,)  # results roots: each run is played once per root (None: sink.root)
    fresh: bool = False  # a process of its own per run (its peak RSS is its own)
    command: str = "okl-reproduce"  # the command named in the report

    @classmethod
    def make(cls, seeds: int | None, smoke: bool, **kwargs) -> Options:
        overrides = [f"n={SMOKE_ROUNDS}", "seed=0"] if smoke else []
        if seeds is not None and not smoke:
            overrides.append(f"seed=range(0,{seeds})")
        return cls(overrides=tuple(overrides), **kwargs)


@dataclass
class Outcome:
    artefact: Artefact
    status: str = "drawn"  # drawn | failed | skipped
    failures: list[str] = field(default_factory=list)
    note: str = ""  # why skipped, or where the figure is
    seconds: float = 0.0
    played: int = 0  # runs played (not reused)


def reproduce_all(artefacts: list[Artefact], options: Options, say=print) -> list[Outcome]:
    """Every artefact in turn, a line before and after each; returns their outcomes."""
    outcomes = []
    for i, artefact in enumerate(artefacts, 1):
        say(f"[{i}/{len(artefacts)}] {artefact.name}: {artefact.paper} {artefact.title}", flush=True)
        outcome = reproduce(artefact, options, say)
        say(f"  {outcome.status} in {outcome.seconds:.1f} s{': ' + outcome.note if outcome.note else ''}", flush=True)
        outcomes.append(outcome)
    return outcomes


def failure_lines(outcomes: list[Outcome]) -> list[str]:
    """One line per failure, naming its artefact (printed at the end; a non-zero exit status)."""
    return [f"FAILED {o.artefact.name}: {failure}" for o in outcomes for failure in o.failures]


def absent_data(artefact: Artefact, options: Options) -> list[str]:
    """The catalog datasets the artefact reads that are neither cached nor raw on disk (data dir, mirror)."""
    names = sweep.datasets(artefact.name, list(options.overrides))
    data, mirror = data_dir(), mirror_root()
    return [n for n in names if n in SPECS and not on_disk(SPECS[n], data, mirror)]


def reproduce(artefact: Artefact, options: Options, say=print) -> Outcome:
    start = time.perf_counter()
    outcome = Outcome(artefact)
    try:
        _reproduce(artefact, options, outcome, say)
    except Exception as exc:  # noqa: BLE001 - one artefact's bug must not stop the others
        outcome.failures.append(execute.one_line(exc))
    if outcome.failures and outcome.status != "skipped":
        outcome.status = "failed"
    outcome.seconds = time.perf_counter() - start
    return outcome


def _reproduce(artefact: Artefact, options: Options, outcome: Outcome, say) -> None:
    absent = absent_data(artefact, options)
    if absent:
        outcome.status = "skipped"
        outcome.note = f"data absent: okl-data fetch {' '.join(absent)} (or set OKL_DATA_MIRROR)"
        report.write_skipped(artefact, outcome.note, options.out)
        return
    runs = [
        run
        for root in options.roots
        for run in sweep.expand(artefact.name, [*options.overrides, *([f"sink.root={root}"] if root else [])])
    ]
    _play(runs, options, outcome, say, what="runs", expected=artefact.failing_arms)
    finished = _finished(runs)
    stopped = _stopped(runs, artefact.failing_arms)
    replays = []
    if artefact.replay:
        reference = next((f for f in finished if f.run.arm == artefact.replay), None)
        if reference is None:
            outcome.failures.append(f"no finished {artefact.replay} run to replay the others on")
        else:
            # an ablation's setting may be the stream's (the adversary's search): it is not replayed
            ablations = artefact.ablation_arms
            replayed = [sweep.replay(f.run, reference.run) for f in finished if f.run.arm not in ablations]
            _play(replayed, options, outcome, say, what="replays")
            replays = _finished(replayed)
    if not finished:
        outcome.failures.append(f"no finished runs to draw (okl-reproduce {artefact.name} runs them)")
        return
    rows = metrics.rows(finished)
    figure = figures.draw(artefact, rows, replays, options.out / f"{artefact.name}.png")
    summary = {
        "runs": len(finished) + len(replays),
        "compute_s": sum(f.manifest.get("wall_s") or 0.0 for f in [*finished, *replays]),
        "status": "drawn",
    }
    replayed = metrics.rows(replays)
    text, found = report.section(artefact, rows, figure, options.report, summary, options.command, replayed, stopped)
    report.write_section(artefact, text, summary, options.out, found)
    outcome.note = str(figure)


def _play(runs: list[sweep.Run], options: Options, outcome: Outcome, say, what: str, expected=frozenset()) -> None:
    """Play the missing runs; a run of an arm in ``expected`` (an ablation meant to diverge) that fails is
    reported in the section, not as a failure."""
    todo = execute.missing(runs)
    if not todo:
        say(f"  {len(runs)} {what}, all done before (reused)", flush=True)
        return
    if not options.run:
        say(f"  {len(todo)} of {len(runs)} {what} missing (--no-run: not played)", flush=True)
        return
    say(f"  playing {len(todo)} of {len(runs)} {what} ({len(runs) - len(todo)} reused)", flush=True)
    outcome.played += len(todo)
    for played in execute.play(todo, jobs=options.jobs, fresh=options.fresh):
        if played.failed and played.run.arm not in expected:
            outcome.failures.append(f"{played.run.label}: {played.line}")


def _stopped(runs: list[sweep.Run], arms: set[str]) -> dict[tuple[str, str], str]:
    """(dataset, arm) -> where and why the first failed run of an arm in ``arms`` stopped."""
    out = {}
    for run in runs:
        manifest = run.plan.run_dir().manifest() or {}
        if run.arm in arms and manifest.get("status") == "failed":
            why = f"stopped at round {manifest.get('rounds', 0) + 1:,} (seed {run.seed}): {manifest.get('error')}"
            out.setdefault((run.dataset, run.arm), why)
    return out


def _finished(runs: list[sweep.Run]) -> list[Finished]:
    out = []
    for run in runs:
        manifest = run.plan.run_dir().manifest() or {}
        if manifest.get("status") in FINISHED and manifest.get("rounds"):
            out.append(Finished(run))
    return out
