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
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from okl.cli import command
from okl.system import pin_blas_threads

PROG = "okl-bench"


@command
def main(argv: list[str] | None = None) -> None:
    pin_blas_threads()
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0].split(": ", 1)[1])
    parser.add_argument("names", nargs="*", metavar="NAME", help="cases (default: all)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per case (fresh process each)")
    parser.add_argument("--smoke", action="store_true", help="200 rounds per run, one repeat")
    parser.add_argument("--out", type=Path, help="figures and sections (default: figures/bench/)")
    parser.add_argument("--report", type=Path, help="the BENCHMARKS.md to write (default: ./, or --out's with --smoke)")
    args = parser.parse_args(argv)

    from okl.errors import OklError
    from okl.reproduce import catalog, report
    from okl.reproduce.pipeline import Options, failure_lines, reproduce_all

    try:
        if args.repeats < 1:
            raise OklError("--repeats takes a positive number")
        unknown = [n for n in args.names if n not in catalog.BENCH]
        if unknown:  # before loading: an unknown name is not a paper artefact to list
            raise OklError(f"{unknown[0]!r} is not a benchmark; choose among: {', '.join(catalog.BENCH)}")
        cases = [catalog.load(n) for n in args.names] if args.names else catalog.benchmarks()
    except OklError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        sys.exit(2)
    out = args.out or Path("figures/bench")
    out.mkdir(parents=True, exist_ok=True)
    repeats = 1 if args.smoke else args.repeats
    try:
        with tempfile.TemporaryDirectory(prefix="okl-bench-") as scratch:
            options = Options.make(
                None,
                args.smoke,
                out=out,
                report=args.report or (out / "BENCHMARKS.md" if args.smoke else Path("BENCHMARKS.md")),
                roots=tuple(f"{scratch}/{k}" for k in range(repeats)),
                fresh=True,
                command=PROG,
            )
            start = time.perf_counter()
            outcomes = reproduce_all(cases, options)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        sys.exit(130)
    timing = report.reproduction_timing(Path("figures"))
    path = report.assemble(out, options.report, catalog.BENCH, report.BENCHMARKS, repeats=repeats, reproduction=timing)
    print(f"\n{len(cases)} cases in {time.perf_counter() - start:.0f} s; report {path}")
    failures = failure_lines(outcomes)
    for line in failures:
        print(line)
    sys.exit(1 if failures else 0)
