"""Every learner: block = loop, online causality; exact learners against closed forms; paper facts."""

import re
import sys

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from helpers import play_blocks, play_loop, relative_gap, show, stream
from okl import system
from okl.errors import ConfigError, ResourceError
from okl.features.taylor import taylor_dim
from okl.learners import LEARNERS
from okl.learners.awv.kernel_awv import KernelAWV
from okl.learners.awv.online_krr import OnlineKRR
from okl.learners.awv.pkawv_taylor import PKAWVTaylor
from okl.learners.base import _finite
from okl.learners.ensembles.intervals import AdaptiveParams
from okl.learners.random_features.fogd import FOGD
from okl.linalg.online_ridge import OnlineRidge
from okl.validation import SMALLEST_BANDWIDTH

SETTINGS = {  # small, fast settings for each registered learner
    "kernel_awv": dict(sigma=0.8, lam=0.5),
    "online_krr": dict(sigma=0.8, lam=0.5),
    "pkawv_taylor": dict(M=3, sigma=0.8, lam=0.5),
    "pkrr_taylor": dict(M=3, sigma=0.8, lam=0.5),
    "fogd": dict(D=64, sigma=0.8, eta=0.2, seed=1),
    "pkawv_nystrom": dict(sigma=0.5, lam=0.5, seed=1),
    "pkrr_nystrom": dict(sigma=0.5, lam=0.5, seed=1),
    "pkawv_nystrom_beforehand": dict(sigma=0.5, lam=0.5, seed=1),
    "kons": dict(sigma=0.8, alpha=0.5),
    "sketched_kons": dict(sigma=0.8, alpha=0.5, gamma=0.2, seed=1),
    "pros_n_kons": dict(sigma=0.5, alpha=0.5, gamma=0.5, seed=1),
    "con_kons": dict(sigma=0.5, alpha=0.5, gamma=0.5, seed=1),
    "b_kons": dict(sigma=0.5, alpha=0.5, gamma=0.5, budget=6, seed=1),
    "nogd": dict(J=12, sigma=0.8, eta=0.3),
    "kors_batch": dict(sigma=0.8, alpha=0.5, gamma=0.5, seed=1),
    "raker": dict(sigma2=(0.3, 1.0, 4.0), D=12, seed=1),
    "rbf_ogd": dict(sigma=0.8, eta=0.3, lam=0.01, budget=50),
    "omkl": dict(sigma2=(0.3, 1.0, 4.0), budget=40),
    "adaraker": dict(sigma2=(0.3, 1.0, 4.0), D=12, seed=1, eta0=2.0),
    "adamkl": dict(sigma2=(0.3, 1.0), eta0=2.0, budget=30),
    "fsgd": dict(sigma=0.8, eta=0.3, loss="square", batch=4),
    "polk": dict(sigma=0.8, eta=0.3, loss="square", batch=4, K=0.05),
    "bsgd": dict(sigma=0.8, eta=0.3, loss="hinge", budget=20),
    "dual_sgd": dict(sigma=0.8, loss="square", budget=30, k=5, D=20, lam=0.05),
    "river": dict(model="linear_model.LinearRegression"),
    "ewa": dict(
        experts=[dict(name="fogd", D=16, sigma=0.8, eta=0.2, seed=1), dict(name="pkawv_taylor", M=2, sigma=0.8)],
        eta=0.5,
    ),
}
CONSTANT_SIZE = {
    "fogd",
    "pkawv_taylor",
    "pkrr_taylor",
    "raker",
    "river",
    "kors_batch",
    "pkawv_nystrom_beforehand",
    "ewa",
}
DIAGNOSED = {  # every learner, and settings whose model size changes inside blocks where SETTINGS' does not
    **{name: (name, {}) for name in SETTINGS},
    "ewa of growing experts": (
        "ewa",
        dict(experts=[dict(name="rbf_ogd", sigma=0.8, eta=0.3, budget=50), dict(name="kons", sigma=0.8, alpha=0.5)]),
    ),
    "adaraker variant=code": ("adaraker", dict(variant="code", eta0=AdaptiveParams.eta0)),
}
HINDSIGHT = {key for key in LEARNERS.names() if LEARNERS.get(key).beforehand == "stream"}  # see every label first


def make(name, d=3, n=600, **extra):
    return LEARNERS.get(name)(d, horizon=n, **{**SETTINGS[name], **extra})


def stream_of(name, n, d, **keys):
    """:func:`stream` with labels the learner of SETTINGS takes: −1 or +1 (the sign about the median) for a binary
    loss of labels (bsgd's hinge)."""
    X, y = stream(n, d, **keys)
    return X, signs_for(name, y)


def signs_for(name, y):
    return np.where(y >= np.median(y), 1.0, -1.0) if make(name).labels == "sign" else y


def test_every_registered_learner_is_covered():
    assert sorted(SETTINGS) == LEARNERS.names()


@pytest.mark.parametrize("name", sorted(SETTINGS))
@pytest.mark.parametrize("sizes", [(64,), (5, 1, 130, 17)])
def test_block_equals_loop(name, sizes):
    X, y = stream_of(name, 600, 3)
    assert relative_gap(play_blocks(make(name), X, y, sizes), play_loop(make(name), X, y)) < 1e-9


def diagnostics_of_blocks(learner, X, y, sizes) -> dict[str, np.ndarray]:
    """Each diagnostic column, per round, as the runner writes it: after each block of the given sizes (cycled),
    the last block's values; sizes (1,) is the runner's per-round path (predict_one, learn_one)."""
    show(learner, X, y)
    columns, start, i = {}, 0, 0
    while start < len(y):
        stop = min(start + sizes[i % len(sizes)], len(y))
        if sizes == (1,):
            learner.predict_one(X[start])
            learner.learn_one(X[start], y[start])
        else:
            learner.predict_learn_block(X[start:stop], y[start:stop])
        for key, values in learner.diagnostics(stop - start).items():
            assert len(values) == stop - start, key
            columns.setdefault(key, []).append(values)
        start, i = stop, i + 1
    return {key: np.concatenate(parts) for key, parts in columns.items()}


@pytest.mark.parametrize("case", sorted(DIAGNOSED))
@pytest.mark.parametrize("sizes", [(64,), (5, 1, 130, 17)])
def test_block_diagnostics_equal_the_loops(case, sizes):
    """Every per-round diagnostic column (model_size, ...) of a block equals the per-round loop's: kons wrote
    its block's last model size at every round of it (256 at t = 1)."""
    name, extra = DIAGNOSED[case]
    X, y = stream_of(name, 600, 3)
    loop = diagnostics_of_blocks(make(name, **extra), X, y, (1,))
    blocks = diagnostics_of_blocks(make(name, **extra), X, y, sizes)
    assert sorted(blocks) == sorted(loop)
    for key, values in loop.items():
        if values.dtype.kind in "iu":
            np.testing.assert_array_equal(blocks[key], values, err_msg=key)
        else:
            assert relative_gap(blocks[key], values) < 1e-9, key
    assert len(np.unique(loop["model_size"])) > 1 or case in CONSTANT_SIZE  # the check could fail


@pytest.mark.parametrize("name", sorted(set(SETTINGS) - HINDSIGHT))
def test_predictions_ignore_current_and_future_labels(name):
    """Online: ŷ_t may use y_1..y_{t-1} only, also inside a block."""
    X, y = stream_of(name, 300, 3)
    y_changed = y.copy()
    y_changed[150:] = signs_for(name, 10 * np.random.default_rng(5).standard_normal(150))
    a = play_blocks(make(name), X, y, (64,))
    b = play_blocks(make(name), X, y_changed, (64,))
    np.testing.assert_array_equal(a[:151], b[:151])
    assert not np.allclose(a[151:], b[151:])


@pytest.mark.parametrize("name", ["fsgd", "polk"])
@pytest.mark.parametrize("loss", ["multi_hinge", "multi_logistic"])
def test_multi_class_mini_batches_give_the_loops_numbers_when_classes_appear_inside_a_block(name, loss):
    """A block took every class of its mini-batch at once: round t could predict a class first seen at t or later
    (its own label), and the mini-batch's first rounds got gradients and risks against classes not yet seen (on
    `okl-run learner=polk dataset=multidist learner.batch=32`, 227 of 2,000 predictions differed from block=1's
    under one run id). Each round now sees the classes of the labels before it (its loss: up to its own)."""
    g = np.random.default_rng(1)
    X = g.uniform(-1, 1, (400, 3))
    y = np.argmax(X @ g.normal(size=(3, 4)), axis=1).astype(float)
    y[:6] = [0, 2, 1, 0, 3, 1]  # classes appear inside the first mini-batches
    keys = dict(sigma=0.8, eta=0.5, loss=loss, batch=4, **({"K": 0.01} if name == "polk" else {}))
    loop = diagnostics_of_blocks(LEARNERS.get(name)(3, **keys), X, y, (1,))
    looped = play_loop(LEARNERS.get(name)(3, **keys), X, y)
    for sizes in ((64,), (5, 1, 130, 17)):
        learner = LEARNERS.get(name)(3, **keys)
        np.testing.assert_array_equal(play_blocks(learner, X, y, sizes), looped)
        blocks = diagnostics_of_blocks(LEARNERS.get(name)(3, **keys), X, y, sizes)
        np.testing.assert_array_equal(blocks["model_size"], loop["model_size"])
        for key in ("risk", "penalty"):
            assert relative_gap(blocks[key], loop[key]) < 1e-12, key
    changed = y.copy()
    changed[2] = 3  # a class first seen at round 3: no prediction up to it may know
    assert (play_blocks(LEARNERS.get(name)(3, **keys), X, changed, (64,))[:3] == looped[:3]).all()
    assert len(np.unique(looped)) > 1  # it learns


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_a_learner_pickled_or_copied_mid_stream_goes_on_with_the_same_numbers(name):
    """bsgd's support vectors and coefficients are views of buffers; pickled or deep-copied, the views became
    arrays of their own, the next shrink missed the buffers and later predictions moved (by 0.05 on a scale of 3
    at lam = 0.01). The runner's snapshots keep views (okl.store.files.Aliasing); plain pickling must too."""
    import copy
    import pickle

    X, y = stream_of(name, 300, 3)
    learner = make(name)
    play_blocks(learner, X[:150], y[:150], (32,))
    copies = [pickle.loads(pickle.dumps(learner)), copy.deepcopy(learner)]
    expected = play_blocks(learner, X[150:], y[150:], (32,))
    for other in copies:
        np.testing.assert_array_equal(play_blocks(other, X[150:], y[150:], (32,)), expected)


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_predict_one_does_not_change_the_learner(name):
    X, y = stream_of(name, 50, 3)
    learner = make(name)
    play_loop(learner, X[:40], y[:40])
    first = [learner.predict_one(x) for x in X[40:]]
    assert [learner.predict_one(x) for x in X[40:]] == first


def _gauss(A, B, sigma):
    return np.exp(-cdist(A, B, "sqeuclidean") / (2 * sigma**2))


def test_kernel_awv_equals_the_closed_form_of_eq_3():
    """f_t = argmin Σ_{s<t}(y_s - f(x_s))² + λ||f||² + f(x_t)²  ⇒  ŷ_t = k_tᵀ(K_t + λI)⁻¹(y_1..y_{t-1}, 0)."""
    X, y = stream(120, 2)
    sigma, lam = 0.8, 0.5
    got = play_blocks(KernelAWV(2, sigma=sigma, lam=lam), X, y, (16, 3))
    for t in range(len(y)):
        K = _gauss(X[: t + 1], X[: t + 1], sigma)
        alpha = np.linalg.solve(K + lam * np.eye(t + 1), np.append(y[:t], 0.0))
        assert got[t] == pytest.approx(K[t] @ alpha, rel=1e-10, abs=1e-13)


def test_krr_equals_the_kernel_ridge_solution_on_the_past():
    X, y = stream(120, 2, seed=1)
    sigma, lam = 0.8, 0.5
    got = play_blocks(OnlineKRR(2, sigma=sigma, lam=lam), X, y, (16, 3))
    for t in range(1, len(y)):
        k = _gauss(X[:t], X[t : t + 1], sigma)[:, 0]
        ref = k @ np.linalg.solve(_gauss(X[:t], X[:t], sigma) + lam * np.eye(t), y[:t])
        assert got[t] == pytest.approx(ref, rel=1e-10, abs=1e-13)
    assert got[0] == 0.0


def test_kernel_awv_regret_within_proposition_1():
    """R_n(f) <= λ||f||² + B² Σ_k log(1 + λ_k(K_nn)/λ) for every f, here the best ridge function."""
    X, y = stream(300, 2, seed=2)
    sigma, lam = 0.5, 1.0
    y_hat = play_blocks(KernelAWV(2, sigma=sigma, lam=lam), X, y, (64,))
    K = _gauss(X, X, sigma)
    for mu in (0.1, 1.0, 10.0):  # comparators of varying norm
        alpha = np.linalg.solve(K + mu * np.eye(len(y)), y)
        f = K @ alpha
        regret = ((y_hat - y) ** 2).sum() - ((f - y) ** 2).sum()
        bound = lam * alpha @ K @ alpha + np.abs(y).max() ** 2 * np.log1p(np.linalg.eigvalsh(K).clip(0) / lam).sum()
        assert regret <= bound


def test_pkawv_taylor_approaches_kernel_awv_as_M_grows():
    X, y = stream(300, 2, scale=0.8)
    exact = play_blocks(KernelAWV(2, sigma=1.0, lam=1.0), X, y, (64,))
    gaps = [
        np.abs(play_blocks(PKAWVTaylor(2, M=M, sigma=1.0, lam=1.0), X, y, (64,)) - exact).max() for M in range(1, 11)
    ]
    assert all(b < a for a, b in zip(gaps, gaps[1:], strict=False))
    assert gaps[-1] < 1e-6


def test_pkrr_taylor_is_pkawv_without_the_leverage_correction():
    X, y = stream(200, 3)
    awv = play_blocks(make("pkawv_taylor"), X, y, (64,))
    ridge = play_blocks(make("pkrr_taylor"), X, y, (64,))
    assert np.abs(awv).sum() < np.abs(ridge).sum()  # AWV shrinks towards 0 by 1/(1 + h_t)
    assert not np.allclose(awv, ridge)


@pytest.mark.parametrize(
    ("keys", "step"),
    [(dict(eta=0.3), lambda t: 0.3), (dict(lam=0.1), lambda t: 1 / np.sqrt(t))],  # anytime η_t = 1/√t without n
    ids=["constant", "anytime"],
)
def test_fogd_is_online_gradient_descent_on_random_features(keys, step):
    X, y = stream(300, 3)
    learner = FOGD(3, D=32, sigma=0.7, seed=4, **keys)
    Z, lam = learner.features.transform(X), keys.get("lam", 0.0)
    w, ref = np.zeros(Z.shape[1]), np.empty(len(y))
    for t in range(len(y)):
        ref[t] = w @ Z[t]
        w = (1 - step(t + 1) * lam) * w - step(t + 1) * 2 * (ref[t] - y[t]) * Z[t]
    assert relative_gap(play_blocks(learner, X, y, (64,)), ref) < 1e-12


@pytest.mark.parametrize("name", ["fogd", "nogd", "rbf_ogd"])
def test_first_order_default_step_is_one_over_sqrt_n_or_anytime_without_n(name):
    """η = 1/√n for a run of n known rounds (the papers' baselines); without n (a river estimator) the anytime
    η_t = 1/√t, the same in blocks as round by round."""
    assert LEARNERS.get(name)(3, horizon=10_000).eta.next(3) == pytest.approx([0.01] * 3)
    assert LEARNERS.get(name)(3).eta.next(4) == pytest.approx([1, 1 / np.sqrt(2), 1 / np.sqrt(3), 0.5])
    X, y = stream(300, 3)
    settings = {k: v for k, v in SETTINGS[name].items() if k != "eta"}
    blocks = play_blocks(LEARNERS.get(name)(3, **settings), X, y, (5, 1, 130, 17))
    assert relative_gap(blocks, play_loop(LEARNERS.get(name)(3, **settings), X, y)) < 1e-9
    assert relative_gap(blocks, play_loop(LEARNERS.get(name)(3, horizon=300, **settings), X, y)) > 1e-3


@pytest.mark.parametrize("loss", ["hinge", "logistic"])
def test_fogd_classification_losses_move_towards_the_label(loss):
    learner = FOGD(2, D=16, eta=0.5, loss=loss, seed=0)
    x = np.array([0.2, 0.4])
    learner.learn_one(x, 1.0)
    assert learner.predict_one(x) > 0
    learner2 = FOGD(2, D=16, eta=0.5, loss=loss, seed=0)
    learner2.learn_one(x, -1.0)
    assert learner2.predict_one(x) < 0


def test_taylor_state_too_large_for_memory_is_refused(monkeypatch):
    monkeypatch.setattr(system, "available_memory", lambda: system.GIB)
    with pytest.raises(ResourceError) as info:
        PKAWVTaylor(22, M=5)
    message = str(info.value)
    assert "d=22, M=5" in message and "80,730 Taylor features" in message and "48.6 GiB" in message
    assert "half the 1.0 GiB available" in message and "\n" not in message
    # the suggestion fits the budget (it suggested a degree whose state alone filled the memory, or M=1
    # when even that did not fit)
    suggested = int(message.split("lower M (M=")[1].split()[0])
    assert suggested == 3 and OnlineRidge.state_bytes(taylor_dim(22, suggested)) <= system.GIB // 2
    assert OnlineRidge.state_bytes(taylor_dim(22, 4)) > system.GIB // 2
    monkeypatch.setattr(system, "available_memory", lambda: 2**20)  # 1 MiB: not even M = 1 (401 features)
    with pytest.raises(ResourceError, match="no degree fits: reduce the input dimension"):
        PKAWVTaylor(400, M=2)


def test_exact_kernel_grows_as_far_as_memory_allows_then_stops_with_a_resource_error(monkeypatch):
    from okl.linalg import kernel_ridge

    learner = KernelAWV(2)
    X, y = stream(200, 2)
    learner.predict_learn_block(X[:100], y[:100])
    assert learner.core.L.shape[0] == 100
    monkeypatch.setattr(system, "available_memory", lambda: 8 * 130**2 / kernel_ridge.HEADROOM + 1)
    learner.predict_learn_block(X[100:120], y[100:120])  # 1.5× = 150 rows does not fit; 130 does
    assert learner.core.L.shape[0] == 130
    with pytest.raises(ResourceError, match=r"kernel_awv stopped at round 121: the exact 140×140 .* GiB"):
        learner.predict_learn_block(X[120:140], y[120:140])
    assert learner.model_size == 120  # state unchanged by the refused block
    monkeypatch.undo()
    exact = play_blocks(KernelAWV(2), X[:140], y[:140], (64,))
    np.testing.assert_allclose(learner.predict_learn_block(X[120:140], y[120:140]), exact[120:], rtol=1e-12)


def test_exact_kernel_factor_is_allocated_once_at_the_horizon():
    """At 30,000 rounds a 1.5× growth past the run's end cost 12 GiB more than the run could use, and a growth
    by copying held the old and the new factor together (peak 2× the factor)."""
    X, y = stream(150, 2)
    bounded, unbounded = KernelAWV(2, horizon=110), KernelAWV(2)
    for learner in (bounded, unbounded):
        learner.predict_learn_block(X[:1], y[:1])
    first = bounded.core.L
    for learner in (bounded, unbounded):
        learner.predict_learn_block(X[1:100], y[1:100])
        learner.predict_learn_block(X[100:110], y[100:110])
    assert bounded.core.L is first
    assert (bounded.core.L.shape[0], unbounded.core.L.shape[0]) == (110, 150)  # 64, 100, 150
    np.testing.assert_array_equal(bounded.predict_many(X[110:]), unbounded.predict_many(X[110:]))


def test_model_size_diagnostics():
    X, y = stream(100, 3)
    kernel, taylor = make("kernel_awv"), make("pkawv_taylor")
    kernel.predict_learn_block(X[:30], y[:30])
    np.testing.assert_array_equal(kernel.diagnostics(30)["model_size"], np.arange(1, 31))
    taylor.predict_learn_block(X[:30], y[:30])
    assert (taylor.diagnostics(30)["model_size"] == 20).all()  # C(3+3, 3)
    assert make("fogd").model_size == 128  # 2D coordinates


def test_bad_hyperparameters_raise_one_line_config_errors():
    with pytest.raises(ConfigError, match=r"learner 'pkawv_taylor': sigma must be a finite number > 0 \(got -1.0\)"):
        PKAWVTaylor(3, sigma=-1)
    with pytest.raises(
        ConfigError, match="unknown key learner.gamma for learner 'online_krr'; its keys are: lam, sigma"
    ):
        OnlineKRR(3, gamma=2)
    with pytest.raises(ConfigError, match="d must be an integer >= 1"):
        OnlineKRR(0)


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_read_only_inputs_give_the_same_numbers(name):
    """Parquet columns and memory-mapped caches reach learners as read-only arrays (dataset=replay
    crashed compiled kernels with them): every path must accept them and give the same numbers."""
    X, y = stream_of(name, 300, 3)
    frozen_X, frozen_y = X.copy(), y.copy()
    frozen_X.flags.writeable = frozen_y.flags.writeable = False
    a, b = make(name), make(name)
    np.testing.assert_array_equal(play_blocks(a, frozen_X, frozen_y, (64, 1)), play_blocks(b, X, y, (64, 1)))
    np.testing.assert_array_equal(a.predict_many(frozen_X[:20]), b.predict_many(X[:20]))


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_predict_many_is_the_next_rounds_prediction(name):
    """predict_many (held-out scoring, adversaries) equals predict_one row by row and leaves the learner
    as it was (pkawv_nystrom_beforehand raised ValueError here)."""
    X, y = stream_of(name, 100, 3)
    far = 3 + np.random.default_rng(9).random((10, 3))  # far from the stream: a dictionary would take them
    queries = np.vstack([X[:10] + 0.01, far])
    learner = make(name)
    play_blocks(learner, X, y, (32,))
    many = learner.predict_many(queries)
    np.testing.assert_allclose(many, [learner.predict_one(x) for x in queries], rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(learner.predict_many(queries), many)


def test_beforehand_queries_project_on_the_fixed_span():
    """pkawv_nystrom_beforehand's span is fixed before round 1: a query KORS would take (the online
    learner's path, which needs a history this learner does not keep) is projected like a round."""
    import copy

    X, y = stream(100, 3)
    learner = make("pkawv_nystrom_beforehand", mu=0.01)
    play_blocks(learner, X, y, (32,))
    far = 3 + np.random.default_rng(9).random((10, 3))
    assert learner.kors.peek_many(far).all()
    many = learner.predict_many(far)
    for x, expected in zip(far, many, strict=True):
        played = copy.deepcopy(learner).predict_learn_block(x[None, :], np.zeros(1))
        assert played[0] == pytest.approx(expected, rel=1e-10, abs=1e-15)


@pytest.mark.parametrize(
    ("name", "extra", "what"),
    [
        ("kernel_awv", {}, "kernel_awv: the exact 200,000×200,000 kernel factor of n=200,000 rounds: 298.0 GiB"),
        ("online_krr", {}, "online_krr: the exact 200,000×200,000 kernel factor of n=200,000 rounds: 298.0 GiB"),
        ("kons", {}, "kons: the inputs and the 200,000×200,000 gradient factor of n=200,000 rounds: 298.0 GiB"),
        ("fsgd", {"batch": 1}, "fsgd: a dictionary of the 200,000,000 inputs of n=200,000,000 rounds: 11.9 GiB"),
        ("rbf_ogd", {"budget": None}, "rbf_ogd: 200,000,000 support vectors of n=200,000,000 rounds: 11.9 GiB"),
    ],
)
def test_a_state_growing_past_the_memory_is_refused_before_round_1_with_the_rounds_that_fit(
    monkeypatch, name, extra, what
):
    """kernel_awv with n=200,000 needs 320 GB: it ran 4 minutes before it was stopped at 8 GB."""
    monkeypatch.setattr(system, "available_memory", lambda: 2 * system.GIB)
    rounds = 200_000 if "kernel" in what or "kons" in what else 200_000_000
    learner = make(name, n=rounds, **extra)  # what does not grow is checked at construction: nothing here
    with pytest.raises(ResourceError) as info:
        learner.require_memory(rounds)
    message = str(info.value)
    assert (
        message.startswith(f"{what}, more than half the 2.0 GiB available: set n= to at most ") and "\n" not in message
    )
    fitting = int(message.split("set n= to at most ")[1].split()[0].replace(",", ""))
    assert learner.footprint(fitting)[0] <= system.GIB < learner.footprint(fitting + 1)[0]  # the most that fit
    assert message.endswith(f" rounds, or {learner.lighter}")


def test_fogd_refuses_a_feature_count_that_cannot_fit_before_allocating_it(monkeypatch):
    """learner.D=1000000000 ended in an internal MemoryError."""
    monkeypatch.setattr(system, "available_memory", lambda: 2 * system.GIB)
    with pytest.raises(ResourceError) as info:
        FOGD(8, D=10**9, eta=0.1)
    message = str(info.value)
    assert message.startswith("fogd: D=1,000,000,000 frequencies in d=8 and their 2,000,000,000 features: 89.4 GiB")
    fitting = int(message.split("lower learner.D (at most ")[1].split()[0].replace(",", ""))
    per_frequency = FOGD(8, D=1, eta=0.1).footprint(0)[0]  # the footprint is linear in D
    assert per_frequency * fitting <= system.GIB < per_frequency * (fitting + 1)  # the most that fit


@pytest.mark.parametrize(
    ("name", "extra", "what"),
    [
        ("bsgd", {"budget": 10**12}, "bsgd: a budget of 1,000,000,000,000 support vectors in d=3: 67,055.2 GiB"),
        ("dual_sgd", {"budget": 10**12}, "dual_sgd: a budget of 1,000,000,000,000 support vectors and D=20"),
        ("dual_sgd", {"D": 10**12}, "dual_sgd: a budget of 30 support vectors and D=1,000,000,000,000 frequencies"),
    ],
)
def test_a_budget_allocated_before_round_1_is_refused_before_it_is_allocated(monkeypatch, name, extra, what):
    """bsgd and dual_sgd allocate their budget of support vectors (and dual_sgd its D frequencies) at construction:
    learner.budget=10000000000 was an internal MemoryError (596 GiB)."""
    monkeypatch.setattr(system, "available_memory", lambda: 2 * system.GIB)
    with pytest.raises(ResourceError) as info:
        make(name, **extra)
    message = str(info.value)
    assert message.startswith(what) and "more than half the 2.0 GiB available: lower learner." in message
    if name == "bsgd":
        fitting = int(message.split("lower learner.budget (at most ")[1].split()[0].replace(",", ""))
        make(name, budget=fitting)  # the most that fit
        with pytest.raises(ResourceError):
            make(name, budget=fitting + 1)


def test_fogd_embeds_a_block_a_bounded_number_of_features_at_a_time(monkeypatch):
    """learner.D=10000000 embedded a 256-round block at once: 38 GiB of features, an internal MemoryError."""
    import tracemalloc

    from okl.learners.random_features import fogd

    X, y = stream(256, 3)
    whole = FOGD(3, D=5000, eta=0.01).predict_learn_block(X, y)  # 256 × 10,000 features: 20 MB at once
    monkeypatch.setattr(fogd, "EMBEDDED", 1 << 20, raising=False)
    learner = FOGD(3, D=5000, eta=0.01)
    tracemalloc.start()
    try:
        chunked = learner.predict_learn_block(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20
    np.testing.assert_allclose(chunked, whole, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ["rbf_ogd", "omkl"])
def test_a_budget_above_the_rounds_allocates_for_the_rounds_only(name):
    """rbf_ogd with budget=10**10 allocated its 10**10 support vectors at round 1 (a 596 GiB internal MemoryError on
    a 300-round run) where its footprint counts min(n, budget): it plays as without a budget."""
    X, y = stream(100, 3)
    huge = make(name, budget=10**15)
    np.testing.assert_array_equal(play_blocks(huge, X, y, (16, 1)), play_blocks(make(name, budget=None), X, y, (16, 1)))
    assert huge.model_size == (100 if name == "rbf_ogd" else 300)


def test_okl_run_refuses_kernel_awv_on_too_many_rounds_at_once_unless_a_time_budget_may_stop_it(
    okl_run, results_root, monkeypatch
):
    monkeypatch.setattr(system, "available_memory", lambda: 8 * system.GIB)
    code, _, err = okl_run("learner=kernel_awv", "n=200000", "progress=false")
    assert code == 2 and err.count("\n") == 1 and not results_root.exists()
    assert err.startswith("okl-run: error: kernel_awv: the exact 200,000×200,000 kernel factor of n=200,000 rounds")
    code, out, _ = okl_run("learner=kernel_awv", "n=200000", "timeout_s=0.5", "progress=false")
    assert code == 0 and "timeout" in out


@pytest.mark.parametrize("name", sorted(name for name, keys in SETTINGS.items() if "sigma" in keys))
def test_the_smallest_bandwidth_allowed_gives_finite_predictions(name):
    """sigma=1e-300 made every kernel nan, and the run blamed the step size: the smallest σ allowed still works."""
    X, y = stream_of(name, 50, 3)
    assert np.isfinite(play_blocks(make(name, sigma=SMALLEST_BANDWIDTH), X, y, (16, 1))).all()
    with pytest.raises(ConfigError, match=f"sigma must be >= 1.49e-154 \\(got {SMALLEST_BANDWIDTH / 2!r}\\)"):
        make(name, sigma=SMALLEST_BANDWIDTH / 2)


@pytest.mark.parametrize("name", ["raker", "omkl", "adaraker", "adamkl"])
def test_the_smallest_kernel_width_allowed_gives_finite_predictions(name):
    """sigma2=[1e-310] was refused by raker and omkl as their expert's 'sigma must be >= 1.49e-154', failed adamkl
    at round 1 with that line and was played by adaraker: it is refused as sigma2, the smallest allowed plays."""
    X, y = stream_of(name, 50, 3)
    smallest = sys.float_info.min
    assert np.isfinite(play_blocks(make(name, sigma2=(smallest, 1.0)), X, y, (16, 1))).all()
    with pytest.raises(ConfigError, match=f"sigma2 must be >= 2.23e-308 \\(got {smallest / 4!r}\\)"):
        make(name, sigma2=(smallest / 4, 1.0))


def test_an_ensemble_checks_the_memory_of_each_expert(monkeypatch):
    """omkl's experts keep every support vector without a budget: the ensemble's check is theirs."""
    monkeypatch.setattr(system, "available_memory", lambda: 2 * system.GIB)
    with pytest.raises(ResourceError, match=r"^rbf_ogd: 200,000,000 support vectors of n=200,000,000 rounds: 11.9"):
        make("omkl", n=200_000_000, budget=None).require_memory(200_000_000)
    make("omkl", n=200_000_000).require_memory(200_000_000)  # SETTINGS' budget of 40 vectors: it fits


def test_an_ensemble_checks_the_sum_of_its_experts_states(monkeypatch):
    """Three experts each under half the memory passed together above it (ewa of pkawv_taylor at d=18, M=5:
    3 × 8.4 GiB with 22.7 GiB available)."""
    monkeypatch.setattr(system, "available_memory", lambda: 2 * system.GIB)
    learner = make("ewa", experts=[dict(name="kernel_awv", sigma=0.8, lam=lam) for lam in (0.1, 1.0, 10.0)])
    rounds = next(n for n in range(1000, 10**6, 1000) if learner.experts[0].footprint(n)[0] > 0.4 * system.GIB)
    for expert in learner.experts:
        expert.require_memory(rounds)  # each fits alone
    with pytest.raises(ResourceError, match=r"^ewa: the states of its 3 experts together \(the exact "):
        learner.require_memory(rounds)


def test_an_ensemble_refuses_its_experts_states_together_before_it_builds_any(monkeypatch):
    """Raker's kernels are fogd experts whose D×d frequencies are drawn as each is built: at learner.D=100000000
    the first drew and wrote 6.7 GiB, then the second, before the sum was refused. Now nothing is drawn: the
    experts' planned states are summed first, each fitting alone."""
    from okl.features import random_fourier

    drawn = []
    original = random_fourier.RandomFourierFeatures.__init__
    monkeypatch.setattr(
        random_fourier.RandomFourierFeatures,
        "__init__",
        lambda self, *a, **k: drawn.append(1) or original(self, *a, **k),
    )
    monkeypatch.setattr(system, "available_memory", lambda: 2 * system.GIB)
    D = int(0.8 * system.GIB / (8 * (5 + 4)))  # 0.8 GiB per kernel: under half of 2 GiB, three are not
    with pytest.raises(ResourceError, match=r"^raker: the states of its 3 experts together \(D=.*: lower learner\.D$"):
        LEARNERS.get("raker")(5, sigma2=(0.1, 1.0, 10.0), D=D)
    assert not drawn
    LEARNERS.get("raker")(5, sigma2=(0.1, 1.0, 10.0), D=50)
    assert len(drawn) == 3
    with pytest.raises(ConfigError) as built:
        LEARNERS.get("fogd")(5, D=0)
    with pytest.raises(ConfigError) as planned:  # a planned expert's key error is the one building it gave
        LEARNERS.get("ewa")(5, experts=[{"name": "fogd"}, {"name": "fogd", "D": 0}])
    assert str(planned.value) == str(built.value) == "learner 'fogd': D must be an integer >= 1 (got 0)"


def test_raker_counts_its_kernels_in_either_variant_and_an_ewa_counts_an_ensemble_expert_s(monkeypatch):
    """Raker's code variant draws its kernels' frequencies itself (no fogd experts to build): it had no check at all;
    an ewa of rakers counted none of their kernels (an ensemble expert's footprint was None), so two rakers of 0.6
    GiB passed together where half of 2 GiB is the budget."""
    from okl.features import random_fourier
    from okl.learners.multikernel import raker_code

    monkeypatch.setattr(system, "available_memory", lambda: 2 * system.GIB)
    monkeypatch.setattr(raker_code, "code_features", lambda *a: pytest.fail("drew the frequencies with no check"))
    D = int(0.4 * system.GIB / (8 * (5 + 4)))  # 0.4 GiB a kernel: one fits in half of 2 GiB, three do not
    with pytest.raises(ResourceError, match=r"^raker: the states of its 3 experts together .*: lower learner\.D$"):
        LEARNERS.get("raker")(5, sigma2=(0.1, 1.0, 10.0), D=D, variant="code")
    monkeypatch.setattr(random_fourier, "_orthogonal_rows", lambda g, D, d: np.zeros((D, d)))  # draw nothing
    D = int(0.3 * system.GIB / (8 * (5 + 4)))  # 0.3 GiB a kernel, two kernels a raker
    raker = {"name": "raker", "D": D, "sigma2": [1.0, 2.0]}
    LEARNERS.get("ewa")(5, experts=[raker, {"name": "fogd"}])  # one raker fits
    with pytest.raises(ResourceError, match=r"^ewa: the states of its 3 experts together \(the states of its 2 "):
        LEARNERS.get("ewa")(5, experts=[raker, raker, {"name": "pkawv_taylor"}])


def test_an_expert_too_large_alone_is_refused_with_its_own_advice(monkeypatch):
    """An expert too large by itself is named with its own numbers and advice (fogd's D that fits), not as the
    experts together with the first one's description."""
    monkeypatch.setattr(system, "available_memory", lambda: 2 * system.GIB)
    D = int(1.5 * system.GIB / (8 * (5 + 4)))  # 1.5 GiB: more than half of 2 GiB alone
    with pytest.raises(
        ResourceError, match=rf"^fogd: D={D:,} frequencies .*: lower learner\.D \(at most [\d,]+ fit\)$"
    ):
        LEARNERS.get("ewa")(5, experts=[{"name": "fogd", "D": 50}, {"name": "fogd", "D": D}])


def test_adaraker_checks_its_frequencies_and_levels_before_it_draws_them(monkeypatch):
    """AdaRaker keeps each kernel's D×d frequencies and θ of the levels started: learner.D=100000000 drew
    frequencies until its time ran out, with no check. Its footprint counts the levels the rounds start."""
    monkeypatch.setattr(system, "available_memory", lambda: 2 * system.GIB)
    with pytest.raises(ResourceError, match=r"^adaraker: 3 kernels' D=100,000,000 frequencies in d=5 .*lower learner"):
        LEARNERS.get("adaraker")(5, sigma2=(0.1, 1.0, 10.0), D=100_000_000)
    learner = LEARNERS.get("adaraker")(5, sigma2=(0.1, 1.0), D=50)
    assert learner.footprint(0)[0] == 8 * 2 * 50 * (5 + 2)  # one level before any round
    assert learner.footprint(1024)[0] == 8 * 2 * 50 * (5 + 2 * 11)  # intervals of 2^0 .. 2^10 rounds
    X, y = stream(1024, 5)
    learner.predict_learn_block(X, y)
    assert np.count_nonzero(np.abs(learner.theta).sum(axis=(1, 2))) <= 11  # the levels it counts


def test_a_snapshot_of_the_exact_factor_holds_its_written_rows_only(tmp_path):
    """A factor allocated at the horizon is mostly unwritten pages: a snapshot of all of them wrote 20 GB files
    (a 200,000-round horizon) where 30 MB of rows had been computed. Restored, it predicts and learns on exactly."""
    from okl.store.files import read_pickle, write_pickle

    X, y = stream(300, 2)
    learner = KernelAWV(2, horizon=4000)
    learner.predict_learn_block(X[:100], y[:100])
    sha = write_pickle(tmp_path / "s.pkl", learner)
    assert (tmp_path / "s.pkl").stat().st_size < 100 * 4000 * 8 + 4000 * 8 * 4 + 100_000  # 100 rows of 4,000
    restored = read_pickle(tmp_path / "s.pkl", sha)
    assert restored.core.L.shape == (4000, 4000)
    np.testing.assert_array_equal(
        restored.predict_learn_block(X[100:], y[100:]), learner.predict_learn_block(X[100:], y[100:])
    )


@pytest.mark.parametrize(
    ("values", "finite"),
    [
        ([1.0, -2.0], True),
        ([1e308, 1e308], True),
        ([np.inf, -np.inf], False),
        ([np.nan, 1.0], False),
        ([-np.inf], False),
    ],
)
def test_the_input_check_tells_finite_from_not(values, finite):
    """Finite entries whose sum would overflow are accepted, infinities that would cancel into NaN refused."""
    assert _finite(np.array(values)) is finite


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_every_learner_refuses_a_wrong_input_in_one_line_and_keeps_its_state(name):
    """A pkawv_taylor built for d = 5 accepted 4- or 6-long vectors and a 2×5 matrix, fogd returned one number
    for a 2×5 matrix, a NaN label turned every later prediction into NaN, and a string was numpy's error without the
    learner's name. Each refusal names the learner,
    d and what came, and leaves the learner as it was (the rounds after it are those of a learner that never
    saw it)."""
    X, y = stream_of(name, 120, 3)
    learner, clean = make(name), make(name)
    if learner.beforehand:
        for each in (learner, clean):
            each.prepare(X, y if each.beforehand == "stream" else None)
            each.prepared()
    first = learner.predict_learn_block(X[:60], y[:60])
    np.testing.assert_array_equal(first, clean.predict_learn_block(X[:60], y[:60]))
    bad_x, bad_y = X[60:70].copy(), y[60:70].copy()
    bad_x[3, 1], bad_y[5] = np.nan, np.inf
    wrong = [
        (
            lambda: learner.predict_one(X[60, :2]),
            rf"^{name}: predict_one takes one input vector of d=3 numbers, got a vector of 2 numbers$",
        ),
        (
            lambda: learner.predict_one(X[60:62]),
            rf"^{name}: predict_one takes one input vector of d=3 numbers, got an array of shape 2×3$",
        ),
        (lambda: learner.learn_one(X[60], float("nan")), rf"^{name}: learn_one got a non-finite label \(nan\)"),
        (  # seven learners returned 0.0 here, a plausible number; the others NaN, or named predict_many
            lambda: learner.predict_one(np.array([np.inf, 0.1, 0.2])),
            rf"^{name}: predict_one got a non-finite input \(inf at index 0\): drop or impute it$",
        ),
        (
            lambda: learner.predict_one(["a", 0.1, 0.2]),
            rf"^{name}: predict_one takes one input vector of d=3 numbers, got \['a', 0.1, 0.2\]$",
        ),
        (
            lambda: learner.learn_one(X[60], y[60:62]),
            rf"^{name}: learn_one takes one number as the label, got a vector of 2 numbers of float64$",
        ),
        (lambda: learner.learn_one(X[60], "y"), rf"^{name}: learn_one takes one number as the label, got 'y'$"),
        (
            lambda: learner.predict_many(np.ones((4, 5))),
            rf"^{name}: predict_many takes a B×3 matrix \(B inputs of d=3\), got an array of shape 4×5$",
        ),
        (
            lambda: learner.predict_learn_block(bad_x, y[60:70]),
            rf"^{name}: predict_learn_block got a non-finite input \(nan at index 3, 1\)",
        ),
        (
            lambda: learner.predict_learn_block(X[60:70], bad_y),
            rf"^{name}: predict_learn_block got a non-finite label \(inf at index 5\)",
        ),
        (
            lambda: learner.predict_learn_block(X[60], y[60:63]),
            rf"^{name}: predict_learn_block takes a B×3 matrix \(B inputs of d=3\), got a vector of 3 numbers$",
        ),
        (
            lambda: learner.predict_many(X[60]),
            rf"^{name}: predict_many takes a B×3 matrix \(B inputs of d=3\), got a vector of 3 numbers$",
        ),
        (
            lambda: learner.predict_learn_block(X[60:70], y[60:69]),
            rf"^{name}: predict_learn_block takes 10 labels, got a vector of 9 numbers$",
        ),
    ]
    for call, message in wrong:
        with pytest.raises(ValueError, match=message) as refused:
            call()
        assert "\n" not in str(refused.value)
    with pytest.raises(TypeError, match="positional argument"):  # an extra argument was dropped silently
        learner.learn_one(X[60], y[60], 1.0)
    np.testing.assert_array_equal(
        learner.predict_learn_block(X[60:], y[60:]), clean.predict_learn_block(X[60:], y[60:])
    )


def test_fogd_learns_on_the_features_its_prediction_computed():
    """learn_one(x, y) after predict_one(x) plays the round on the features the prediction computed (FOGD embedded
    each round twice): the same bits as embedding x again, and never another x's features."""
    X, y = stream(300, 3)
    reused, fresh = make("fogd"), make("fogd")
    for t in range(len(y)):
        ours = reused.predict_one(X[t])
        reused.learn_one(X[t], y[t])
        again = fresh.predict_one(X[t])
        fresh.predict_one(X[(t + 1) % len(y)])  # its learn_one embeds X[t] again
        fresh.learn_one(X[t], y[t])
        assert ours == again, t
    assert np.array_equal(reused.w, fresh.w)


def test_a_numpy_boolean_from_python_is_a_boolean_and_a_string_is_refused():
    """A yes/no key takes a bool (numpy's too, stored as Python's: a run's identity is JSON), never "maybe"."""
    import json

    from okl.registry import identity

    learner = LEARNERS.get("fogd")(3, D=10, orthogonal=np.bool_(True))
    assert learner.params.orthogonal is True and json.dumps(identity(learner.params))
    with pytest.raises(ConfigError, match=r"^learner 'fogd': orthogonal takes true or false \(got 'maybe'\)$"):
        LEARNERS.get("fogd")(3, D=10, orthogonal="maybe")


def test_a_whole_number_for_a_real_key_is_the_same_run_as_its_float():
    """learner.sigma=1 and learner.sigma=1.0 were two runs (two ids, the run played twice, and okl-results averaged the
    copies as seeds); an integer key keeps its integers."""
    import json

    from okl.registry import identity

    ints, floats = (LEARNERS.get("fogd")(3, sigma=s, eta=e, D=10) for s, e in ((1, 2), (1.0, 2.0)))
    assert json.dumps(identity(ints.params)) == json.dumps(identity(floats.params))
    assert type(ints.params.sigma) is float and type(ints.params.D) is int
    ints, floats = (LEARNERS.get("raker")(3, sigma2=s) for s in ([0.1, 1, 10], (0.1, 1.0, 10.0)))  # a list of σ²
    assert json.dumps(identity(ints.params)) == json.dumps(identity(floats.params))
    assert [type(s) for s in ints.params.sigma2] == [float] * 3


@pytest.mark.parametrize("name", ["fogd", "fsgd", "nogd", "rbf_ogd", "kons", "ewa"])
def test_a_loss_of_labels_on_a_regression_stream_is_a_one_line_error(name):
    """fogd with loss=hinge on a regression stream ran to the end and reported a meaningless square loss (4.84)."""
    learner = LEARNERS.get(name)(3, loss="hinge")
    with pytest.raises(
        ConfigError, match=rf"^learner '{name}': loss 'hinge' is a loss of labels, .*learner.loss=square$"
    ):
        learner.check_task("regression")
    learner.check_task("binary")
    LEARNERS.get(name)(3, loss="square").check_task("regression")


def offered(name: str, loss: str) -> bool:
    """Whether the learner of SETTINGS takes ``loss`` (bsgd: hinge only; kors_batch: no hinge)."""
    try:
        make(name, d=2, loss=loss)
    except ConfigError:
        return False
    return True


@pytest.mark.parametrize(
    ("name", "loss"),
    [
        (name, loss)
        for name in sorted(n for n in SETTINGS if "loss" in LEARNERS.get(n).Params.__dataclass_fields__)
        for loss in ("hinge", "logistic")
        if offered(name, loss)
    ],
)
def test_a_binary_loss_of_labels_refuses_a_label_other_than_plus_or_minus_one(name, loss):
    """With loss=hinge or logistic, 2.5, 0 or 0.3 were learned as labels without a word (a 0/1 stream under the
    hinge learns nothing from its zeros); now each is a one-line error before anything changes, ±1 learn."""
    learner = make(name, d=2, loss=loss)
    X = np.random.default_rng(0).uniform(size=(60, 2))
    signs = np.where(X[:, 0] > 0.5, 1.0, -1.0)
    learner.predict_learn_block(X[:30], signs[:30])
    before = learner.predict_many(X[30:])
    for y in (2.5, 0.0, 0.3):
        with pytest.raises(ValueError, match=rf"^{name}: learn_one got the label {y:g}: the {loss} loss takes binary"):
            learner.learn_one(X[30], y)
    with pytest.raises(ValueError, match=rf"^{name}: predict_learn_block got the label 0: .*map the two classes"):
        learner.predict_learn_block(X[30:], (signs[30:] > 0).astype(float))
    np.testing.assert_array_equal(learner.predict_many(X[30:]), before)
    learner.predict_learn_block(X[30:], signs[30:])


def test_the_river_learner_checks_labels_by_its_task():
    """okl's river learner took a classifier's labels 0, 1, 2 from Python as binary (y > 0) and, once multiclass,
    2.5 and −1 as classes of their own: labels now follow the task (binary ±1 until check_task("multiclass"))."""
    learner = LEARNERS.get("river")(2, model="naive_bayes.GaussianNB")
    x = np.zeros(2)
    with pytest.raises(ValueError, match=r"^river: learn_one got the label 2: a binary classifier takes binary labels"):
        learner.learn_one(x, 2.0)
    learner.learn_one(x, -1.0)
    learner.check_task("multiclass")
    for y in (2.5, -1.0):
        with pytest.raises(ValueError, match=rf"^river: learn_one got the label {y:g}: with a multi-class loss"):
            learner.learn_one(x, y)
    for _ in range(3):
        learner.learn_one(x, 2.0)
    assert learner.predict_one(x) == 2.0


@pytest.mark.parametrize("name", ["fsgd", "polk", "bsgd"])
def test_a_multi_class_learner_refuses_a_label_that_is_not_a_class_index_and_stays_as_it_was(name):
    """fsgd, polk and bsgd (multi_hinge by default) took okl's own ±1 labels from Python without a word: −1 indexed
    the last class, 2.7 became class 2, 1e12 asked for 7 TiB. Each is now a one-line error before anything changes;
    0/1 labels learn as before."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(200, 2))
    classes = (X[:, 0] > 0.5).astype(float)
    learner = LEARNERS.get(name)(2)
    learner.predict_learn_block(X[:100], classes[:100])
    before = (learner.model_size, learner.W.copy())
    for y in (-1.0, 2.7, 1e12):
        with pytest.raises(
            ValueError, match=rf"^{name}: learn_one got the label {re.escape(f'{y:g}')}: with a multi-class loss"
        ):
            learner.learn_one(X[100], y)
    signs = np.where(classes[100:] > 0, 1.0, -1.0)
    with pytest.raises(ValueError, match=rf"^{name}: predict_learn_block got the label -1: .* number the classes"):
        learner.predict_learn_block(X[100:], signs)
    assert learner.model_size == before[0] and np.array_equal(learner.W, before[1])
    assert np.mean(learner.predict_learn_block(X[100:], classes[100:]) != classes[100:]) < 0.2
