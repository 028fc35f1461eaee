"""FOGD and NOGD with the options of Lu et al.'s released regression code (``regression/FouGD.m`` and
``regression/NysGD.m`` of jingcoco/Online-Kernel-Learning, the source of pros_n_kons_calandriello2017 Table 1's
FOGD and NOGD rows) predict what a round-by-round port of that code predicts: a dead zone ε on |y − ŷ|, FOGD's
unnormalised features (η = η_L D / 2), NOGD's landmarks taken at the rounds that step and its switch to the top
eigen-directions of K_JJ at the first round that steps after the budget fills."""

from __future__ import annotations

import numpy as np
import pytest

from okl.errors import ConfigError
from okl.learners import LEARNERS


def _stream(n: int, d: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n, d))
    return X, np.clip(0.5 + 0.3 * np.sin(4 * X[:, 0]) * X[:, 1] + 0.05 * rng.standard_normal(n), 0, 1)


def _gaussian(A: np.ndarray, x: np.ndarray, sigma: float) -> np.ndarray:
    return np.exp(-((A - x) ** 2).sum(-1) / (2 * sigma**2))


def fougd(X, Y, U, eta, epsl):
    """FouGD.m: w ← w + η δ [cos(xU), sin(xU)] when |δ| > ε, δ = y − f(x)."""
    w, out = np.zeros(2 * U.shape[1]), np.empty(len(Y))
    for t, (x, y) in enumerate(zip(X, Y, strict=True)):
        z = np.concatenate([np.cos(x @ U), np.sin(x @ U)])
        out[t] = w @ z
        if abs(y - out[t]) > epsl:
            w = w + eta * (y - out[t]) * z
    return out


def nysgd(X, Y, sigma, B, k, eta, epsl):
    """NysGD.m: kernel GD adding a support vector at each round with |δ| > ε until B are in; at the next such
    round, w = α pinv(MM) with MM = Λ_k^{-1/2} V_kᵀ (the top k eigenpairs of K_BB), then GD on MM k(SV, x)."""
    alpha, SV, MM, w, out = [], [], None, None, np.empty(len(Y))
    for t, (x, y) in enumerate(zip(X, Y, strict=True)):
        k_t = _gaussian(X[SV], x, sigma)
        out[t] = alpha @ k_t if MM is None else w @ (MM @ k_t)
        delt = y - out[t]
        if abs(delt) <= epsl:
            continue
        if MM is None and len(SV) < B:
            alpha, SV = np.append(alpha, eta * delt), [*SV, t]
            continue
        if MM is None:
            vals, vecs = np.linalg.eigh(np.array([_gaussian(X[SV], X[s], sigma) for s in SV]))
            MM = np.diag(vals[::-1][:k] ** -0.5) @ vecs[:, ::-1][:, :k].T
            w = alpha @ np.linalg.pinv(MM)
        w = w + eta * delt * (MM @ k_t)
    return out


@pytest.mark.parametrize("epsl", [0.0, 0.1])
def test_fogd_with_a_dead_zone_is_fougd(epsl):
    X, y = _stream(600)
    D, eta_l = 40, 6e-4
    make = lambda: LEARNERS.get("fogd")(3, D=D, sigma=0.8, eta=eta_l * D / 2, epsilon=epsl, seed=2)  # noqa: E731
    blocks, rounds = make(), make()
    U = blocks.features.V.T  # the same frequencies: U = randn(d, D)/σ
    assert abs(U.std() * 0.8 - 1) < 0.2
    expected = fougd(X, y, U, eta_l, epsl)
    np.testing.assert_allclose(blocks.predict_learn_block(X, y), expected, rtol=1e-9, atol=1e-12)
    got = [(rounds.predict_one(x), rounds.learn_one(x, t))[0] for x, t in zip(X, y, strict=True)]
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    if epsl:  # the dead zone skipped rounds: without it the predictions differ
        assert np.abs(fougd(X, y, U, eta_l, 0.0) - expected).max() > 1e-3


@pytest.mark.parametrize(("epsl", "rank"), [(0.1, 6), (0.1, None), (0.0, 6)])
def test_nogd_with_a_dead_zone_and_a_rank_is_nysgd(epsl, rank):
    X, y = _stream(500)
    B, eta_l = 30, 0.1
    learner = LEARNERS.get("nogd")(3, J=B, sigma=0.8, eta=eta_l / 2, epsilon=epsl, rank=rank)
    expected = nysgd(X, y, 0.8, B, B if rank is None else rank, eta_l, epsl)
    got = np.array([(learner.predict_one(x), learner.learn_one(x, t))[0] for x, t in zip(X, y, strict=True)])
    np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-10)
    assert learner.model_size == B
    if rank is not None:  # the top directions changed the predictions after the switch
        assert learner.top.shape == (rank, B)
        assert np.abs(nysgd(X, y, 0.8, B, B, eta_l, epsl) - expected).max() > 1e-3


def test_nogd_with_a_dead_zone_and_a_rank_plays_blocks_as_its_rounds():
    X, y = _stream(400, seed=3)
    make = lambda: LEARNERS.get("nogd")(3, J=20, sigma=0.8, epsilon=0.05, rank=5)  # noqa: E731  (η_t = 1/√t)
    one = make()
    loop = np.array([(one.predict_one(x), one.learn_one(x, t))[0] for x, t in zip(X, y, strict=True)])
    blocks, out = make(), []
    for a in range(0, 400, 37):
        out.append(blocks.predict_learn_block(X[a : a + 37], y[a : a + 37]))
    np.testing.assert_allclose(np.concatenate(out), loop, rtol=1e-12, atol=1e-14)


def test_a_dead_zone_takes_the_square_loss_only_and_no_ridge_and_a_rank_at_most_j():
    with pytest.raises(ConfigError, match="epsilon .* takes the square loss, not 'hinge': set epsilon=0"):
        LEARNERS.get("fogd")(3, D=4, loss="hinge", epsilon=0.1)
    with pytest.raises(ConfigError, match="a dead zone .* a ridge .* set one to 0"):
        LEARNERS.get("fogd")(3, D=4, lam=0.1, epsilon=0.1)
    with pytest.raises(ConfigError, match="rank=31 exceeds the J=30 landmarks: set rank <= J"):
        LEARNERS.get("nogd")(3, rank=31)
