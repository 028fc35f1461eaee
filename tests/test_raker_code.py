"""Raker and AdaRaker as the authors' released code runs them (``variant=code``, okl.learners.multikernel.raker_code):
each rule against a literal per-round transcription of the code's behaviour, block = loop, the weight
rule's fixed points, and the features' law."""

import copy

import numpy as np
import pytest

from helpers import only_run, play_blocks, play_loop, relative_gap, stream
from okl import config
from okl.errors import ConfigError
from okl.learners import LEARNERS
from okl.learners.multikernel.raker_code import BETA, _ratio_update, active_levels, code_features

SMALL = dict(sigma2=(0.3, 1.0, 4.0), D=6, seed=1, variant="code")


def make(name, d=3, n=400, **extra):
    return LEARNERS.get(name)(d, horizon=n, **{**SMALL, **extra})


def z_of(learner, x):
    """z_p(x) = [sin(V_p x); cos(V_p x)] of each kernel, written out."""
    return [np.concatenate([np.sin(f.V @ x), np.cos(f.V @ x)]) for f in learner.features]


def reference_raker_round(z, y, w, theta, eta, lam):
    """One round of the code's Raker as the issue lists it, kernel by kernel."""
    f = [zp @ wp for zp, wp in zip(z, w, strict=True)]
    y_hat = sum(fp * tp for fp, tp in zip(f, theta, strict=True)) / sum(theta)
    w = [(1 - eta * lam / 10) * wp - (eta / 10) * (-2 * (y - fp) * zp) for wp, fp, zp in zip(w, f, z, strict=True)]
    e = [(y - fp) ** 2 for fp in f]
    m, r = (max(e) + min(e)) / 2, (max(e) - min(e)) / 2
    theta = [tp * 0.5 ** ((ep - m + 1e-12) / (r + 1e-12)) + 1e-12 for tp, ep in zip(theta, e, strict=True)]
    if max(theta) > 1e10:
        theta = [tp / sum(theta) for tp in theta]
    return y_hat, w, theta


def test_raker_code_rounds_follow_the_codes_formulas():
    X, y = stream(150, 3)
    learner = make("raker")
    P = len(SMALL["sigma2"])
    w, theta = [np.zeros(2 * SMALL["D"])] * P, [1 / P] * P
    expected = []
    for x, label in zip(X, y, strict=True):
        y_hat, w, theta = reference_raker_round(z_of(learner, x), label, w, theta, eta=0.05, lam=0.01)
        expected.append(y_hat)
    got = play_loop(learner, X, y)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(learner.w, np.array(w), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(learner.theta, theta, rtol=1e-12)


def test_adaraker_code_follows_the_codes_levels_and_weights():
    """Levels k = 1..floor(log2 T)+1; level k starts at round 2^(k-1)+1 and is never restarted; its
    weight restarts to eta_k = min(0.1/2, 0.1/sqrt(2^k)) when (t-1) = 0 mod 2^(k-1); the not yet
    started levels' weights (1 at the start) stay in the denominator; a_k <- a_k beta'^ratio + 1e-10."""
    n = 300
    X, y = stream(n, 3, seed=4)
    learner = make("adaraker", n=n)
    P, N = len(SMALL["sigma2"]), int(np.floor(np.log(n) / np.log(2))) + 1
    eta = [min(0.1 / 2, 0.1 / np.sqrt(2**k)) for k in range(1, N + 1)]
    w = [[np.zeros(2 * SMALL["D"])] * P for _ in range(N)]
    theta = [[1 / P] * P for _ in range(N)]
    a = [1.0] * N
    n_act, expected = 1, []
    for t in range(1, n + 1):
        z, F, e = z_of(learner, X[t - 1]), [], []
        for k in range(1, n_act + 1):
            if (t - 1) % 2 ** (k - 1) == 0:
                a[k - 1] = eta[k - 1]
            f, w[k - 1], theta[k - 1] = reference_raker_round(z, y[t - 1], w[k - 1], theta[k - 1], eta[k - 1], 0.01)
            F.append(f)
            e.append((f - y[t - 1]) ** 2)
        expected.append(sum(a[k] * F[k] for k in range(n_act)) / sum(a))
        m, r = (max(e) + min(e)) / 2, (max(e) - min(e)) / 2
        for k in range(n_act):
            a[k] = a[k] * eta[n_act - 1] ** ((e[k] - m + 1e-10) / (r + 1e-10)) + 1e-10
        a = [ak / sum(a) for ak in a]
        n_act = int(np.floor(np.log(t) / np.log(2))) + 1
    np.testing.assert_allclose(play_loop(learner, X, y), expected, rtol=1e-11, atol=1e-15)
    assert active_levels(n + 1) == n_act


@pytest.mark.parametrize("name", ["raker", "adaraker"])
@pytest.mark.parametrize("sizes", [(64,), (5, 1, 130, 17)])
def test_code_variant_block_equals_loop(name, sizes):
    X, y = stream(600, 3)
    assert relative_gap(play_blocks(make(name), X, y, sizes), play_loop(make(name), X, y)) < 1e-12


@pytest.mark.parametrize("name", ["raker", "adaraker"])
def test_code_variant_is_online_and_its_queries_are_the_next_round(name):
    X, y = stream(300, 3)
    changed = y.copy()
    changed[150:] += 1.0
    a, b = play_blocks(make(name), X, y, (64,)), play_blocks(make(name), X, changed, (64,))
    np.testing.assert_array_equal(a[:151], b[:151])
    assert not np.allclose(a[151:], b[151:])
    learner = make(name)
    play_blocks(learner, X[:127], y[:127], (64,))  # round 128 restarts level weights (t - 1 = 127 ≠ 0 mod 2)
    for t in (127, 128):
        many = learner.predict_many(X[t : t + 1])
        played = copy.deepcopy(learner).predict_learn_block(X[t : t + 1], y[t : t + 1])
        assert many[0] == pytest.approx(played[0], rel=1e-12, abs=1e-15)
        learner.predict_learn_block(X[t : t + 1], y[t : t + 1])


def test_the_weight_rule_moves_by_rank_not_by_size():
    """Equal errors leave the normalised weights where they were (up to the 1e-12); otherwise the best
    kernel's weight doubles and the worst one's halves (beta = 1/2), whatever the errors' scale."""
    theta = np.array([0.2, 0.5, 0.3])
    for level in (0.01, 0.7, 1e3):  # far above the 1e-12 offsets
        equal = theta.copy()
        _ratio_update(np.full(3, level), equal, BETA, 1e-12, 3)
        np.testing.assert_allclose(equal / equal.sum(), theta / theta.sum(), rtol=1e-10)
        ranked = theta.copy()
        _ratio_update(level * np.array([1.0, 3.0, 2.0]), ranked, BETA, 1e-12, 3)
        np.testing.assert_allclose(ranked, [0.4, 0.25, 0.3], rtol=1e-9)


def test_code_features_have_chi_one_norms_and_no_normalisation():
    """V = Diag(sqrt(chi2_1)) * s * Q: rows orthogonal within a block of d, squared norms / s^2 with
    the chi-square(1) mean 1 (orthogonal random features have chi_d: mean d); ||z||^2 = D."""
    d, D, s = 4, 12, 2.5
    norms = []
    for seed in range(400):
        V = code_features(d, D, s, seed, kernel=0).V
        U = V / np.linalg.norm(V, axis=1, keepdims=True)
        np.testing.assert_allclose(U[:d] @ U[:d].T, np.eye(d), atol=1e-12)
        norms.append((np.linalg.norm(V, axis=1) / s) ** 2)
    norms = np.concatenate(norms)
    assert abs(norms.mean() - 1.0) < 0.06 and abs(norms.var() - 2.0) < 0.4  # chi2_1: mean 1, variance 2
    features = code_features(d, D, s, 0, kernel=0)
    X = np.random.default_rng(0).random((5, d))
    np.testing.assert_allclose((features.transform(X) ** 2).sum(axis=1), D)


def test_raker_code_default_step_is_stable_where_the_texts_diverges():
    """The code's step eta/10 on -2(y - f)z with ||z||^2 = D is a gain of eta*D/5: at the text's 0.5
    and D = 50 every kernel diverges; the variant's default 0.05 (the code's largest rate) learns."""
    X, y = stream(400, 3)
    assert LEARNERS.get("raker")(3, variant="code").params.eta == 0.05
    default = LEARNERS.get("raker")(3, variant="code").predict_learn_block(X, y)
    assert np.mean((default[200:] - y[200:]) ** 2) < np.var(y)
    with np.errstate(over="ignore", invalid="ignore"):
        text = LEARNERS.get("raker")(3, variant="code", eta=0.5).predict_learn_block(X, y)
    assert not np.all(np.abs(text[-50:]) < 1e3)


def test_code_variant_errors_are_one_line():
    with pytest.raises(ConfigError, match="variant=code uses the code's min"):
        make("adaraker", eta0=4.0)
    with pytest.raises(ConfigError, match="variant must be one of code, paper"):
        make("raker", variant="matlab")
    with pytest.raises(ConfigError, match="number of rounds"):
        LEARNERS.get("adaraker")(3, variant="code")


def test_top_level_variant_reaches_raker_and_adaraker(composed):
    for name in ("raker", "adaraker"):
        assert config.plan(composed(f"learner={name}")).learner.params.variant == "paper"
        plan = config.plan(composed(f"learner={name}", "variant=code", "n=50"))
        assert plan.learner.params.variant == "code" and plan.learner.name == name
    assert config.plan(composed("learner=raker", "variant=code", "learner.variant=paper")).learner.params.eta == 0.5


def test_okl_run_plays_the_code_variant_end_to_end(okl_run, results_root):
    code, out, err = okl_run("learner=adaraker", "learner.variant=code", "n=300", "progress=false")
    assert code == 0, err
    run = only_run(results_root, learner="adaraker", dataset="synthetic", seed=0)
    assert run.manifest().config["learner"]["variant"] == "code" and "complete, 300 rounds" in out
    code, _, err = okl_run("learner=adaraker", "variant=code", "learner.eta0=4")
    assert code == 2 and "variant=code uses the code's min" in err and err.count("\n") == 1
