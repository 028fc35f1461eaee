"""AdaRaker and AdaMKL (raker_shen2018 §3.1, Algorithm 2): the dyadic intervals, the instances, the
weights of eqs. (23)–(25), recovery after a change; the segment comparator of the dynamic regret."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from helpers import play_loop, stream
from okl.datasets.synthetic import Synthetic
from okl.errors import ConfigError
from okl.learners import LEARNERS
from okl.learners.ensembles.intervals import LEVELS, IntervalEnsemble, active_intervals
from okl.regret import COMPARATORS

SMALL = {"adaraker": dict(sigma2=(0.3, 1.0, 4.0), D=12, seed=1, eta0=2.0), "adamkl": dict(sigma2=(0.3, 1.0), eta0=2.0)}


def test_active_intervals_are_the_dyadic_scheme():
    """I(t) (eq. (22)) against every interval [k·2^j, (k+1)·2^j − 1], k >= 1, that contains t."""
    for t in range(1, 300):
        brute = sorted((k << j, 1 << j) for j in range(10) for k in range(1, 300) if k << j <= t <= ((k + 1) << j) - 1)
        assert sorted(active_intervals(t)) == brute
        assert len(brute) == t.bit_length()  # one per level j with 2^j <= t


def test_adamkl_holds_one_instance_per_level_with_its_intervals_rounds():
    """After t rounds the level-j instance has seen exactly the rounds of its active interval (its
    support vectors), for every level j >= 1 with 2^j <= t: O(log t) state."""
    X, y = stream(150, 3)
    learner = LEARNERS.get("adamkl")(3, **SMALL["adamkl"])
    for t in range(1, 151):
        learner.learn_one(X[t - 1], y[t - 1])
        intervals = {length.bit_length() - 1: start for start, length in active_intervals(t)}
        assert sorted(learner.instances) == sorted(j for j in intervals if j >= 1)
        for j, instance in learner.instances.items():
            assert instance.model_size == 2 * (t - intervals[j] + 1)  # two kernels


def instances_by_hand(name, X, y):
    """F[b, j]: a fresh ``Instance`` (rate η^(I)) on each interval of level j, played alone."""
    learner = LEARNERS.get(name)(X.shape[1], **SMALL[name])
    n = len(y)
    F = np.full((n, LEVELS), np.nan)
    for j in range(1, n.bit_length()):
        config = learner.instance_config(j)
        assert config["eta"] == min(0.5, SMALL[name]["eta0"] / np.sqrt(2**j))
        for start in range(1 << j, n + 1, 1 << j):
            rows = slice(start - 1, min(n, start - 1 + (1 << j)))
            F[rows, j] = play_loop(learner.Instance(X.shape[1], **config), X[rows], y[rows])
    return F


@pytest.mark.parametrize("name", sorted(SMALL))
def test_instances_are_fresh_learners_on_each_interval(name):
    X, y = stream(200, 3, seed=2)
    expected = instances_by_hand(name, X, y)
    learner = LEARNERS.get(name)(3, **SMALL[name])
    got = np.full_like(expected, np.nan)
    for a in range(0, 200, 37):  # blocks across interval starts
        got[a : a + 37] = learner.play_instances(X[a : a + 37], y[a : a + 37])
        learner.t += len(y[a : a + 37])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_allclose(got[~np.isnan(got)], expected[~np.isnan(expected)], rtol=1e-9, atol=1e-12)
    if name == "adaraker":  # the compiled instances equal Raker objects run by the generic ensemble
        generic = LEARNERS.get(name)(3, **SMALL[name])
        np.testing.assert_allclose(IntervalEnsemble.play_instances(generic, X, y), expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_predictions_follow_eqs_23_to_25(name):
    """By hand: instances vote from their second round with h = η^(I), then h ← h·exp(+η^(I) r) with
    r = ½(f − y)² − ½(f^(I) − y)² (eq. (24)); f is the h-weighted mean (eq. (25))."""
    X, y = stream(200, 3, seed=3)
    F = instances_by_hand(name, X, y)
    eta = LEARNERS.get(name)(3, **SMALL[name]).eta
    h, expected = {}, np.empty(200)
    for t in range(1, 201):
        voting = [j for j in h if t % (1 << j)]
        weights = np.array([h[j] for j in voting])
        expected[t - 1] = weights @ F[t - 1, voting] / weights.sum() if voting else 0.0
        loss = 0.5 * (expected[t - 1] - y[t - 1]) ** 2
        for j in voting:
            h[j] *= np.exp(eta[j] * (loss - 0.5 * (F[t - 1, j] - y[t - 1]) ** 2))
        for j in range(1, t.bit_length()):
            if t % (1 << j) == 0:
                h[j] = eta[j]  # (23): the weight from the round after the start
    got = play_loop(LEARNERS.get(name)(3, **SMALL[name]), X, y)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    assert (got[[0, 1, 3, 7, 15, 31, 63, 127]] == 0).all()  # at t = 2^k every interval starts


def test_an_instance_beating_the_ensemble_gains_weight():
    """The sign of (23): at t = 300 the voting instances with r > 0 (a smaller loss than the ensemble)
    gain weight and the others lose it."""
    X, y = stream(300, 3, seed=5)
    learner = LEARNERS.get("adaraker")(3, **SMALL["adaraker"])
    learner.predict_learn_block(X[:299], y[:299])
    y_hat = learner.predict_one(X[299])
    f = copy.deepcopy(learner).play_instances(X[299:], y[299:])[0]
    before = learner.log_h.copy()
    learner.learn_one(X[299], y[299])
    r = 0.5 * (y_hat - y[299]) ** 2 - 0.5 * (f - y[299]) ** 2
    voting = [j for j in range(1, 9) if 300 % (1 << j)]  # 300 = 2²·75: levels 3..8
    assert voting == [3, 4, 5, 6, 7, 8] and len({np.sign(r[j]) for j in voting}) == 2
    for j in voting:
        assert np.sign(learner.log_h[j] - before[j]) == np.sign(r[j])


def piecewise(n, d):
    X, y = next(Synthetic(d=d, length=n, changes=3).chunks())
    return X, (y - y.min()) / (y.max() - y.min())  # §4: y in [0, 1]


@pytest.mark.parametrize(("n", "d"), [(8000, 4), (8000, 2)])
def test_adaraker_recovers_faster_than_raker_tuned_for_a_static_horizon(n, d):
    """Over the 500 rounds after each of 3 abrupt changes (averaged), AdaRaker's MSE is below that of
    Raker with Theorem 1's static tuning η = 1/√T by 1.5× at least; before the first change, where
    Raker has had 2,000 stationary rounds, it is not (AdaRaker's gain is the restarts)."""
    X, y = piecewise(n, d)
    ada = (LEARNERS.get("adaraker")(d).predict_learn_block(X, y) - y) ** 2
    raker = (LEARNERS.get("raker")(d, eta=1 / np.sqrt(n)).predict_learn_block(X, y) - y) ** 2
    after = [slice(c, c + 500) for c in (n // 4, n // 2, 3 * n // 4)]
    assert 1.5 * np.mean([ada[w].mean() for w in after]) < np.mean([raker[w].mean() for w in after])
    assert ada[n // 4 - 500 : n // 4].mean() > raker[n // 4 - 500 : n // 4].mean()


def test_bad_eta0_is_a_config_error():
    with pytest.raises(ConfigError, match="eta0 must be a finite number > 0"):
        LEARNERS.get("adaraker")(3, eta0=0.0)


def test_segment_comparator_is_krr_on_each_segment():
    X, y = stream(90, 3, seed=4)
    krr = COMPARATORS.get("krr")(sigma=0.7, lam=0.3)
    got, penalty = COMPARATORS.get("krr_segments")(sigma=0.7, lam=0.3, changes=2, length=120).losses(X, y)
    parts = [krr.losses(X[a:b], y[a:b]) for a, b in ((0, 40), (40, 80), (80, 90))]  # ⌊t·3/120⌋
    np.testing.assert_allclose(got, np.concatenate([p[0] for p in parts]), rtol=1e-12)
    assert penalty == pytest.approx(sum(p[1] for p in parts), rel=1e-12)
    whole = COMPARATORS.get("krr_segments")(sigma=0.7, lam=0.3).losses(X, y)
    np.testing.assert_allclose(whole[0], krr.losses(X, y)[0], rtol=1e-12)
