"""`make bench` (Nyström and second-order learners): the issue's two targets, each run in its own
`okl-run` process on the real data (needs the datasets: OKL_DATA_MIRROR or `okl-data fetch`).

- pros_n_kons on casp (45,730 rounds; α = γ = 1, β = 1, ε = 0.5, preset pros_n_kons_regression: σ = 4
  and KORS's ``code`` weights, which reproduce the paper's #SV and BATCH losses): target <= 2 s per
  run; the paper: 40.7 s on a 10-core Xeon, 21 SV, loss 0.0677 ± 0.0011.
- pkrr_nystrom on all 271,617 rounds of cod-rna (σ = 1, λ = 1, μ = 1, β = 1, ε = 0.5): target <= 15 s.

Reports learner seconds (median of --repeat runs), average loss, final dictionary size, the stream's
d_eff(γ) as run.json reports it (Nyström estimate on the final dictionary here) and peak RSS.

    python scripts/bench_kons.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from benchlib import RunFailed, okl_run

CASES = [  # name, learner, overrides, target seconds
    ("pros_n_kons casp", "pros_n_kons", ["experiment=pros_n_kons_regression"], 2.0),
    ("pkrr_nystrom cod_rna", "pkrr_nystrom", ["dataset=cod_rna", "sigma=1", "lam=1"], 15.0),
]


def run_case(learner: str, overrides: list[str], root: Path) -> tuple[dict, int] | str:
    """(run.json, final dictionary size), or okl-run's one-line error (a dataset that is not available)."""
    try:
        manifest, run_dir = okl_run(overrides, root, learner)
    except RunFailed as failure:
        return str(failure)
    table = run_dir.rounds(["dictionary_size"])
    return manifest, table["dictionary_size"][-1].as_py()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    head = f"{'case':<22} {'rounds':>8} {'learner s':>10} {'target':>7} {'loss':>9} {'dict':>5} {'d_eff':>7}"
    print(f"{head} {'peak RSS':>9}")
    for name, learner, overrides, target in CASES:
        runs = []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as tmp:
                runs.append(run_case(learner, overrides, Path(tmp)))
            if isinstance(runs[-1], str):
                print(f"{name:<22} skipped: {runs[-1]}", flush=True)
                break
        else:
            report(name, target, runs)


def report(name: str, target: float, runs: list[tuple[dict, int]]) -> None:
    seconds = statistics.median(m["learner_s"] for m, _ in runs)
    m, size = runs[0]
    print(
        f"{name:<22} {m['rounds']:>8,} {seconds:>10.2f} {target:>7.1f} {m['average_loss']:>9.5f} {size:>5} "
        f"{m['effective_dimension']['value']:>7.1f} "
        f"{m['peak_rss_bytes'] / 2**20:>7.0f} MB",
        flush=True,
    )


if __name__ == "__main__":
    main()
