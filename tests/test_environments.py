"""Adaptive environments (the greedy adversary), the alternating streams and replay."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers import only_run
from okl.datasets import DATASETS
from okl.datasets.adversary import Adversary
from okl.learners import LEARNERS
from okl.regret import COMPARATORS
from test_learners import SETTINGS, make, signs_for

ONLINE = sorted(name for name in SETTINGS if LEARNERS.get(name).beforehand is None)


def play(env, learner, n):
    y_hat = [learner.predict_learn_block(X, y)[0] for X, y in env.play(learner.predict_many, n)]
    return np.array(y_hat)


@pytest.mark.parametrize("name", ONLINE)
def test_queries_do_not_change_the_learner_and_equal_predict_one(name):
    """The environment protocol: predict_many is pure and gives each point's predict_one."""
    g = np.random.default_rng(3)
    X, y = g.uniform(-1, 1, (40, 3)), g.uniform(-1, 1, 40)
    y = signs_for(name, y)
    quiet, queried = make(name), make(name)
    a = quiet.predict_learn_block(X, y)
    b = np.empty(40)
    for t in range(40):
        candidates = g.uniform(-1, 1, (7, 3))
        many = queried.predict_many(candidates)
        np.testing.assert_allclose(many, [queried.predict_one(x) for x in candidates], rtol=1e-9, atol=1e-12)
        b[t] = queried.predict_learn_block(X[t : t + 1], y[t : t + 1])[0]
    np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12)


def test_adversary_is_deterministic_given_the_seed():
    runs = []
    for seed in (0, 0, 1):
        env = Adversary(length=15, d=3, seed=seed)
        play(env, make("fogd"), 15)
        runs.append(env.sequence)
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    assert not np.array_equal(runs[0][0], runs[2][0])


def test_adversary_maximises_exactly_the_regret_against_the_prefix_oracle():
    """Each chosen round's objective is the increment of Figure 3's regret; its box is respected."""
    env = Adversary(length=30, d=3, x_bound=0.5, y_bound=2.0)
    learner = make("kernel_awv", sigma=1.0, lam=1.0)
    y_hat = play(env, learner, 30)
    X, y = env.sequence
    ell, _ = COMPARATORS.get("oracle_prefix")(sigma=1.0, lam=1.0).losses(X, y)
    regret = np.cumsum((y_hat - y) ** 2) - np.cumsum(ell)
    np.testing.assert_allclose(regret, np.cumsum(env.chosen_gain), rtol=1e-8)
    assert np.abs(X).max() <= 0.5 and np.abs(y).max() <= 2.0
    assert min(env.chosen_gain) > 0


def test_adversary_choice_beats_every_other_point_and_label_of_its_box():
    """The objective is maximised, not only recorded: at each round the chosen (x, y) gains at least as much
    as 300 other points of the box (each with its best label), and as the chosen x with 41 other labels."""
    import copy

    env = Adversary(length=12, d=2, x_bound=0.5, y_bound=2.0)
    learner = make("kernel_awv", d=2, sigma=1.0, lam=1.0)
    g = np.random.default_rng(11)
    for _ in range(12):
        before = copy.deepcopy(env.oracle)
        rival, _ = env.gain(learner.predict_many, g.uniform(-0.5, 0.5, (300, 2)))
        x, y = env.choose(learner.predict_many)
        chosen = env.chosen_gain[-1]
        assert chosen >= rival.max() - 1e-9
        terms, _ = before.terms(x[None, :])
        labels = np.linspace(-2.0, 2.0, 41)[:, None]
        by_label = (learner.predict_many(x[None, :]) - labels) ** 2 - before.loss_after(terms, labels) + before.loss
        assert chosen >= by_label.max() - 1e-9
        np.testing.assert_allclose(
            chosen,
            (learner.predict_one(x) - y) ** 2 - before.loss_after(terms, np.array([[y]]))[0, 0] + before.loss,
            rtol=1e-9,
        )
        learner.learn_one(x, y)


def test_greedy_adversary_makes_a_fixed_budget_learner_fall_behind_kernel_awv():
    """pkawv_jezequel2019 Figure 3: Kernel-AWV has the smallest regret; a learner with a fixed budget
    of landmarks (NOGD, J = 10) keeps paying on the points the adversary puts outside its span."""
    growth = {}
    for name, extra in (("kernel_awv", dict(sigma=1.0, lam=1.0)), ("nogd", dict(sigma=1.0, J=10))):
        env = Adversary(length=80, d=5)
        y_hat = play(env, make(name, d=5, n=80, **extra), 80)
        X, y = env.sequence
        ell, _ = COMPARATORS.get("oracle_prefix")(sigma=1.0, lam=1.0).losses(X, y)
        regret = np.cumsum((y_hat - y) ** 2) - np.cumsum(ell)
        growth[name] = regret[79] - regret[39]
    assert growth["nogd"] > 1.5 * growth["kernel_awv"] > 0


def test_alternating_stream_follows_the_papers_pattern():
    single = DATASETS.get("alternating")(d=2, length=6, C=2.0)
    X, y = next(single.chunks())
    assert (X[0] == X).all() and list(y) == [2, -2, 2, -2, 2, -2]
    cycle = DATASETS.get("alternating")(d=2, length=8, points=3)
    X, y = next(cycle.chunks())
    np.testing.assert_array_equal(X[:3], X[3:6])
    assert len(np.unique(X, axis=0)) == 3 and list(y) == [1, 1, 1, -1, -1, -1, 1, 1]
    # the best ridge function in hindsight sits near 0 on the single point: loss ≈ C² per round
    X, y = next(DATASETS.get("alternating")(d=2, length=1000).chunks())
    ell, _ = COMPARATORS.get("krr")(sigma=1.0, lam=1.0).losses(X, y)
    assert ell.mean() == pytest.approx(1.0, abs=1e-2)


def run_dir(root, learner, dataset):
    return only_run(root, learner=learner, dataset=dataset, seed=0)


def test_adversarial_run_records_its_sequence_and_replays_exactly(okl_run, results_root):
    code, out, err = okl_run(
        "dataset=adversary", "dataset.length=25", "dataset.d=3", "learner=kernel_awv", "comparator=oracle_prefix"
    )
    assert code == 0, err
    original = run_dir(results_root, "kernel_awv", "adversary")
    manifest = original.manifest()
    assert manifest.environment_s > 0 and manifest.analyses["regret"]["rounds"] == 25
    rounds = pd.read_parquet(original.rounds_path)
    assert [c for c in rounds.columns if c.startswith("x_")] == ["x_0", "x_1", "x_2"]
    for block in ("1", "256"):  # the per-round loop and blocks, on the recorded sequence
        code, _, err = okl_run(
            "dataset=replay",
            f"dataset.run='{original.path}'",
            "learner=kernel_awv",
            f"block={block}",
            "comparator=oracle_prefix",
            "sink.overwrite=true",
        )
        assert code == 0, err
        replay = pd.read_parquet(run_dir(results_root, "kernel_awv", "replay").rounds_path)
        np.testing.assert_allclose(replay["y_hat"], rounds["y_hat"], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(replay["regret"], rounds["regret"], rtol=1e-9, atol=1e-9)
    for learner in ("pkawv_taylor", "pkawv_nystrom", "pkawv_nystrom_beforehand"):  # compiled kernels, read-only inputs
        degree = ["M=1"] if learner == "pkawv_taylor" else []
        code, _, err = okl_run("dataset=replay", f"dataset.run='{original.path}'", f"learner={learner}", *degree)
        assert code == 0, err
        replay = pd.read_parquet(run_dir(results_root, learner, "replay").rounds_path)
        np.testing.assert_array_equal(replay["y"], rounds["y"])


def test_environment_errors_are_one_line(okl_run, results_root, tmp_path):
    code, _, err = okl_run("dataset=adversary", "learner=pkawv_nystrom_beforehand")
    assert code == 2 and "dataset=replay" in err and len(err.strip().splitlines()) == 1
    code, _, err = okl_run("dataset=replay", f"dataset.run={tmp_path}")
    assert code == 2 and "no run at" in err
    assert okl_run("learner=fogd", "n=20")[0] == 0
    fogd = run_dir(results_root, "fogd", "synthetic")
    code, _, err = okl_run("dataset=replay", f"dataset.run={fogd.path}")
    assert code == 2 and "quote a value that contains '='" in err
    code, _, err = okl_run("dataset=replay", f"dataset.run='{fogd.path}'")
    assert code == 2 and "no recorded inputs" in err
    code, _, err = okl_run("dataset=adversary", "dataset.starts=9", "dataset.screen=4")
    assert code == 2 and "starts=9 exceeds screen=4" in err
