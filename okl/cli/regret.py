"""``okl-regret``: score finished runs after the fact (fill their Parquet column ``regret``).

    okl-regret results/learner=kernel_awv/dataset=adversary/seed=0/run=*      # the run's comparator, else oracle_prefix
    okl-regret RUN_DIR --comparator krr --lam 0.1
    okl-regret RUN_DIR --comparator nystrom_krr --m 2000
    okl-regret RUN_DIR --comparator krr_segments        # dynamic regret; segments from the run's dataset.changes

The comparator defaults to the one the run was played with (``okl-run comparator=krr``) and its σ and λ, else
oracle_prefix with the run's top-level ``sigma`` and ``lam``; a score against another comparator replaces the
run's (said when it does). The comparator is cached per stream under the results root, so scoring every learner run
on one stream computes it once.
"""

from __future__ import annotations

import argparse
import sys

from okl.cli import command
from okl.system import pin_blas_threads

PROG = "okl-regret"


@command
def main(argv: list[str] | None = None) -> None:
    pin_blas_threads()  # before any numerical import
    parser = argparse.ArgumentParser(prog=PROG, description="Fill the regret column of finished runs.")
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories (holding run.json)")
    parser.add_argument(
        "--comparator",
        help="krr, nystrom_krr, oracle_prefix or krr_segments (default: the run's comparator, else oracle_prefix)",
    )
    parser.add_argument("--sigma", type=float, help="Gaussian bandwidth (default: the comparator's, else the run's)")
    parser.add_argument("--lam", type=float, help="ridge λ (default: the comparator's, else the run's lam)")
    parser.add_argument("--m", type=int, help="nystrom_krr: number of centres")
    parser.add_argument("--changes", type=int, help="krr_segments: changes of the target (default: the run's)")
    args = parser.parse_args(argv)

    from okl.analyses.regret import score_run
    from okl.errors import OklError
    from okl.regret import COMPARATORS
    from okl.store import RegretEntry, RunDir

    try:
        if args.comparator is not None:
            COMPARATORS.get(args.comparator)  # an unknown name: before any run is read
        for path in args.runs:
            run = RunDir(path)
            manifest = run.manifest()
            config = manifest.config if manifest else {}
            played = config.get("comparator") or {}  # okl-run comparator=...: the run's own, with its settings
            played = {} if played.get("name") == "none" else played  # comparator=none, okl-run's default
            name = args.comparator or played.get("name") or "oracle_prefix"
            cls = COMPARATORS.get(name)
            own = played if played.get("name") == name else config
            params = {
                "sigma": args.sigma if args.sigma is not None else own.get("sigma", 1.0),
                "lam": args.lam if args.lam is not None else own.get("lam", 1.0),
            }
            if args.m is not None:
                params["m"] = args.m
            dataset = config.get("dataset", {})
            params.update({key: dataset[key] for key in cls.from_dataset if dataset.get(key) is not None})
            if args.changes is not None:
                params["changes"] = args.changes
            before = (manifest.analyses.get("regret") if manifest else None) or {}
            entry = score_run(run, cls(**params))
            source = "cached" if entry["cached"] else f"{entry['seconds']:.2f} s"
            scored = RegretEntry.comparator_of(entry)
            was = RegretEntry.comparator_of(before) if "comparator" in before else scored
            replaced = f"; it replaces the score against {was}, {before['regret']:.6g}" if was != scored else ""
            rounds = f"{entry['rounds']:,} rounds"
            print(f"{path}: regret {entry['regret']:.6g} after {rounds} against {scored} ({source}){replaced}")
    except OklError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        sys.exit(2)
