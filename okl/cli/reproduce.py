"""``okl-reproduce``: every paper artefact in one command — its runs, its figure, its table beside the paper's.

Examples::

    okl-reproduce --list                          # the artefacts, and whether their data is here
    okl-reproduce pkawv_fig4_casp                 # run what is missing, draw figures/pkawv_fig4_casp.png
    okl-reproduce --all --jobs 2                  # every artefact (make figures); REPRODUCTION.md
    okl-reproduce --all --jobs 200 --launcher slurm   # the missing runs as SLURM jobs (conf/hydra/launcher/slurm.yaml)
    okl-reproduce --all --smoke                   # the whole path on 200 rounds (the adversary: 80), one seed
    okl-reproduce pros_n_kons_table1 --seeds 10   # more seeds than the preset's
    okl-reproduce --all --no-run                  # the report again from the runs there, nothing played

Every claim of an artefact is checked over its runs and gets a verdict (holds, partly, fails, not resolved, not
run, not checkable) with the numbers that decided it; the scoreboard of the verdicts opens REPRODUCTION.md and is
printed at the end.

Complete runs are reused (the same run directories ``okl-run -m experiment=<name>`` writes). An artefact
that fails does not stop the others; each failure is listed in one line at the end and the exit status
is 1. Bad arguments exit with status 2, Ctrl-C with 130.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

from okl.cli import command
from okl.system import pin_blas_threads

PROG = "okl-reproduce"


@command
def main(argv: list[str] | None = None) -> None:
    pin_blas_threads()  # before any numerical import; worker processes inherit it
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0].split(": ", 1)[1])
    parser.add_argument("names", nargs="*", metavar="NAME", help="artefacts to reproduce (--list shows them)")
    parser.add_argument(
        "--list", action="store_true", help="list the artefacts (those named, or all) and whether their data is here"
    )
    parser.add_argument("--all", action="store_true", help="every artefact")
    parser.add_argument("--seeds", type=int, help="seeds 0..K-1 for every run (default: the presets')")
    parser.add_argument("--no-run", action="store_true", help="draw from the runs already there")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="200 rounds (or the artefact's smoke_rounds) and one seed per run: the whole path, fast",
    )
    parser.add_argument("--jobs", type=int, default=1, help="runs played in parallel (one process each)")
    parser.add_argument(
        "--launcher",
        choices=("local", "submitit_local", "slurm"),
        default="local",
        help="where the runs play: this machine's processes, submitit jobs here, or SLURM jobs ('okl[slurm]')",
    )
    parser.add_argument("--out", type=Path, help="figures and sections (default: figures/, figures/smoke/)")
    parser.add_argument("--report", type=Path, help="the REPRODUCTION.md to write (default: ./, or --out's)")
    args = parser.parse_args(argv)

    from okl.errors import OklError
    from okl.reproduce import catalog

    try:
        if args.seeds is not None and args.seeds < 1 or args.jobs < 1:
            raise OklError("--seeds and --jobs take a positive number")
        if args.launcher != "local" and importlib.util.find_spec("submitit") is None:
            raise OklError(f"--launcher {args.launcher} needs submitit: pip install 'okl[slurm]'")
        if args.smoke and args.seeds is not None:  # it was ignored: a smoke run plays seed 0
            raise OklError("--smoke plays one seed per run: drop --seeds, or --smoke to play the seeds in full")
        if args.list:  # the names given (an unknown one refused: it was ignored, and every artefact listed)
            _list([catalog.load(n) for n in args.names] if args.names else catalog.all_artefacts())
            return
        if not args.names and not args.all:
            raise OklError("name the artefacts to reproduce (okl-reproduce --list shows them), or pass --all")
        if args.names and args.all:  # the names were ignored, an unknown one too, and every artefact played (40 min)
            raise OklError(f"--all reproduces every artefact: drop {' '.join(args.names)}, or drop --all")
        artefacts = catalog.all_artefacts() if args.all else [catalog.load(n) for n in args.names]
    except OklError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        sys.exit(2)
    try:
        sys.exit(_reproduce(artefacts, args))
    except OklError as exc:  # --out or --report unusable: said before any run
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; the rounds played so far are saved (the same command resumes)", file=sys.stderr)
        sys.exit(130)


def _list(artefacts) -> None:
    from okl.reproduce.pipeline import Options, absent_data

    width = max(len(a.name) for a in artefacts)
    for artefact in artefacts:
        absent = absent_data(artefact, Options())
        data = f"data absent: okl-data fetch {' '.join(absent)}" if absent else "data here"
        print(f"{artefact.name:<{width}}  {artefact.paper} {artefact.title} [{artefact.draws}]; {data}")


def _reproduce(artefacts, args) -> int:
    from okl.reproduce import report
    from okl.reproduce.pipeline import Options, failure_lines, reproduce_all

    out = args.out or Path("figures/smoke" if args.smoke else "figures")
    default = out / "REPRODUCTION.md" if args.smoke or args.out else Path("REPRODUCTION.md")
    report.outputs(out, args.report or default)
    path, note = report.target(args.report, default, out, [a.name for a in artefacts])
    if note:
        print(note)
    options = Options.make(
        args.seeds, args.smoke, run=not args.no_run, jobs=args.jobs, launcher=args.launcher, out=out, report=path
    )
    start = time.perf_counter()
    outcomes = reproduce_all(artefacts, options)
    path = report.assemble(options.out, options.report)
    drawn = [o for o in outcomes if o.status == "drawn"]
    seconds = time.perf_counter() - start
    print(f"\n{report.scoreboard(options.out)}")
    print(f"{len(drawn)} of {len(outcomes)} drawn in {seconds:.0f} s; report {path}")
    played = sum(o.played for o in outcomes)
    if args.all and not args.smoke and played:  # BENCHMARKS.md quotes the full reproduction's wall time
        report.record_timing(options.out, seconds, args.jobs, len(drawn), played)
    for o in outcomes:
        if o.status == "skipped":
            print(f"skipped {o.artefact.name}: {o.note}")
    failures = failure_lines(outcomes)
    for line in failures:
        print(line)
    return 1 if failures else 0
