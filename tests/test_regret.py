"""Regret: comparators against direct formulas, the bounds of Proposition 1 and Theorem 3
(pkawv_jezequel2019), the sink's column against a recomputation, and okl-regret."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers import only_run
from okl import results
from okl.cli.regret import main as regret_main
from okl.datasets import DATASETS
from okl.datasets.adversary import Adversary
from okl.features.taylor import TaylorFeatures
from okl.kernels import Kernel
from okl.learners import LEARNERS
from okl.linalg.ridge_oracle import RidgeOracle
from okl.regret import COMPARATORS
from okl.store import RunDir, find

LAM = 1.0


def ridge(X, y, lam=LAM, sigma=1.0):
    """Direct kernel ridge: (α, fitted values, λ||f||²)."""
    K = Kernel("gaussian", sigma)(X, X)
    alpha = np.linalg.solve(K + lam * np.eye(len(y)), y)
    return alpha, K @ alpha, lam * alpha @ K @ alpha


def random_sequence(n=60, d=3, seed=0):
    g = np.random.default_rng(seed)
    return g.uniform(-1, 1, (n, d)), g.uniform(-1, 1, n)


def adversarial_sequence(learner, n=40, d=3):
    """Play ``learner`` against the greedy adversary; return (X, y, predictions)."""
    env = Adversary(length=n, d=d, lam=LAM)
    y_hat = [learner.predict_learn_block(X, y)[0] for X, y in env.play(learner.predict_many, n)]
    X, y = env.sequence
    return X, y, np.array(y_hat)


def test_krr_losses_and_penalty_equal_a_direct_solve():
    X, y = random_sequence()
    ell, penalty = COMPARATORS.get("krr")(sigma=1.0, lam=LAM).losses(X, y)
    _, fitted, direct_penalty = ridge(X, y)
    np.testing.assert_allclose(ell, (fitted - y) ** 2, rtol=1e-9, atol=1e-13)
    assert penalty == pytest.approx(direct_penalty, rel=1e-10)


def test_oracle_prefix_equals_a_refit_at_every_t():
    X, y = random_sequence(n=40)
    ell, _ = COMPARATORS.get("oracle_prefix")(sigma=1.0, lam=LAM).losses(X, y)
    direct = [np.sum((ridge(X[:t], y[:t])[1] - y[:t]) ** 2) for t in range(1, 41)]
    np.testing.assert_allclose(np.cumsum(ell), direct, rtol=1e-9)


def test_nystrom_krr_with_every_point_is_krr_and_fewer_centres_cost_more():
    X, y = random_sequence(n=50)
    exact, exact_penalty = COMPARATORS.get("krr")(sigma=1.0, lam=LAM).losses(X, y)
    full, full_penalty = COMPARATORS.get("nystrom_krr")(sigma=1.0, lam=LAM, m=50).losses(X, y)
    np.testing.assert_allclose(full, exact, rtol=1e-7, atol=1e-12)
    assert full_penalty == pytest.approx(exact_penalty, rel=1e-7)
    few, few_penalty = COMPARATORS.get("nystrom_krr")(sigma=1.0, lam=LAM, m=5).losses(X, y)
    # a restricted span: its penalised objective cannot beat the exact minimiser's
    assert few.sum() + few_penalty > exact.sum() + exact_penalty


def test_ridge_oracle_candidates_and_updates_equal_refits():
    X, y = random_sequence(n=30)
    oracle = RidgeOracle(3, Kernel("gaussian", 1.0), LAM)
    for t in range(29):
        oracle.add(X[t], y[t])
    candidates = np.random.default_rng(1).uniform(-1, 1, (4, 3))
    terms, _ = oracle.terms(candidates)
    for c, x in enumerate(candidates):
        for label in (-1.0, 0.3):
            Xc, yc = np.vstack([X[:29], x]), np.append(y[:29], label)
            direct = np.sum((ridge(Xc, yc)[1] - yc) ** 2)
            got = oracle.loss_after(terms, label)[c]
            assert got == pytest.approx(direct, rel=1e-9)
    K = Kernel("gaussian", 1.0)(X[:29], X[:29])
    np.testing.assert_allclose(oracle.W, np.linalg.inv(K + LAM * np.eye(29)), rtol=1e-8, atol=1e-10)


def prop1_bound(X, y, penalty, lam=LAM):
    """λ||f||² + B² Σ_k log(1 + λ_k(K)/λ) (Proposition 1), B = max |y|."""
    eig = np.clip(np.linalg.eigvalsh(Kernel("gaussian", 1.0)(X, X)), 0, None)
    return penalty + np.max(np.abs(y)) ** 2 * np.sum(np.log1p(eig / lam))


@pytest.mark.parametrize("kind", ["random", "adversarial"])
def test_kernel_awv_regret_is_within_proposition_1(kind):
    learner = LEARNERS.get("kernel_awv")(3, sigma=1.0, lam=LAM)
    if kind == "random":
        X, y = random_sequence()
        y_hat = learner.predict_learn_block(X, y)
    else:
        X, y, y_hat = adversarial_sequence(learner)
    for t in (10, 25, len(y)):  # the bound holds for every n, with f the ridge fit on the first n rounds
        _, fitted, penalty = ridge(X[:t], y[:t])
        regret = np.sum((y_hat[:t] - y[:t]) ** 2) - np.sum((fitted - y[:t]) ** 2)
        bound = prop1_bound(X[:t], y[:t], penalty)
        assert 0 < regret <= bound


@pytest.mark.parametrize("kind", ["random", "adversarial"])
def test_pkawv_taylor_regret_is_within_theorem_3_with_measured_mu(kind):
    """Theorem 3: R_n(f) <= λ||f||² + B² Σ log(1 + λ_j(K)/λ) + B² (μ + λ) μ n / λ², with
    μ = ||(I − P)C_n^{1/2}||² = λ_max(K − ΦΦᵀ) for the Taylor basis Φ (orthonormal in H, Lemma 11)."""
    M = 2
    learner = LEARNERS.get("pkawv_taylor")(3, sigma=1.0, lam=LAM, M=M)
    if kind == "random":
        X, y = random_sequence()
        y_hat = learner.predict_learn_block(X, y)
    else:
        X, y, y_hat = adversarial_sequence(learner)
    n, B = len(y), np.max(np.abs(y))
    Phi = TaylorFeatures(3, M, 1.0).transform(X)
    mu = np.linalg.eigvalsh(Kernel("gaussian", 1.0)(X, X) - Phi @ Phi.T)[-1]
    _, fitted, penalty = ridge(X, y)
    regret = np.sum((y_hat - y) ** 2) - np.sum((fitted - y) ** 2)
    bound = prop1_bound(X, y, penalty) + B**2 * (mu + LAM) * mu * n / LAM**2
    assert mu > 0 and regret <= bound
    assert regret > prop1_bound(X, y, penalty) or kind == "random"  # adversarially, the μ term is needed


def read_run(root, learner, dataset):
    run = only_run(root, learner=learner, dataset=dataset, seed=0)
    return run.manifest(), pd.read_parquet(run.rounds_path).sort_values("t")


def test_sink_regret_equals_a_direct_recomputation(okl_run, results_root):
    code, out, err = okl_run(
        "learner=pkrr_taylor", "n=300", "comparator=krr", "progress=false", "sink.part_rows=128", "block=64"
    )
    assert code == 0, err
    assert "regret" in out
    manifest, rounds = read_run(results_root, "pkrr_taylor", "synthetic")
    X, y = next(DATASETS.get("synthetic")(seed=0).chunks())
    X, y = X[:300], y[:300]
    _, fitted, penalty = ridge(X, y)
    expected = np.cumsum((rounds["y_hat"] - y) ** 2) - np.cumsum((fitted - y) ** 2)
    np.testing.assert_allclose(rounds["regret"], expected, rtol=1e-9, atol=1e-9)
    assert manifest.analyses["regret"]["comparator"] == "krr" and manifest.analyses["regret"][
        "penalty"
    ] == pytest.approx(penalty)
    assert len(manifest.parts) == 3  # every part was rewritten


def test_okl_regret_scores_a_finished_run_and_reuses_the_comparator(okl_run, results_root, capsys):
    assert okl_run("learner=fogd", "n=200", "progress=false")[0] == 0
    assert okl_run("learner=pkrr_taylor", "n=200", "progress=false")[0] == 0
    _, before = read_run(results_root, "fogd", "synthetic")
    assert before["regret"].isna().all()
    runs = [str(run.path) for run in find(results_root, dataset="synthetic", seed=0)]
    regret_main([*runs, "--comparator", "oracle_prefix"])
    out = capsys.readouterr().out.splitlines()
    assert "oracle_prefix" in out[0] and "cached" not in out[0] and "cached" in out[1]
    X, y = next(DATASETS.get("synthetic")(seed=0).chunks())
    direct = np.array([np.sum((ridge(X[:t], y[:t])[1] - y[:t]) ** 2) for t in (50, 200)])
    for learner in ("fogd", "pkrr_taylor"):
        manifest, rounds = read_run(results_root, learner, "synthetic")
        cum = rounds["cum_loss"].to_numpy()[[49, 199]]
        np.testing.assert_allclose(rounds["regret"].to_numpy()[[49, 199]], cum - direct, rtol=1e-9)
        assert manifest.analyses["regret"]["comparator"] == "oracle_prefix"


def test_okl_regret_leaves_a_run_another_live_process_holds(okl_run, results_root, capsys):
    """okl-regret wrote a run's parts without its lock: scoring a timed-out run that an okl-run was resuming (a
    larger timeout_s) ended in pyarrow's traceback, the run complete with a regret column in its first parts only
    and no regret entry. It holds the run's lock as it scores, and a run another live process holds is one line."""
    import json
    import os

    from okl.store.lock import identity
    from okl.system import process_start

    assert okl_run("learner=fogd", "n=200", "progress=false")[0] == 0
    run = only_run(results_root)
    live = {**identity(), "pid": os.getppid(), "start": process_start(os.getppid())}  # a live process, not us
    run.lock_path.write_text(json.dumps(live))
    with pytest.raises(SystemExit) as exc:
        regret_main([str(run.path)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1
    assert f"is held by process {os.getppid()} on {live['host']}, which plays, analyses or scores it" in err
    assert "regret" not in run.manifest().analyses and run.rounds(["regret"])["regret"].null_count == 200
    run.lock_path.unlink()
    regret_main([str(run.path)])
    assert "regret" in run.manifest().analyses and run.rounds(["regret"])["regret"].null_count == 0
    assert not run.lock_path.exists()  # released


def test_the_regret_column_does_not_depend_on_the_environments_blas_threads(okl_run, tmp_path, monkeypatch, capsys):
    """The rounds ran on one BLAS thread, the post-run regret and okl-regret on as many as OPENBLAS_NUM_THREADS said:
    the same config and seed gave regret columns that differed in their last bits from one shell to another."""
    import threadpoolctl

    def regret(root, threads):
        monkeypatch.setenv("OKL_RESULTS", str(root))
        with threadpoolctl.threadpool_limits(threads):  # as a shell with OPENBLAS_NUM_THREADS=threads
            assert okl_run("learner=fogd", "n=2000", "comparator=krr", "progress=false")[0] == 0
            column = only_run(root).rounds(["regret"])["regret"].to_numpy()
            regret_main([str(only_run(root).path), "--lam", "0.5"])
        return column, only_run(root).rounds(["regret"])["regret"].to_numpy()

    one, two = regret(tmp_path / "one", 1), regret(tmp_path / "two", 2)
    capsys.readouterr()
    np.testing.assert_array_equal(one[0], two[0])  # okl-run's
    np.testing.assert_array_equal(one[1], two[1])  # okl-regret's


def test_comparator_errors_are_one_line(okl_run, tmp_path, capsys):
    code, _, err = okl_run("dataset=synthetic", "dataset.task=binary", "comparator=krr", "n=50")
    assert code == 2 and "regression" in err and len(err.strip().splitlines()) == 1
    code, _, err = okl_run("comparator=ridge", "n=50")
    assert code == 2 and "unknown comparator 'ridge'" in err
    with pytest.raises(SystemExit) as exc:
        regret_main([str(tmp_path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "no run at" in err and len(err.strip().splitlines()) == 1


def test_krr_too_large_for_memory_says_what_to_use(monkeypatch):
    """The matrix may take half the available memory: one that took more than half said "needs 11.9 GiB but 20.2 GiB are
    available", refusing it for no reason it gave."""
    monkeypatch.setattr("okl.system.available_memory", lambda: 1000)
    X, y = random_sequence(n=50)
    with pytest.raises(Exception, match="nystrom_krr"):
        COMPARATORS.get("krr")(sigma=1.0, lam=LAM).losses(X, y)
    monkeypatch.setattr("okl.system.available_memory", lambda: 30_000)  # the 50×50 matrix's 20,000 bytes fit, not twice
    with pytest.raises(Exception, match="the 50×50 kernel matrix .*, more than half the .* available"):
        COMPARATORS.get("krr")(sigma=1.0, lam=LAM).losses(X, y)


def test_okl_run_with_a_comparator_on_a_complete_run_only_scores_it(okl_run, results_root):
    assert okl_run("learner=fogd", "n=150", "progress=false")[0] == 0
    code, out, err = okl_run("learner=fogd", "n=150", "progress=false", "comparator=krr")
    assert code == 0, err
    assert "already complete, regret" in out and "(krr)" in out
    manifest, rounds = read_run(results_root, "fogd", "synthetic")
    assert manifest.analyses["regret"]["comparator"] == "krr" and rounds["regret"].notna().all()
    code, out, _ = okl_run("learner=fogd", "n=150", "progress=false", "comparator=krr")
    again, _ = read_run(results_root, "fogd", "synthetic")
    assert code == 0 and "(krr)" in out and again.analyses["regret"] == manifest.analyses["regret"]  # not recomputed


def test_dynamic_regret_against_the_streams_segments(okl_run, results_root, capsys):
    """comparator=krr_segments takes its segments from the dataset (3 of 100 rounds in a 300-round
    stream, of which the run plays 200), and okl-regret finds the same comparator in the cache."""
    overrides = ["dataset.length=300", "dataset.changes=2", "comparator=krr_segments", "sigma=0.7", "lam=0.3"]
    assert okl_run("learner=raker", "n=200", "progress=false", *overrides)[0] == 0
    manifest, rounds = read_run(results_root, "raker", "synthetic")
    X, y = next(DATASETS.get("synthetic")(length=300, changes=2, seed=0).chunks())
    krr = COMPARATORS.get("krr")(sigma=0.7, lam=0.3)
    ell = np.concatenate([krr.losses(X[a : a + 100], y[a : a + 100])[0] for a in (0, 100)])
    expected = np.cumsum((rounds["y_hat"] - y[:200]) ** 2) - np.cumsum(ell)
    np.testing.assert_allclose(rounds["regret"], expected, rtol=1e-9, atol=1e-9)
    regret_main([str(next(results_root.glob("learner=raker/*/*/run=*"))), "--comparator", "krr_segments"])
    assert "cached" in capsys.readouterr().out


def test_okl_regret_refuses_a_run_whose_files_changed_since(okl_run, results_root, tmp_path, no_data, capsys):
    """A CSV's feature columns shuffled after the run, its labels kept: the regret was scored against other inputs
    (11.01 became 2.72) and the run's column rewritten; now a one-line error naming the content, nothing written."""
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(300, 3))
    path = tmp_path / "g.csv"
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": np.sin(X.sum(1))})
    frame.to_csv(path, index=False)
    keys = ("learner=fogd", "dataset=file", f"dataset.path={path}", "dataset.target=y", "progress=false")
    assert okl_run(*keys)[0] == 0
    frame[["a", "b", "c"]] = frame[["a", "b", "c"]].sample(frac=1, random_state=0).to_numpy()
    frame.to_csv(path, index=False)
    (run,) = find(results_root, dataset="file", seed=0)
    with pytest.raises(SystemExit) as exc:
        regret_main([str(run.path), "--comparator", "krr"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1
    assert "the dataset's files hold other content than run" in err and "rerun it (sink.overwrite=true)" in err
    assert read_run(results_root, "fogd", "file")[1]["regret"].isna().all()


def test_okl_regret_scores_against_the_runs_comparator_and_results_keep_comparators_apart(
    okl_run, results_root, capsys
):
    """okl-regret scored a run played with comparator=krr against oracle_prefix by default, replacing its score
    silently, and okl-results then averaged the two seeds' regrets against different comparators as one."""
    assert okl_run("-m", "learner=fogd", "seed=0,1", "n=300", "comparator=krr", "progress=false")[0] == 0
    one = str(next(results_root.glob("learner=fogd/*/seed=1/run=*")))
    regret_main([one])
    out = capsys.readouterr().out
    assert "against krr(lam=1.0, sigma=1.0) (cached)" in out and "replaces" not in out
    krr_score = RunDir(one).manifest().analyses["regret"]["regret"]
    regret_main([one, "--comparator", "oracle_prefix", "--lam", "0.001", "--sigma", "5"])
    out = capsys.readouterr().out
    assert f"it replaces the score against krr(lam=1.0, sigma=1.0), {krr_score:.6g}" in out
    table = results.summary(results_root, metrics=["regret"])
    assert list(table["regret.comparator"]) == ["krr(lam=1.0, sigma=1.0)", "oracle_prefix(lam=0.001, sigma=5.0)"]
    assert list(table["runs"]) == [1, 1]
    assert "regret.comparator" not in results.summary(results_root).columns  # the loss: one row over both seeds


def test_an_okl_blas_threads_that_is_no_count_is_one_line(okl_run, results_root, monkeypatch, capsys):
    """OKL_BLAS_THREADS=x was int()'s ValueError: okl-regret's traceback (it limits BLAS since its scores ran on the
    shell's threads) and okl-run's 'internal error'."""
    assert okl_run("learner=fogd", "n=100", "comparator=krr", "progress=false")[0] == 0
    scored = only_run(results_root).path
    for value in ("x", "0", "-2"):
        monkeypatch.setenv("OKL_BLAS_THREADS", value)
        with pytest.raises(SystemExit) as exc:
            regret_main([str(scored)])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and len(err.strip().splitlines()) == 1 and f"OKL_BLAS_THREADS={value!r}" in err
        code, _, err = okl_run("learner=fogd", "n=120", "progress=false")
        assert code == 2 and "internal error" not in err and f"OKL_BLAS_THREADS={value!r}" in err
        assert len(results.runs(results_root)) == 1  # refused before a run directory was made (a failed run was left)


@pytest.mark.parametrize("inside", [True, False])
def test_okl_regret_names_the_file_it_cannot_use_and_advises_a_copy_only_for_the_runs_own(
    okl_run, results_root, monkeypatch, inside
):
    """Any OSError while scoring said "cannot write ...: score a copy of the run that you can write", an unreadable
    dataset file too, which no copy of the run mends."""
    from okl.analyses import regret
    from okl.errors import ResourceError

    assert okl_run("learner=fogd", "n=200", "progress=false")[0] == 0
    run = only_run(results_root)
    where = run.path / "rounds" / "part-00000.parquet" if inside else results_root.parent / "mydata.csv"

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(where))

    monkeypatch.setattr(regret, "entry", refused)
    with pytest.raises(ResourceError) as error:
        regret.score_run(run, COMPARATORS.get("krr")(sigma=1.0, lam=1.0))
    message = str(error.value)
    assert str(where) in message and "Permission denied" in message and "\n" not in message
    assert ("score a copy of the run that you can write" in message) == inside
