"""Hyperparameter search (Optuna's Hydra sweeper, the optuna extra): the README's study, its objective (the
run's average loss), a diverging trial, reuse of complete runs, and the tuning preset on a prefix of casp."""

import math
import re
import shlex
from pathlib import Path

import yaml

from okl import results

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_command(marker: str) -> list[str]:
    """The arguments of the README's okl-run line that contains ``marker``."""
    (line,) = [line for line in README.read_text().splitlines() if marker in line and line.startswith("okl-run")]
    return shlex.split(line.split("  #")[0])[1:]


def study(root: Path) -> dict:
    (path,) = root.glob(".sweeps/*/optimization_results.yaml")
    return yaml.safe_load(path.read_text())


def test_the_readmes_study_minimises_the_runs_average_loss_and_reuses_them(okl_run, results_root):
    argv = readme_command("hydra/sweeper=optuna")
    assert "hydra.sweeper.n_trials=4" in argv
    code, out, err = okl_run(*argv)
    assert code == 0, err
    runs = results.runs(results_root)
    assert len(runs) == 4 and (runs.status == "complete").all()
    best = study(results_root)
    assert best["best_value"] == runs.average_loss.min()
    (winner,) = runs[runs.average_loss == runs.average_loss.min()].to_dict("records")
    assert best["best_params"]["sigma"] == winner["learner.sigma"]
    assert best["best_params"]["lam"] == winner["learner.lam"]

    code, again, err = okl_run(*argv)  # the seeded sampler proposes the same trials: their runs are reused
    assert code == 0, err
    assert again.count("already complete") == 4
    assert len(results.runs(results_root)) == 4


def test_a_study_kept_in_a_database_goes_on_where_it_stopped(okl_run, results_root, tmp_path):
    storage = f"hydra.sweeper.storage=sqlite:///{tmp_path / 'study.db'}"
    argv = (
        "-m",
        "hydra/sweeper=optuna",
        storage,
        "hydra.sweeper.study_name=s",
        "hydra.sweeper.n_trials=2",
        "hydra.sweeper.sampler.seed=0",
        "sigma=interval(0.5,4)",
        "n=300",
    )
    for _ in range(2):
        code, _, err = okl_run(*argv)
        assert code == 0, err
    import optuna

    trials = optuna.load_study(study_name="s", storage=storage.split("=", 1)[1]).trials
    assert len(trials) == 4 and all(t.state.name == "COMPLETE" for t in trials)
    # the same sampler seed proposes its first trials again (README): recorded twice, played once
    assert len({t.params["sigma"] for t in trials}) == 2 and len(results.runs(results_root)) == 2


def test_a_trial_that_diverges_counts_as_infinite_and_the_study_goes_on(okl_run, results_root):
    code, _, err = okl_run(
        "-m",
        "hydra/sweeper=optuna",
        "hydra/sweeper/sampler=grid",
        "hydra.sweeper.n_trials=2",
        "learner=fogd",
        "learner.D=20",
        "learner.eta=choice(0.05,1000)",
        "n=500",
    )
    assert code == 0, err
    assert re.search(r"okl-run: fogd predicted .* at round [\d,]+, a non-finite loss.*: the trial counts as \+inf", err)
    runs = results.runs(results_root).set_index("learner.eta")
    assert runs.loc[1000.0, "status"] == "failed" and runs.loc[0.05, "status"] == "complete"
    assert study(results_root)["best_value"] == runs.loc[0.05, "average_loss"]
    assert math.isfinite(study(results_root)["best_value"])


def test_a_failed_run_still_stops_a_grid_sweep(okl_run):
    code, _, err = okl_run("-m", "learner=fogd", "learner.D=20", "learner.eta=1000", "n=500")
    assert code == 2 and "a non-finite loss" in err


def test_the_tuning_preset_studies_a_prefix_of_casp(okl_run, results_root, mirror):
    code, _, err = okl_run("-m", "experiment=tune_pkawv_casp", "hydra.sweeper.n_trials=2", "dataset.length=300")
    assert code == 0, err
    runs = results.runs(results_root)
    assert len(runs) == 2 and (runs.planned_rounds == 300).all() and (runs["learner.M"] == 2).all()
    assert runs["learner.sigma"].between(0.1, 10).all() and runs["learner.lam"].between(1e-4, 10).all()
    code, out, err = okl_run("experiment=tune_pkawv_casp", "dataset.skip=300", "dataset.length=200", "sigma=0.7")
    assert code == 0, err
    report = results.runs(results_root, status="complete").query("`dataset.skip` == 300")
    assert len(report) == 1 and report.planned_rounds.iloc[0] == 200
