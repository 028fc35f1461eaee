"""`make bench` (adversarial environments and regret): the greedy adversary of pkawv_jezequel2019
Appendix G for n = 1000 rounds (d = 5, σ = λ = 1) against each learner of Figure 3, each in its own
`okl-run` process; target: under 2 minutes per learner (the paper stopped at n = 80). Then the
comparators on long streams: `nystrom_krr` (m = 1000) on 10⁶ synthetic rounds, and `krr` /
`oracle_prefix` on 10⁴.

Reports wall seconds (adversary + learner + scoring), the adversary's and the learner's share, the
final regret against the prefix oracle, and the comparators' seconds and peak RSS.

    python scripts/bench_adversary.py [--rounds 1000] [--learners kernel_awv fogd]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
from benchlib import okl_run

LEARNERS = ["kernel_awv", "pkawv_taylor", "pkawv_nystrom", "pros_n_kons", "fogd"]
TARGET_S = 120.0


def adversary(learner: str, rounds: int, root: Path) -> dict:
    overrides = ["dataset=adversary", f"dataset.length={rounds}", "sigma=1", "lam=1", "comparator=oracle_prefix"]
    t0 = time.perf_counter()
    manifest, _ = okl_run(overrides, root, learner)
    return {**manifest, "process_s": time.perf_counter() - t0}


def comparators() -> None:
    """Comparator seconds on synthetic streams (in this process; peak RSS is the process's so far)."""
    from okl.datasets import DATASETS
    from okl.regret import COMPARATORS

    cases = (("nystrom_krr", 1_000_000, {"m": 1000}), ("krr", 10_000, {}), ("oracle_prefix", 10_000, {}))
    for name, n, extra in cases:
        X, y = (np.concatenate(a) for a in zip(*DATASETS.get("synthetic")(d=18, length=n).chunks(), strict=True))
        t0 = time.perf_counter()
        ell, _ = COMPARATORS.get(name)(sigma=1.0, lam=1.0, **extra).losses(X, y)
        seconds = time.perf_counter() - t0
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
        mean = ell.mean()
        print(f"comparator {name:<14} {n:>10,} rounds {seconds:>8.1f} s  loss/round {mean:.4f}  peak RSS {rss:,.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--learners", nargs="+", default=LEARNERS)
    parser.add_argument("--no-comparators", action="store_true")
    args = parser.parse_args()
    head = f"{'adversary vs':<16} {'rounds':>7} {'wall s':>8} {'target':>7} {'adversary s':>12} {'learner s':>10}"
    print(f"{head} {'regret':>9}")
    for learner in args.learners:
        with tempfile.TemporaryDirectory() as tmp:
            m = adversary(learner, args.rounds, Path(tmp))
        print(
            f"{learner:<16} {m['rounds']:>7,} {m['process_s']:>8.1f} {TARGET_S:>7.0f} {m['environment_s']:>12.1f} "
            f"{m['learner_s']:>10.2f} {m['regret']['regret']:>9.2f}",
            flush=True,
        )
    if not args.no_comparators:
        comparators()


if __name__ == "__main__":
    main()
