"""okl-results export: one runs table beside the rounds, and MLflow runs read back through MLflow's client."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import call

from okl import results
from okl.cli import results as results_cli


@pytest.fixture
def two_runs(okl_run, results_root):
    for args in (("learner=fogd", "learner.eta=0.1"), ("learner=pkawv_taylor",)):
        assert okl_run(*args, "n=1500", "progress=false")[0] == 0
    return results_root


def test_the_runs_table_is_one_row_per_run_beside_the_rounds(two_runs, capsys):
    code, out, err = call(lambda: results_cli.main(["export", "--format", "csv"]), capsys)
    assert code == 0, err and out.strip() == f"runs table: {two_runs / 'runs.csv'}"
    table = pd.read_csv(two_runs / "runs.csv")
    runs = results.runs(two_runs)
    assert sorted(table.run) == sorted(runs.run) and set(table.rounds) == {1500}
    assert table.set_index("run").average_loss.to_dict() == pytest.approx(runs.set_index("run").average_loss.to_dict())
    assert json.loads(table.config[0])["n"] == 1500  # nested values as JSON text
    code, _, _ = call(lambda: results_cli.main(["export"]), capsys)
    assert code == 0 and len(pd.read_parquet(two_runs / "runs.parquet")) == 2


def test_mlflow_holds_each_run_once_with_its_settings_metrics_and_loss_curve(two_runs, capsys):
    from mlflow import MlflowClient

    for again in (False, True):
        code, out, err = call(lambda: results_cli.main(["export", "--mlflow"]), capsys)
        assert code == 0, err
        assert ("MLflow: 0 runs logged, 2 already there" if again else "MLflow: 2 runs logged, 0 already there") in out
    client = MlflowClient(f"sqlite:///{two_runs.resolve() / 'mlflow.db'}")
    (experiment,) = [e for e in client.search_experiments() if e.name == "okl"]
    logged = {r.data.tags["okl.run_id"]: r for r in client.search_runs([experiment.experiment_id])}
    runs = results.runs(two_runs).set_index("run")
    assert set(logged) == set(runs.index)
    fogd = next(r for r in logged.values() if r.data.tags["mlflow.runName"].startswith("fogd"))
    row = runs.loc[fogd.data.tags["okl.run_id"]]
    assert fogd.data.params["learner.eta"] == "0.1" and fogd.data.params["seed"] == "0"
    assert fogd.data.metrics["average_loss"] == pytest.approx(row.average_loss)
    curve = client.get_metric_history(fogd.info.run_id, "loss_curve")
    rounds = results.load(two_runs, run=row.name).sort_values("t")
    assert len(curve) == 1000 and max(m.step for m in curve) == 1500
    at = {m.step: m.value for m in curve}
    np.testing.assert_allclose([at[t] for t in (1, 1500)], rounds.cum_loss.to_numpy()[[0, -1]] / [1, 1500])


def test_a_runs_table_that_cannot_be_written_is_one_line(two_runs, capsys):
    """A read-only or full results root gave pyarrow's OSError traceback (exit 1); here runs.parquet is a folder."""
    (two_runs / "runs.parquet").mkdir()
    code, _, err = call(lambda: results_cli.main(["export"]), capsys)
    assert code == 2 and err.startswith("okl-results: error: cannot write ") and err.count("\n") == 1, err
    assert f"cannot write {two_runs / 'runs.parquet'}: " in err  # the table's name, not its temporary file's
    assert "from a results root you can write to (--root)" in err


def test_nothing_to_export_is_one_line(results_root, capsys):
    code, out, err = call(lambda: results_cli.main(["export"]), capsys)
    assert code == 2 and err.startswith("okl-results: error: no results root at ") and err.count("\n") == 1


def test_a_run_of_a_drawn_artefact_carries_its_figure(okl_run, results_root, tmp_path, capsys):
    from mlflow import MlflowClient

    from okl.reproduce import catalog, sweep

    run = sweep.expand("pkawv_taylor_convergence", ["seed=0"])[2]
    assert okl_run(*run.overrides, "progress=false")[0] == 0
    assert okl_run("learner=fogd", "n=300", "progress=false")[0] == 0  # of no artefact
    figures = tmp_path / "figures"
    figures.mkdir()
    (figures / "pkawv_taylor_convergence.png").write_bytes(b"\x89PNG drawn by okl-reproduce")
    for wrong, why in ((tmp_path / "nowhere", "no such folder"), (tmp_path, "no artefact's figure")):
        argv = ["export", "--mlflow", "--figures", str(wrong)]
        code, _, err = call(lambda argv=argv: results_cli.main(argv), capsys)
        assert code == 2 and err.startswith(f"okl-results: error: --figures {wrong}: {why}"), err
        assert err.count("\n") == 1  # it logged every run and attached nothing, without a word
    smoke = tmp_path / "smoke"  # okl-reproduce --smoke's figure, of its smoke runs (n=200, seed 0): none was attached
    smoke.mkdir()
    (smoke / "pkawv_taylor_convergence.png").write_bytes(b"\x89PNG drawn by okl-reproduce --smoke")
    from okl.reproduce.pipeline import Options

    artefact = catalog.load("pkawv_taylor_convergence")
    smoke_run = sweep.expand(artefact.name, Options.make(None, True).overrides_of(artefact))[2]
    assert okl_run(*smoke_run.overrides, "progress=false")[0] == 0
    (smoke / "pkawv_taylor_convergence.json").write_text(json.dumps({"run_ids": [smoke_run.plan.run_id]}))
    elsewhere = f"sqlite:///{tmp_path / 'smoke.db'}"
    code, out, err = call(lambda: results_cli.main(["export", "--mlflow", elsewhere, "--figures", str(smoke)]), capsys)
    assert code == 0 and "MLflow: 3 runs logged, 0 already there, 1 of them with their artefact's figure" in out, err
    client = MlflowClient(elsewhere)
    (experiment,) = [e for e in client.search_experiments() if e.name == "okl"]
    logged = {r.data.tags["okl.run_id"]: r.info.run_id for r in client.search_runs([experiment.experiment_id])}
    assert [a.path for a in client.list_artifacts(logged[smoke_run.plan.run_id])] == ["pkawv_taylor_convergence.png"]
    code, out, err = call(lambda: results_cli.main(["export", "--mlflow", "--figures", str(figures)]), capsys)
    assert code == 0 and "MLflow: 3 runs logged, 0 already there, 1 of them with their artefact's figure" in out, err
    client = MlflowClient(f"sqlite:///{results_root.resolve() / 'mlflow.db'}")
    (experiment,) = [e for e in client.search_experiments() if e.name == "okl"]
    logged = {r.data.tags["okl.run_id"]: r.info.run_id for r in client.search_runs([experiment.experiment_id])}
    assert [a.path for a in client.list_artifacts(logged[run.plan.run_id])] == ["pkawv_taylor_convergence.png"]
    assert [a.path for a in client.list_artifacts(logged[smoke_run.plan.run_id])] == []  # figures/ is not smoke's
    other = next(m for okl_id, m in logged.items() if okl_id not in (run.plan.run_id, smoke_run.plan.run_id))
    assert client.list_artifacts(other) == []


def test_a_run_an_interrupted_export_left_unfinished_is_logged_again(two_runs, capsys, monkeypatch):
    """Ctrl-C while logging a run printed a traceback and left that MLflow run RUNNING, half logged; later exports
    counted it "already there" for good. The interrupt is one line, and the next export logs the run again."""
    from mlflow import MlflowClient

    from okl import tracking

    curve = tracking._curve
    monkeypatch.setattr(tracking, "_curve", lambda *a: (_ for _ in ()).throw(KeyboardInterrupt))
    code, _, err = call(lambda: results_cli.main(["export", "--mlflow"]), capsys)
    assert code == 130 and err.endswith("\nokl-results: interrupted\n") and "Traceback" not in err  # MLflow logs first
    monkeypatch.setattr(tracking, "_curve", curve)
    code, out, err = call(lambda: results_cli.main(["export", "--mlflow"]), capsys)
    assert code == 0 and "MLflow: 2 runs logged, 0 already there" in out, err
    client = MlflowClient(f"sqlite:///{two_runs.resolve() / 'mlflow.db'}")
    (experiment,) = [e for e in client.search_experiments() if e.name == "okl"]
    assert sorted(r.info.status for r in client.search_runs([experiment.experiment_id])) == ["FINISHED", "FINISHED"]
