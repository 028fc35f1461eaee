"""Reproduce artefacts: check their data, run what is missing, read the runs, draw, tabulate.

:func:`reproduce_all` plays the missing runs of every artefact in one pool, longest expected first, and
draws each artefact as soon as its runs are done, so that the workers stay busy to the end. It never
raises for a problem of an artefact itself (absent data, a failing run, a figure that cannot be drawn):
each :class:`Outcome`'s ``failures`` say what went wrong in one line each, and the others go on.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from okl import results
from okl.data.cache import on_disk
from okl.data.catalog import SPECS
from okl.data.sources import data_dir, mirror_root
from okl.reproduce import execute, figures, metrics, report, sweep
from okl.reproduce.catalog import Artefact
from okl.reproduce.metrics import Finished
from okl.runner.play import ADVICE
from okl.store import FINISHED

SMOKE_ROUNDS = 200  # --smoke: rounds per run (the whole path in about a minute), unless the artefact sets its own


@dataclass(frozen=True)
class Options:
    run: bool = True  # run what is missing (False: draw from existing runs only)
    overrides: tuple[str, ...] = ()  # okl-run overrides added to every run (n=, seed=, ...)
    jobs: int = 1
    out: Path = Path("figures")
    report: Path = Path("REPRODUCTION.md")
    roots: tuple[str | None, ...] = (None,)  # results roots: each run is played once per root (None: sink.root)
    fresh: bool = False  # a process of its own per run (its peak RSS is its own)
    launcher: str = "local"  # local (processes of this machine) | submitit_local | slurm (okl.reproduce.execute)
    command: str = "okl-reproduce"  # the command named in the report
    smoke: bool = False  # --smoke: the overrides hold n=SMOKE_ROUNDS and one seed

    @classmethod
    def make(cls, seeds: int | None, smoke: bool, **kwargs) -> Options:
        overrides = [f"n={SMOKE_ROUNDS}", "seed=0"] if smoke else []
        if seeds is not None and not smoke:
            overrides.append(f"seed=range(0,{seeds})")
        return cls(overrides=tuple(overrides), smoke=smoke, **kwargs)

    def overrides_of(self, artefact: Artefact) -> list[str]:
        """The overrides added to the artefact's runs: under --smoke, its own ``smoke_rounds`` where it sets them
        (the adversary's search costs most of a smoke run: its artefact plays the paper's 80 rounds)."""
        if self.smoke and artefact.smoke_rounds:
            return [f"n={artefact.smoke_rounds}" if o.startswith("n=") else o for o in self.overrides]
        return list(self.overrides)


@dataclass
class Outcome:
    artefact: Artefact
    status: str = "drawn"  # drawn | failed | skipped
    failures: list[str] = field(default_factory=list)
    note: str = ""  # why skipped, or where the figure is
    seconds: float = 0.0
    played: int = 0  # runs played (not reused)


def reproduce_all(artefacts: list[Artefact], options: Options, say=print) -> list[Outcome]:
    """Every artefact: their missing runs in one pool (:class:`execute.Pool`, longest expected first), each
    artefact drawn as soon as its runs (then its replays) are done; returns their outcomes."""
    pool = execute.Pool(options.jobs, options.fresh, say, options.launcher, options.out / ".submitit" / "%j")
    history = _history(options)
    states = []
    for i, artefact in enumerate(artefacts, 1):
        say(f"[{i}/{len(artefacts)}] {artefact.name}: {artefact.paper} {artefact.title}", flush=True)
        state = _Artefact(Outcome(artefact))
        states.append(state)
        state.attempt(lambda s=state: _start(s, options, pool, history, say))
    try:
        for state, played in pool.results():
            if played.failed and played.run.arm not in state.outcome.artefact.failing_arms:  # an ablation meant
                state.outcome.failures.append(f"{played.run.label}: {played.line}")  # to diverge is no failure
            state.pending -= 1
            if state.pending == 0:
                state.attempt(lambda s=state: _advance(s, options, pool, history, say))
    finally:
        pool.close()
    if pool.submitted and options.jobs > 1:
        say(
            f"pool: {pool.submitted} runs on {options.jobs} workers, {100 * pool.utilisation:.0f}% busy: the runs took "
            f"{pool.busy_s:,.0f} s in the workers (planning, playing, post-run analyses), "
            f"{pool.busy_s / options.jobs:,.0f} s per worker, in {pool.elapsed:,.0f} s",
            flush=True,
        )
    return [state.outcome for state in states]


@dataclass
class _Artefact:
    """An artefact on its way: its runs, then its replays, then drawn."""

    outcome: Outcome
    runs: list[sweep.Run] = field(default_factory=list)
    replays: list[sweep.Run] | None = None  # None until its runs are done
    pending: int = 0  # runs of the current phase still in the pool
    start: float = field(default_factory=time.perf_counter)

    def attempt(self, step) -> None:
        """Take the artefact's next step; a problem of the artefact itself is one failure line, and ends it."""
        try:
            step()
        except Exception as exc:  # noqa: BLE001 - one artefact's bug must not stop the others
            self.outcome.failures.append(execute.one_line(exc))
            self.finish(say=None)

    def finish(self, say) -> None:
        o = self.outcome
        if o.failures and o.status != "skipped":
            o.status = "failed"
        o.seconds = time.perf_counter() - self.start
        if say is not None:
            say(f"  {o.artefact.name}: {o.status} in {o.seconds:.1f} s{': ' + o.note if o.note else ''}", flush=True)


def failure_lines(outcomes: list[Outcome]) -> list[str]:
    """One line per failure, naming its artefact (printed at the end; a non-zero exit status)."""
    return [f"FAILED {o.artefact.name}: {failure}" for o in outcomes for failure in o.failures]


def absent_data(artefact: Artefact, options: Options) -> list[str]:
    """The catalog datasets the artefact reads that are neither cached nor raw on disk (data dir, mirror)."""
    names = sweep.datasets(artefact.name, options.overrides_of(artefact))
    data, mirror = data_dir(), mirror_root()
    return [n for n in names if n in SPECS and not on_disk(SPECS[n], data, mirror)]


def _start(state: _Artefact, options: Options, pool: execute.Pool, history: dict, say) -> None:
    artefact, outcome = state.outcome.artefact, state.outcome
    absent = absent_data(artefact, options)
    if absent:
        outcome.status = "skipped"
        outcome.note = f"data absent: okl-data fetch {' '.join(absent)} (or set OKL_DATA_MIRROR)"
        report.write_skipped(artefact, outcome.note, options.out)
        state.finish(say)
        return
    state.runs = [
        run
        for root in options.roots
        for run in sweep.expand(
            artefact.name, [*options.overrides_of(artefact), *([f"sink.root={root}"] if root else [])]
        )
    ]
    _submit(state, state.runs, options, pool, history, say, what="runs")
    if state.pending == 0:
        _advance(state, options, pool, history, say)


def _advance(state: _Artefact, options: Options, pool: execute.Pool, history: dict, say) -> None:
    """The phase's runs are done: queue the replays (once), or draw."""
    artefact, outcome = state.outcome.artefact, state.outcome
    if state.replays is None:
        state.replays = []
        finished = _finished(state.runs)
        reference = next((f for f in finished if f.run.arm == artefact.replay), None) if artefact.replay else None
        if artefact.replay and reference is None:
            outcome.failures.append(f"no finished {artefact.replay} run to replay the others on")
        elif reference is not None:
            # an ablation's setting may be the stream's (the adversary's search): it is not replayed
            ablations = artefact.ablation_arms
            state.replays = [sweep.replay(f.run, reference.run) for f in finished if f.run.arm not in ablations]
            _submit(state, state.replays, options, pool, history, say, what="replays")
            if state.pending:
                return
    _draw(state, options)
    state.finish(say)


def _submit(state: _Artefact, runs: list[sweep.Run], options: Options, pool, history: dict, say, what: str) -> None:
    todo = execute.missing(runs)
    name = state.outcome.artefact.name
    if not todo:
        say(f"  {name}: {len(runs)} {what}, all done before (reused)", flush=True)
    elif not options.run:
        say(f"  {name}: {len(todo)} of {len(runs)} {what} missing (--no-run: not played)", flush=True)
    else:
        say(f"  {name}: playing {len(todo)} of {len(runs)} {what} ({len(runs) - len(todo)} reused)", flush=True)
        state.outcome.played += len(todo)
        state.pending = len(todo)
        for run in todo:
            pool.submit(run, state, _expected_seconds(run, history))


def _history(options: Options) -> dict[tuple[str, str], float]:
    """Seconds per round of the finished runs already under the results roots, per (learner, dataset) and per
    learner (key ``(learner, "")``): what ranks the runs to play, longest first."""
    per_round: dict[tuple[str, str], list[float]] = {}
    for root in {root or results.default_root() for root in options.roots}:
        if not Path(root).is_dir():
            continue
        table = results.runs(root, status=FINISHED)
        for row in table.itertuples() if not table.empty else ():
            if row.rounds and row.wall_s == row.wall_s:  # wall_s is NaN where unknown
                for key in ((row.learner, row.dataset), (row.learner, "")):
                    per_round.setdefault(key, []).append(row.wall_s / row.rounds)
    return {key: float(np.median(values)) for key, values in per_round.items()}


def _expected_seconds(run: sweep.Run, history: dict[tuple[str, str], float]) -> float:
    """Its rounds times the seconds per round of earlier runs of its learner on its dataset (else anywhere);
    without any, 10 µs a round: a simple model that still ranks long streams first."""
    learner, dataset = run.plan.learner.name, run.plan.dataset.name  # the results' names (run.dataset: a label)
    rate = history.get((learner, dataset), history.get((learner, ""), 1e-5))
    return rate * run.plan.rounds


def _draw(state: _Artefact, options: Options) -> None:
    artefact, outcome = state.outcome.artefact, state.outcome
    finished, replays = _finished(state.runs), _finished(state.replays or [])
    if not finished:
        smoke = " --smoke" if options.smoke else ""  # it named the full preset's command, not the smoke runs'
        outcome.failures.append(f"no finished runs to draw (okl-reproduce {artefact.name}{smoke} runs them)")
        return
    rows = metrics.rows(finished)
    figure = figures.draw(artefact, rows, replays, options.out / f"{artefact.name}.png")
    summary = {
        "runs": len(finished) + len(replays),
        "compute_s": sum(f.row.get("wall_s") or 0.0 for f in [*finished, *replays]),
        "status": "drawn",
        "run_ids": sorted({f.run.plan.run_id for f in [*finished, *replays]}),  # what the figure was drawn from
    }
    replayed, stopped = metrics.rows(replays), _stopped(state.runs, artefact.failing_arms)
    text, found = report.section(artefact, rows, figure, options.report, summary, options.command, replayed, stopped)
    report.write_section(artefact, text, summary, options.out, found)
    outcome.note = str(figure)


def _stopped(runs: list[sweep.Run], arms: set[str]) -> dict[tuple[str, str], str]:
    """(dataset, arm) -> where and why the first failed run of an arm in ``arms`` stopped."""
    out = {}
    for run in runs:
        manifest = run.plan.run_dir().manifest()
        if run.arm in arms and manifest and manifest.status == "failed":
            error = manifest.error.removesuffix(f": {ADVICE}")  # what happened, without the runner's advice to its user
            why = f"stopped at round {manifest.rounds + 1:,} (seed {run.seed}): {error}"
            out.setdefault((run.dataset, run.arm), why)
    return out


def _finished(runs: list[sweep.Run]) -> list[Finished]:
    out = []
    for run in runs:
        manifest = run.plan.run_dir().manifest()
        if manifest and manifest.status in FINISHED and manifest.rounds:
            out.append(Finished(run))
    return out
