"""Exponentially weighted aggregation: eq. (14) by hand, one expert, the exp-concave bound, the CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers import play_blocks, play_loop, stream
from okl.errors import ConfigError
from okl.features.random_fourier import RandomFourierFeatures
from okl.learners import LEARNERS

EXPERTS = [
    dict(name="pkawv_taylor", M=2, sigma=0.8, lam=0.01),
    dict(name="pkawv_taylor", M=2, sigma=0.8, lam=1.0),
    dict(name="fogd", D=20, sigma=0.8, eta=0.1, seed=2),
]


def expert_predictions(X, y, experts=EXPERTS):
    """Each expert played alone: its predictions (B×P)."""
    cols = []
    for spec in experts:
        spec = dict(spec)
        cols.append(play_loop(LEARNERS.get(spec.pop("name"))(X.shape[1], horizon=len(y), **spec), X, y))
    return np.column_stack(cols)


def test_weights_follow_eq_14_and_predictions_eq_13():
    X, y = stream(60, 3)
    eta = 0.7
    ewa = LEARNERS.get("ewa")(3, horizon=60, experts=EXPERTS, eta=eta)
    got = play_loop(ewa, X, y)
    P = expert_predictions(X, y)
    weights = np.empty_like(P)
    for t in range(60):  # by hand: w_{p,t} = exp(−η Σ_{s<t} (ŷ_{p,s} − y_s)²), normalised
        w = np.exp(-eta * ((P[:t] - y[:t, None]) ** 2).sum(axis=0))
        weights[t] = w / w.sum()
    np.testing.assert_allclose(got, (weights * P).sum(axis=1), rtol=1e-10, atol=1e-13)
    ewa = LEARNERS.get("ewa")(3, horizon=60, experts=EXPERTS, eta=eta)
    ewa.predict_learn_block(X, y)
    recorded = np.column_stack([ewa.diagnostics(60)[f"weight_{p}"] for p in range(3)])
    np.testing.assert_allclose(recorded, weights, rtol=1e-10, atol=1e-15)


def test_one_expert_is_that_expert():
    X, y = stream(80, 3)
    ewa = LEARNERS.get("ewa")(3, horizon=80, experts=EXPERTS[:1])
    np.testing.assert_allclose(play_loop(ewa, X, y), expert_predictions(X, y, EXPERTS[:1])[:, 0], rtol=1e-12)


def test_cumulative_loss_within_log_p_over_eta_of_the_best_expert():
    """The square loss is η-exp-concave on [−B, B] for η <= 1/(8B²): EWA (the weighted mean) then
    loses at most ln(P)/η more than the best expert, on every prefix."""
    X, y = stream(400, 3, seed=4)
    P = expert_predictions(X, y)
    B = max(np.abs(P).max(), np.abs(y).max())
    eta = 1 / (8 * B * B)
    got = play_loop(LEARNERS.get("ewa")(3, horizon=400, experts=EXPERTS, eta=eta), X, y)
    ours = np.cumsum((got - y) ** 2)
    best = np.cumsum((P - y[:, None]) ** 2, axis=0).min(axis=1)
    assert (ours <= best + np.log(3) / eta + 1e-9).all()
    assert ours[-1] < np.cumsum((P - y[:, None]) ** 2, axis=0)[-1].max()  # better than the worst


def test_cli_runs_the_default_lambda_grid_with_weight_columns(okl_run, results_root):
    code, out, err = okl_run("learner=ewa", "n=300", "progress=false")
    assert code == 0, err
    (rounds,) = results_root.glob("learner=ewa/dataset=synthetic/seed=0/run=*/rounds")
    df = pd.read_parquet(rounds)
    W = df[["weight_0", "weight_1", "weight_2"]].to_numpy()
    np.testing.assert_allclose(W.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(W[0], 1 / 3)


@pytest.mark.parametrize(
    ("experts", "message"),
    [
        ("[]", "non-empty list of learner configs"),
        ("5", "non-empty list of learner configs"),  # was "internal error: TypeError: 'int' object is not iterable"
        ("fogd", "non-empty list of learner configs"),
        ("[{sigma:1}]", "non-empty list of learner configs"),
        ("[{name:ridge}]", "unknown learner 'ridge'"),
        ("[{name:pkawv_nystrom_beforehand}]", "experts must be online"),
        ("[{name:fogd,D:0}]", "D must be an integer >= 1"),
        # an expert's key was named as ewa's own (learner.loss, learner.sigmaa), whose setting changed nothing
        ("[{name:fogd,sigmaa:0.3}]", "unknown key learner.experts[0].sigmaa for learner 'fogd'"),
        ("[{name:fogd},{name:fogd,loss:hinge}]", "(fogd): learner 'fogd': loss 'hinge' is a loss of labels, and the"),
        ("[{name:fogd},{name:fogd,loss:hinge}]", "; set learner.experts[1].loss=square"),
        ("[{name:bsgd}]", "ewa's expert 0 (bsgd) does not handle regression datasets; it handles binary, multiclass"),
    ],
)
def test_bad_experts_are_one_line_errors(okl_run, experts, message):
    code, _, err = okl_run("learner=ewa", f"learner.experts={experts}", "n=10")
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_raker_with_one_kernel_is_eq_16_on_its_orthogonal_random_features():
    """Raker with P = 1 is online gradient descent on ½(θᵀz − y)² + (λ/2)||θ||² (eq. (16)), written out."""
    X, y = stream(200, 3)
    eta, lam, s2 = 0.5, 0.01, 2.0
    raker = LEARNERS.get("raker")(3, sigma2=[s2], D=10, eta=eta, lam=lam, seed=3)
    got = play_loop(raker, X, y)
    Z = RandomFourierFeatures(3, 10, np.sqrt(s2), seed=3, orthogonal=True).transform(X)  # seed·P + 0
    theta, expected = np.zeros(20), np.empty(200)
    for t in range(200):
        expected[t] = theta @ Z[t]
        theta = theta - eta * ((expected[t] - y[t]) * Z[t] + lam * theta)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-13)


def test_raker_weights_follow_eq_14_with_the_half_square_loss():
    X, y = stream(80, 3, seed=6)
    raker = LEARNERS.get("raker")(3, D=8, eta=0.5, seed=0)
    raker.predict_learn_block(X, y)
    P = np.column_stack([LEARNERS.get("fogd")(3, **spec_of(raker, p)).predict_learn_block(X, y) for p in range(3)])
    cum = np.cumsum(0.5 * (P - y[:, None]) ** 2, axis=0) - 0.5 * (P - y[:, None]) ** 2
    w = np.exp(-0.5 * cum)
    recorded = np.column_stack([raker.diagnostics(80)[f"weight_{p}"] for p in range(3)])
    np.testing.assert_allclose(recorded, w / w.sum(axis=1, keepdims=True), rtol=1e-10)
    assert [e.features.sigma**2 for e in raker.experts] == pytest.approx([0.1, 1.0, 10.0])


def spec_of(raker, p):
    spec = dict(raker.expert_configs()[p])
    spec.pop("name")
    return spec


def kernel_ogd_by_hand(X, y, sigma, eta, lam, budget=None):
    """f_{t+1} = (1 − ηλ) f_t − η ℓ'(f_t(x_t)) k(x_t, ·) with the square loss, written out; the oldest
    support vector dropped beyond ``budget``."""
    S, alpha, out = [], [], np.empty(len(y))
    for t in range(len(y)):
        k = np.exp(-((np.array(S) - X[t]) ** 2).sum(axis=1) / (2 * sigma**2)) if S else np.zeros(0)
        out[t] = float(k @ np.array(alpha)) if S else 0.0
        alpha = [(1 - eta * lam) * a for a in alpha] + [-eta * 2 * (out[t] - y[t])]
        S.append(X[t])
        if budget is not None and len(S) > budget:
            S, alpha = S[1:], alpha[1:]
    return out


@pytest.mark.parametrize("budget", [None, 25])
def test_rbf_ogd_is_the_functional_gradient_recursion(budget):
    X, y = stream(120, 3)
    learner = LEARNERS.get("rbf_ogd")(3, sigma=0.7, eta=0.3, lam=0.05, budget=budget)
    got = play_loop(learner, X, y)
    np.testing.assert_allclose(got, kernel_ogd_by_hand(X, y, 0.7, 0.3, 0.05, budget), rtol=1e-10, atol=1e-13)
    assert learner.model_size == (120 if budget is None else 25)


def test_omkl_with_one_kernel_is_kernel_ogd_in_the_papers_units():
    X, y = stream(100, 3, seed=8)
    omkl = LEARNERS.get("omkl")(3, sigma2=[0.5], eta=0.5, lam=0.01)
    expected = kernel_ogd_by_hand(X, y, np.sqrt(0.5), 0.25, 0.02)  # ½(ŷ − y)²: step η/2 on (ŷ − y)², ridge 2λ
    np.testing.assert_allclose(play_loop(omkl, X, y), expected, rtol=1e-10, atol=1e-13)


def test_the_runs_seed_draws_the_experts_that_set_none():
    """Two fogd experts (random features): seed 1 draws other features than seed 0 (they ignored the run's seed and
    always drew with 0); an expert's own seed is kept; seed 0 keeps the earlier runs' id (an added key)."""
    from okl.registry import identity

    X, y = stream(300, 3)
    experts = [{"name": "fogd", "D": 20, "sigma": 0.5}, {"name": "fogd", "D": 20, "sigma": 1.0}]

    def played(seed, experts=experts):
        learner = LEARNERS.get("ewa")(3, experts=experts, seed=seed)
        return learner, play_blocks(learner, X, y, (64,))

    (zero, a), (one, b) = played(0), played(1)
    assert not np.allclose(a, b)
    assert [e.params.seed for e in one.experts] == [1, 1]
    np.testing.assert_array_equal(a, played(0, [{**e, "seed": 0} for e in experts])[1])  # seed 0: as before
    pinned = [experts[0], {**experts[1], "seed": 7}]
    assert [e.params.seed for e in played(1, pinned)[0].experts] == [1, 7]
    assert "seed" not in identity(zero.params) and identity(one.params)["seed"] == 1
    # experts that draw nothing (the default PKAWV-Taylor grid): one run at every seed, one id
    assert identity(LEARNERS.get("ewa")(3, seed=1).params) == identity(LEARNERS.get("ewa")(3).params)
    with pytest.raises(ConfigError, match=r"^ewa's expert 1 \(fogd\): learner 'fogd': loss 'hinge' is a loss of"):
        LEARNERS.get("ewa")(3, experts=[experts[0], {**experts[1], "loss": "hinge"}]).check_task("regression")


def test_an_experts_int_and_float_settings_are_one_expert_and_one_run_id():
    """{sigma: 1} and {sigma: 1.0} in an expert: the same learner, so the same Params and run identity (they were two
    ids, two runs of one setting), as sigma=1 and sigma=1.0 are for a learner of its own; keys that are not floats
    (fogd's D) stay as they are."""
    from okl.registry import identity

    got = [LEARNERS.params("ewa", {"experts": [{"name": "fogd", "sigma": s, "D": 50}]}) for s in (1, 1.0)]
    assert got[0] == got[1] and identity(got[0]) == identity(got[1])
    assert got[0].experts == ({"name": "fogd", "sigma": 1.0, "D": 50},) and type(got[0].experts[0]["D"]) is int
