"""`make bench` (multi-kernel learners): µs/round of raker and adaraker at d = 27, D = 50,
P = 3 kernels over 100,000 rounds of the built-in synthetic stream, each in its own `okl-run` process
(learner seconds from run.json, median of --repeat runs). AdaRaker runs ⌊log₂ t⌋ Raker instances at
round t, so its target is at most about log₂(T) × Raker's µs/round; the ratio is printed beside it.

    python scripts/bench_raker.py [--rounds 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
from pathlib import Path

from benchlib import okl_run

CASES = ["raker", "adaraker"]


def learner_seconds(learner: str, rounds: int, root: Path) -> float:
    return okl_run(["dataset=synthetic", "dataset.d=27", f"dataset.length={rounds}"], root, learner)[0]["learner_s"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    us = {}
    for learner in CASES:
        times = []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as tmp:
                times.append(learner_seconds(learner, args.rounds, Path(tmp)) / args.rounds * 1e6)
        us[learner] = statistics.median(times)
    budget = math.log2(args.rounds)
    print(f"{'learner':10s} {'µs/round':>9s}  (d = 27, D = 50, P = 3, {args.rounds:,} rounds)")
    print(f"{'raker':10s} {us['raker']:9.2f}")
    ratio = us["adaraker"] / us["raker"]
    verdict = "ok" if ratio <= budget else "SLOW"
    print(f"{'adaraker':10s} {us['adaraker']:9.2f}  {ratio:.1f}× raker, target <= log2(T) = {budget:.1f}×: {verdict}")


if __name__ == "__main__":
    main()
