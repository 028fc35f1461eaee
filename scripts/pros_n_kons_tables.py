"""Tables 1-2 of pros_n_kons_calandriello2017 on the datasets we have, beside the paper's numbers.

Each (dataset, learner) runs over ``--seeds`` seeds (each seed reshuffles the stream and redraws the
KORS coins) through the presets ``experiment=pros_n_kons_regression`` / ``_classification``; the
table shows mean ± std of the average loss (square loss; % online error for classification), the
final model size (#SV: dictionary or features) and the learner seconds per run. Complete runs are
reused from the results root.

Learner settings (§5): β = 1, ε = 0.5, J_max = 100; regression α = γ = 1 with the square loss;
classification the hinge loss with α = γ = 0.01 (ijcnn1 also α = γ = 1), C = 10 and η = 0.1
(``HINGE_C``, ``HINGE_ETA``). FOGD and NOGD use the paper's budgets (#SV 30 for regression; 400 and 100
for classification), η = 1/√n for regression and η = 1 for classification (``FIRST_ORDER_ETA``; the
paper copies their scores from Lu et al.). The presets use σ = 4 and KORS's ``code`` weights where the
paper states σ = 8 (the presets explain why: the paper's #SV and BATCH losses are reproduced with
them); ``--sigma 8 --kors eq4`` runs the text's settings.

    python scripts/pros_n_kons_tables.py [--seeds 5] [--datasets casp cadata]
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from hydra import compose, initialize_config_module

from okl import config, runner
from okl.dictionary.kors import WEIGHTS

# dataset: (task, paper rows {learner: (loss mean, loss std, #SV, seconds)})
PAPER = {
    "parkinson": ("regression", {"fogd": (0.04909, 0.00020, 30, None), "nogd": (0.04896, 0.00068, 30, None),
                                 "pros_n_kons": (0.05798, 0.00136, 18, 5.16), "con_kons": (0.05696, 0.00129, 18, 5.21),
                                 "b_kons": (0.05795, 0.00172, 18, 5.35), "kors_batch": (0.04535, 0.00002, None, None)}),
    "cpusmall": ("regression", {"fogd": (0.02577, 0.00050, 30, None), "nogd": (0.02559, 0.00024, 30, None),
                                "pros_n_kons": (0.02494, 0.00141, 20, 7.28), "con_kons": (0.02269, 0.00164, 20, 7.40),
                                "b_kons": (0.02496, 0.00177, 20, 7.37), "kors_batch": (0.01090, 0.00082, None, None)}),
    "cadata": ("regression", {"fogd": (0.04097, 0.00015, 30, None), "nogd": (0.03983, 0.00018, 30, None),
                              "pros_n_kons": (0.03095, 0.00110, 20, 18.59), "con_kons": (0.02850, 0.00174, 19, 18.45),
                              "b_kons": (0.03095, 0.00118, 19, 18.65), "kors_batch": (0.02202, 0.00002, None, None)}),
    "casp": ("regression", {"fogd": (0.08021, 0.00031, 30, None), "nogd": (0.07844, 0.00008, 30, None),
                            "pros_n_kons": (0.06773, 0.00105, 21, 40.73), "con_kons": (0.06832, 0.00315, 20, 40.91),
                            "b_kons": (0.06775, 0.00067, 21, 41.13), "kors_batch": (0.06100, 0.00003, None, None)}),
    "ijcnn1": ("binary", {"fogd": (9.06, 0.05, 400, None), "nogd": (9.55, 0.01, 100, None),
                          "pros_n_kons": (10.73, 0.12, 436, None), "con_kons": (6.23, 0.18, 432, None),
                          "b_kons": (4.85, 0.08, 100, None), "kors_batch": (5.61, 0.01, None, None)}),
    "cod_rna": ("binary", {"fogd": (10.30, 0.10, 400, None), "nogd": (13.80, 2.10, 100, None),
                           "pros_n_kons": (4.91, 0.04, 111, 1003.82), "con_kons": (5.81, 1.96, 111, 987.33),
                           "b_kons": (4.57, 0.05, 100, 147.22), "kors_batch": (3.61, 0.01, None, None)}),
}  # fmt: skip


# The feasible bound C of the KONS family under the hinge loss (the paper does not give it). C = 1 confines
# every prediction to the hinge's margin, so the oblique projection acts on most rounds and undoes the
# last step: measured on cod-rna (seed 0, the presets' σ = 4 and KORS weights, η = 1), B-KONS errs 14.2% with
# C = 1 and 4.8% with C = 10 or 100 (paper: 4.57%), CON-KONS 19.8% and 3.6% (paper: 5.81%).
HINGE_C = 10.0

# The step η of the KONS family under the hinge (σ = 0, outside Theorem 1; the learners' default is η = 1,
# see okl/learners/newton/pros_n_kons.py). Measured over 3 seeds at C = 10 (PROS-N-KONS, CON-KONS, B-KONS; paper
# 10.73, 6.23, 4.85 on ijcnn1 and 4.91, 5.81, 4.57 on cod-rna): η = 1 gives 9.78, 6.01, 6.47 and 5.27,
# 3.61, 4.83; η = 0.3 gives 10.09, 4.70, 5.72 and 4.75, 3.58, 4.46; η = 0.1 gives 10.72, 4.45, 5.54 and
# 5.03, 3.60, 4.66, the closest on PROS-N-KONS and B-KONS.
HINGE_ETA = 0.1

# FOGD and NOGD under the hinge: the paper copies their scores from Lu et al., who tuned the step. With
# η = 1/√n both stay at the majority rate on the [0, 1]-scaled data (cod-rna 33.3% at σ = 8); on cod-rna
# (seed 0, σ = 4) FOGD errs 10.2 / 7.2 / 8.9% with η = 0.1 / 1 / 10 and NOGD 7.1 / 7.1 / 7.9% with
# η = 0.3 / 1 / 3 (paper: 10.3 and 13.8). Regression keeps η = 1/√n.
FIRST_ORDER_ETA = 1.0


def overrides(task: str, learner: str, small: float) -> list[str]:
    """The learner's own keys for the task (§5)."""
    classify = [] if task == "regression" else ["learner.loss=hinge", f"learner.eta={FIRST_ORDER_ETA}"]
    if learner == "fogd":
        return ["learner.D=15" if task == "regression" else "learner.D=200", *classify]
    if learner == "nogd":
        return [f"learner.J={30 if task == 'regression' else 100}", *classify]
    keys = [f"learner.alpha={small}", f"learner.gamma={small}"]
    if learner == "kors_batch":
        return keys + ([] if task == "regression" else ["learner.loss=squared_hinge"])
    hinge = ["learner.loss=hinge", f"learner.C={HINGE_C}", f"learner.eta={HINGE_ETA}"]
    return keys + ([] if task == "regression" else hinge)


def run(
    dataset: str, task: str, learner: str, seed: int, small: float, settings: list[str]
) -> tuple[float, int, float]:
    preset = "pros_n_kons_regression" if task == "regression" else "pros_n_kons_classification"
    with initialize_config_module(config_module="okl.conf", version_base="1.3"):
        keys = [f"experiment={preset}", f"dataset={dataset}", f"learner={learner}", f"seed={seed}", "progress=false"]
        cfg = compose("config", overrides=[*keys, *settings, *overrides(task, learner, small)])
    plan = config.plan(cfg)
    outcome = runner.execute(plan, progress=False)
    if outcome.status != "complete":  # interrupted, failed, or another process is running it
        raise SystemExit(f"pros_n_kons_tables: {outcome.summary(plan)}")
    size = int(outcome.run.rounds(["model_size"])["model_size"][-1].as_py())
    scale = 100.0 if task == "binary" else 1.0
    return outcome.average_loss * scale, size, outcome.run.manifest()["learner_s"]  # also for reused runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--datasets", nargs="+", default=["casp", "cadata", "cpusmall", "parkinson", "cod_rna"])
    parser.add_argument(
        "--learners", nargs="+", default=["fogd", "nogd", "pros_n_kons", "con_kons", "b_kons", "kors_batch"]
    )
    parser.add_argument("--sigma", type=float, help="bandwidth (default: the presets' σ = 4)")
    parser.add_argument("--kors", choices=sorted(WEIGHTS), help="KORS weights (default: the presets' code)")
    args = parser.parse_args()
    settings = [f"{key}={value}" for key in ("sigma", "kors") if (value := getattr(args, key)) is not None]
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    for dataset in args.datasets:
        task, paper = PAPER[dataset]
        for small in [1.0] if task == "regression" else ([0.01, 1.0] if dataset == "ijcnn1" else [0.01]):
            unit = "avg. squared loss" if task == "regression" else "% error"
            print(f"\n{dataset} (alpha = gamma = {small}) — {unit}: ours over {args.seeds} seeds | paper")
            print(f"{'learner':<16} {'ours':>22} {'#SV':>6} {'s/run':>7} | {'paper':>22} {'#SV':>5} {'s':>8}")
            for learner in args.learners:
                rows = np.array([run(dataset, task, learner, seed, small, settings) for seed in range(args.seeds)])
                mean, std = rows[:, 0].mean(), rows[:, 0].std()
                p = paper.get(learner) if small == (1.0 if task == "regression" else 0.01) else None
                ref = f"{p[0]:.5g} ± {p[1]:.2g}" if p else "—"
                sv = f"{p[2]}" if p and p[2] else "—"
                secs = f"{p[3]:.1f}" if p and p[3] else "—"
                ours = f"{mean:>12.5g} ± {std:<8.2g} {rows[:, 1].mean():>6.0f} {rows[:, 2].mean():>7.2f}"
                print(f"{learner:<16} {ours} | {ref:>22} {sv:>5} {secs:>8}", flush=True)


if __name__ == "__main__":
    main()
