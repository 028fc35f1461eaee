"""Commands and keys the README and the CLIs' help document, played end to end at small size where no other test
played them (a fault hunt listed them): each asserts what the documentation says the command does."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import call

from helpers import only_run
from okl import config, results
from okl.cli.regret import main as regret_main
from okl.datasets import DATASETS
from okl.regret import COMPARATORS


def test_cfg_job_prints_the_composed_run_and_plays_nothing(okl_run, results_root):
    code, out, err = okl_run("--cfg", "job", "learner=fogd", "sigma=2")
    assert code == 0, err
    assert re.search(r"^learner:\n  name: fogd\n", out, re.M) and re.search(r"^sigma: 2\.0$", out, re.M)
    assert not results_root.exists()


def test_hydra_help_names_hydras_own_options(okl_run, results_root):
    code, out, _ = okl_run("--hydra-help")
    assert code == 0 and "--multirun" in out and "--cfg" in out and not results_root.exists()


def test_the_alternating_environment_plays_one_point_with_alternating_labels(okl_run, results_root):
    """Sketched-KONS §6's scenario, as the README says: the same point, the label alternating."""
    assert okl_run("dataset=alternating", "learner=kons", "n=40", "progress=false")[0] == 0
    rounds = results.load(results_root).sort_values("t")
    y = rounds["y"].to_numpy()
    assert len(y) == 40 and len(np.unique(y)) == 2 and (y[1:] != y[:-1]).all()
    X = np.concatenate([X for X, _ in DATASETS.get("alternating")().chunks()])[:40]
    assert (X[0] == X).all()


def test_the_nystrom_comparator_through_okl_run_and_okl_regret(okl_run, results_root, capsys):
    """comparator=nystrom_krr fills the regret column (cum_loss minus the Nyström ridge's losses), and okl-regret
    --m scores the same run on other centres."""
    keys = ("learner=fogd", "n=400", "progress=false", "comparator=nystrom_krr", "comparator.m=50")
    assert okl_run(*keys)[0] == 0
    run = only_run(results_root)
    rounds, entry = results.load(results_root).sort_values("t"), run.manifest().analyses["regret"]
    X, y = next(DATASETS.get("synthetic")(seed=0).chunks())
    ell, _ = COMPARATORS.get("nystrom_krr")(m=50, sigma=1.0, lam=1.0).losses(X[:400], y[:400])
    np.testing.assert_allclose(rounds["regret"], rounds["cum_loss"] - np.cumsum(ell), rtol=1e-9, atol=1e-9)
    assert entry["comparator"] == "nystrom_krr" and entry["m"] == 50
    regret_main([str(run.path), "--comparator", "nystrom_krr", "--m", "20"])
    out = capsys.readouterr().out
    again = run.manifest().analyses["regret"]
    assert again["m"] == 20 and again["regret"] != entry["regret"] and "nystrom_krr(lam=1.0, m=20" in out


def test_okl_regret_changes_sets_the_segments_of_the_dynamic_regret(okl_run, results_root, capsys):
    assert okl_run("learner=fogd", "dataset.length=300", "dataset.changes=2", "progress=false")[0] == 0
    run = only_run(results_root)
    scores = {}
    for changes in ("2", "0"):
        regret_main([str(run.path), "--comparator", "krr_segments", "--changes", changes])
        scores[changes] = run.manifest().analyses["regret"]
    assert scores["2"]["changes"] == 2 and scores["0"]["changes"] == 0
    krr = COMPARATORS.get("krr")(sigma=1.0, lam=1.0)  # no change: one segment, the static regret against KRR
    X, y = next(DATASETS.get("synthetic")(length=300, changes=2, seed=0).chunks())
    cum = results.load(results_root)["cum_loss"].max()
    assert scores["0"]["regret"] == pytest.approx(cum - krr.losses(X, y)[0].sum(), rel=1e-9)
    assert scores["2"]["regret"] > scores["0"]["regret"]  # three segments fit better than one


def test_a_format_given_on_the_command_line_reads_a_file_whatever_its_name(okl_run, results_root, tmp_path):
    path = tmp_path / "stream.txt"  # LIBSVM by its name
    path.write_text("a,b,y\n" + "".join(f"{i % 7},{i % 3},{0.1 * i}\n" for i in range(60)))
    keys = ("dataset=file", f"dataset.path={path}", "dataset.target=y", "learner=fogd", "progress=false")
    assert okl_run(*keys)[0] == 2
    code, out, err = okl_run(*keys, "dataset.format=csv")
    assert code == 0 and "complete, 60 rounds" in out, err


def test_y_scale_scales_a_files_target_as_documented(okl_run, results_root, tmp_path):
    path = tmp_path / "stream.csv"
    path.write_text("a,y\n" + "".join(f"{i},{3 * i + 10}\n" for i in range(50)))
    keys = ("dataset=file", f"dataset.path={path}", "dataset.target=y", "learner=fogd", "progress=false")
    assert okl_run(*keys, "dataset.y_scale=minmax01")[0] == 0
    y = results.load(results_root)["y"].to_numpy()
    assert y.min() == 0.0 and y.max() == 1.0


def test_the_pkawv_paper_preset_puts_x_in_minus_one_one(okl_run, results_root, mirror, composed):
    """The README's `okl-run dataset=casp dataset.preset=pkawv_paper` (x in [-1, 1], as the paper's text says)."""
    code, out, err = okl_run("dataset=casp", "dataset.preset=pkawv_paper", "learner=fogd", "n=500", "progress=false")
    assert code == 0 and "complete, 500 rounds" in out, err
    for preset, low in (("pkawv_paper", -1.0), ("pkawv", 0.0)):
        plan = config.plan(composed("dataset=casp", f"dataset.preset={preset}"))
        X = np.concatenate([X for X, _ in plan.stream(plan.rounds)])
        assert (X.min(), X.max()) == (low, 1.0), preset


def test_okl_data_fetch_all_fetches_what_it_can_and_names_the_rest(okl_data, no_data, monkeypatch):
    from helpers import write_susy
    from okl.data.catalog import SPECS

    write_susy(no_data, monkeypatch)
    code, out, err = okl_data("fetch", "--all")
    assert code == 1 and "susy/all: 300 rows × 18" in out
    summary = err.strip().splitlines()[-1]
    assert summary.startswith(f"okl-data: {len(SPECS) - 1} of {len(SPECS)} datasets not fetched: ")
    assert "susy" not in summary


def test_okl_tune_seed_sets_the_samplers_proposals(results_root, tmp_path, capsys):
    from okl.cli import tune as tune_cli

    path = tmp_path / "stream.csv"
    g = np.random.default_rng(0)
    X = g.random((300, 2))
    path.write_text("a,b,y\n" + "".join(f"{a},{b},{np.sin(3 * a) + b}\n" for a, b in X))
    proposals = {}
    for seed, study in ((1, "a"), (1, "b"), (2, "c")):
        argv = [
            "dataset=file", f"dataset.path={path}", "dataset.target=y", "learner=fogd", "sigma=loguniform(0.1,10)",
            "--prefix", "150", "--trials", "2", "--pruner", "none", "--seed", str(seed), "--study", study,
        ]  # fmt: skip
        code, out, err = call(lambda argv=argv: tune_cli.main(argv), capsys)
        assert code == 0, err
        proposals[study] = re.findall(r"trial #\d+: (sigma=[\d.e+-]+)", out)
    assert proposals["a"] == proposals["b"] != proposals["c"] and len(proposals["a"]) == 2
