"""``okl-bench``: speed and memory of okl's learners (µs/round, wall time, peak RSS), written to BENCHMARKS.md.

Examples::

    okl-bench                         # every case, 3 repeats each (make bench)
    okl-bench bench_synthetic --repeats 1
    okl-bench --smoke --out /tmp/b    # 200 rounds per case: the path, not the numbers

Each case is an artefact (``okl/reproduce/artefacts/bench_*.yaml``) with its preset
(``conf/experiment/bench_*.yaml``), played through the same path as ``okl-reproduce``: every run in a
fresh process with one BLAS thread, under a scratch results root, so nothing is reused and each run's
peak RSS is its own. Cases whose data is absent are skipped with the fetch command. Exit status 1 if a
run fails, 2 on bad arguments, 130 on Ctrl-C.

The report also times the planning of the largest preset (:func:`planning`): what ``okl-reproduce`` does
before its first run, on a new machine and once the compositions are kept (:mod:`okl.compose`); and the
per-round path of a dictionary learner against its blocks (:func:`per_round`): what river's
``predict_one``/``learn_one`` cost.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from okl.cli import command
from okl.system import pin_blas_threads

PROG = "okl-bench"
LARGEST = "pros_n_kons_table1"  # the preset with the most runs (a test checks)
EXPAND = (
    "import sys, time; from okl.reproduce import sweep; start = time.perf_counter(); "
    "runs = sweep.expand(sys.argv[1], []); print(len(runs), time.perf_counter() - start)"
)


@command
def main(argv: list[str] | None = None) -> None:
    pin_blas_threads()
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0].split(": ", 1)[1])
    parser.add_argument("names", nargs="*", metavar="NAME", help="cases (default: all)")
    parser.add_argument("--repeats", type=int, help="runs per case (fresh process each; default 3, --smoke 1)")
    parser.add_argument("--smoke", action="store_true", help="200 rounds per run, one repeat")
    parser.add_argument(
        "--out", type=Path, help="figures and sections (default: figures/bench/, figures/bench/smoke/ with --smoke)"
    )
    parser.add_argument("--report", type=Path, help="the BENCHMARKS.md to write (default: ./, or --out's with --smoke)")
    args = parser.parse_args(argv)

    from okl.errors import OklError
    from okl.reproduce import catalog, report
    from okl.reproduce.pipeline import Options, failure_lines, reproduce_all

    try:
        if args.repeats is not None and args.repeats < 1:
            raise OklError("--repeats takes a positive number")
        if args.smoke and args.repeats is not None:  # it was ignored: one run per case
            raise OklError("--smoke plays each case once: drop --repeats, or --smoke to repeat full cases")
        unknown = [n for n in args.names if n not in catalog.BENCH]
        if unknown:  # before loading: an unknown name is not a paper artefact to list
            raise OklError(f"{unknown[0]!r} is not a benchmark; choose among: {', '.join(catalog.BENCH)}")
        cases = [catalog.load(n) for n in args.names] if args.names else catalog.benchmarks()
        out = default_out(args)
        default = out / "BENCHMARKS.md" if args.smoke else Path("BENCHMARKS.md")
        report.outputs(out, args.report or default)  # before the runs: it failed after every one had played
    except OklError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        sys.exit(2)
    repeats = 1 if args.smoke else args.repeats or 3
    names = [c.name for c in cases]
    path, note = report.target(args.report, default, out, names, catalog.BENCH, "okl-bench with no NAME")
    if note:
        print(note)
    try:
        with tempfile.TemporaryDirectory(prefix="okl-bench-") as scratch:
            options = Options.make(
                None,
                args.smoke,
                out=out,
                report=path,
                roots=tuple(f"{scratch}/{k}" for k in range(repeats)),
                fresh=True,
                command=PROG,
            )
            start = time.perf_counter()
            outcomes = reproduce_all(cases, options)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        sys.exit(130)
    timing = (
        f"{report.reproduction_timing(Path('figures'))}\n\n{planning()}\n\n{per_round(*SMOKE if args.smoke else ())}"
    )
    path = report.assemble(out, options.report, catalog.BENCH, report.BENCHMARKS, repeats=repeats, reproduction=timing)
    print(f"\n{len(cases)} cases in {time.perf_counter() - start:.0f} s; report {path}")
    failures = failure_lines(outcomes)
    for line in failures:
        print(line)
    sys.exit(1 if failures else 0)


def planning(preset: str = LARGEST) -> str:
    """One line on the time a new process takes to expand ``preset`` into its runs and plan each (no data
    read), with an empty user cache (a new machine), then again with the compositions the first kept."""
    with tempfile.TemporaryDirectory(prefix="okl-bench-plan-") as cache:
        env = {**os.environ, "XDG_CACHE_HOME": cache}
        timed = [
            subprocess.run([sys.executable, "-c", EXPAND, preset], env=env, capture_output=True, text=True, check=True)
            for _ in range(2)
        ]
    (runs, new), (_, kept) = (t.stdout.split() for t in timed)
    return (
        f"Planning the largest preset, `okl-reproduce {preset}` ({runs} runs, no data read): {float(new):.2f} s "
        f"on a new machine, {float(kept):.2f} s once its compositions are kept (`~/.cache/okl-compose/`)."
    )


def default_out(args: argparse.Namespace) -> Path:
    """--out, else figures/bench/ (the sections every report is assembled from), or figures/bench/smoke/ with --smoke:
    a 200-round smoke section there was then assembled into a later report as a benchmark."""
    return args.out or Path("figures/bench/smoke" if args.smoke else "figures/bench")


SMOKE = (1, 2000)  # --smoke: one pair of runs on 2,000 rounds
RUN = "import sys; from okl.cli.run import main; sys.argv[0] = 'okl-run'; main()"
PER_ROUND = (  # learners with a compiled one-round path, as bench_river_casp and pros_n_kons_table1 set them
    ("learner=pkrr_nystrom", "sigma=1", "lam=1"),
    ("learner=pros_n_kons", "sigma=1"),
)


def per_round(pairs: int = 3, rounds: int | None = None) -> str:
    """One line per learner of ``PER_ROUND`` on the learner time of ``okl-run dataset=casp`` with ``block=1``
    (``predict_one``/``learn_one`` round by round) against its default blocks (on the first ``rounds``, default
    all): ``pairs`` alternating runs of each, the median of each. Skipped (with the fetch command) when casp is
    not here."""
    from okl import results
    from okl.data.cache import on_disk
    from okl.data.catalog import SPECS
    from okl.data.sources import data_dir, mirror_root

    if not on_disk(SPECS["casp"], data_dir(), mirror_root()):
        return "Per-round path: skipped, casp is not here (okl-data fetch casp, or set OKL_DATA_MIRROR)."
    lines = []
    for learner in PER_ROUND:
        keys = (*learner, "dataset=casp", *([f"n={rounds}"] if rounds else []))
        seconds: dict[str, list[float]] = {"block=1": [], "": []}
        with tempfile.TemporaryDirectory(prefix="okl-bench-round-") as root:
            for _ in range(pairs):
                for block in seconds:
                    args = [*keys, *filter(None, [block]), "progress=false", "sink.overwrite=true", f"sink.root={root}"]
                    subprocess.run([sys.executable, "-c", RUN, *args], capture_output=True, text=True, check=True)
                    seconds[block].append(float(results.runs(root).learner_s.iloc[0]))
        one, blocks = (sorted(v)[len(v) // 2] for v in seconds.values())
        lines.append(
            f"- `okl-run {' '.join(keys)} block=1`: {one:.3g} s of learner time against {blocks:.3g} s in its "
            f"blocks, {one / blocks:.1f}× (medians of {pairs})."
        )
    return "\n".join(["Per-round path (river's `predict_one`/`learn_one`):", "", *lines])
