"""Exponentially weighted aggregation: eq. (14) by hand, one expert, the exp-concave bound, the CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers import play_loop, stream
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
        ("[{sigma:1}]", "non-empty list of learner configs"),
        ("[{name:ridge}]", "unknown learner 'ridge'"),
        ("[{name:pkawv_nystrom_beforehand}]", "experts must be online"),
        ("[{name:fogd,D:0}]", "D must be an integer >= 1"),
    ],
)
def test_bad_experts_are_one_line_errors(okl_run, experts, message):
    code, _, err = okl_run("learner=ewa", f"learner.experts={experts}", "n=10")
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
