"""`make bench` (POLK): multidist Multi-KSVM with POLK (σ̃² = 0.6, η = 6, b = 32, K = 0.04,
λ = 10⁻⁶), each run in its own `okl-run` process: the held-out error at the end, the model order,
learner seconds and µs/round, on the text's generator and on the separated variant (σ² = σ_y² = 0.04).
Targets: held-out error <= 5% and model order <= 30 (paper: 3.98% with 16); the text's generator has a
Bayes error near 33%, so there the error is judged against the Bayes error + 5 points instead.

    python scripts/bench_polk.py [--seeds 3]
"""

from __future__ import annotations

import argparse
import math
import tempfile
from pathlib import Path

from benchlib import okl_run

from okl.datasets import DATASETS

VARIANTS = {"text (σ²=0.2, σ_y²=1)": {}, "separated (σ²=σ_y²=0.04)": {"mode_var": 0.04, "mean_var": 0.04}}
POLK = ["dataset=multidist", f"sigma={math.sqrt(0.6)}", "learner.eta=6", "learner.batch=32", "learner.K=0.04"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    head = f"{'multidist':26s} {'seed':>4s} {'test err':>8s} {'Bayes':>6s} {'order':>5s} {'s/run':>6s} {'µs/round':>8s}"
    print(f"{head}  verdict")
    for name, params in VARIANTS.items():
        for seed in range(args.seeds):
            keys = [f"dataset.{k}={v}" for k, v in params.items()]
            with tempfile.TemporaryDirectory() as tmp:
                manifest, run_dir = okl_run([*POLK, *keys, f"seed={seed}"], Path(tmp), "polk")
                final = run_dir.heldout().iloc[-1]
            bayes = DATASETS.get("multidist")(seed=seed, **params).bayes_error()
            error, order = float(final.test_loss), int(final.model_size)
            target = 0.05 if params else bayes + 0.05
            verdict = "ok" if error <= target and order <= 30 else "MISSED"
            us = manifest["learner_s"] / manifest["rounds"] * 1e6
            print(
                f"{name:26s} {seed:4d} {100 * error:7.2f}% {100 * bayes:5.1f}% {order:5d} "
                f"{manifest['learner_s']:6.2f} {us:8.1f}  {verdict}"
            )


if __name__ == "__main__":
    main()
