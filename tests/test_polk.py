"""POLK and its relatives (polk_koppel2019): KOMP's budget and eq. (20), FSGD by hand, POLK with ε = 0,
the model order on multidist, multi-class losses, BSGD's budget maintenance, held-out checkpoints."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.spatial.distance
import scipy.stats

from helpers import only_run, play_blocks, play_loop, relative_gap, stream
from okl.datasets import DATASETS
from okl.dictionary.komp import KernelDictionary, komp
from okl.kernels import Kernel
from okl.learners import LEARNERS
from okl.losses import multiclass_loss

KERNEL = Kernel("gaussian", 0.7)
SIGMA = float(np.sqrt(0.6))  # §5: σ̃² = 0.6


def candidate(n_old=12, n_new=5, C=3, seed=0):
    """A dictionary of n_old points with coefficients, and n_new new points with theirs."""
    g = np.random.default_rng(seed)
    X = g.random((n_old + n_new, 2)) * 2
    W = g.standard_normal((n_old + n_new, C))
    dictionary = KernelDictionary(2, KERNEL)
    np.testing.assert_array_equal(komp(dictionary, np.zeros((0, C)), X[:n_old], W[:n_old], 0.0), W[:n_old])
    return dictionary, X, W


def approximation_error(S, U, X, W):
    """||Σ U_s κ(S_s, ·) − Σ W_m κ(X_m, ·)||_H from kernel matrices."""
    e2 = np.einsum("ic,ij,jc->", U, KERNEL(S, S), U) - 2 * np.einsum("ic,ij,jc->", U, KERNEL(S, X), W)
    return np.sqrt(max(e2 + np.einsum("ic,ij,jc->", W, KERNEL(X, X), W), 0.0))


@pytest.mark.parametrize("eps", [0.05, 0.3, 1.0])
def test_komp_stays_within_its_budget_and_stops_greedily(eps):
    dictionary, X, W = candidate()
    U = komp(dictionary, W[:12], X[12:], W[12:], eps)
    S = dictionary.X
    assert len(S) < len(X)  # it pruned
    assert approximation_error(S, U, X, W) <= eps * (1 + 1e-9)
    for j in range(len(S)):  # Algorithm 1 stops: removing any further element would exceed ε
        rest = np.delete(S, j, 0)
        best = np.linalg.solve(KERNEL(rest, rest), KERNEL(rest, X) @ W)
        assert approximation_error(rest, best, X, W) > eps


def test_komp_coefficients_are_eq_20():
    """w = K_DD⁻¹ K_DD̃ w̃ on the pruned dictionary (solved directly), and K_DD⁻¹ is the inverse."""
    dictionary, X, W = candidate(seed=1)
    U = komp(dictionary, W[:12], X[12:], W[12:], 0.3)
    S = dictionary.X
    direct = np.linalg.lstsq(KERNEL(S, S), KERNEL(S, X) @ W, rcond=None)[0]
    np.testing.assert_allclose(U, direct, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(dictionary.K_inv @ KERNEL(S, S), np.eye(len(S)), atol=1e-8)


def greedy_by_hand(X, W, eps):
    """Algorithm 1 from kernel matrices: from S = every point, remove the element whose removal leaves the least
    ||f̃ − P_S f̃||_H while that stays within ε (each error by a direct solve); the points kept."""
    K = KERNEL(X, X)
    total = np.einsum("ic,ij,jc->", W, K, W)

    def error2(S):
        if not S:
            return total
        v = K[S] @ W
        return total - np.einsum("ic,ic->", v, np.linalg.solve(K[np.ix_(S, S)], v))

    S = list(range(len(X)))
    while S:
        errors = [error2(S[:j] + S[j + 1 :]) for j in range(len(S))]
        j = int(np.argmin(errors))
        if errors[j] > eps * eps:
            break
        del S[j]
    return X[S]


@pytest.mark.parametrize(("old", "eps"), [(60, 0.2), (100, 0.5)])
def test_komp_appends_a_batch_at_once_and_prunes_as_algorithm_1_one_at_a_time(old, eps):
    """KOMP appends a mini-batch's points by one block update of K_DD⁻¹ and applies its removals' downdates
    together (DEFER at a time); the points it keeps are those of the greedy removals done one by one from kernel
    matrices, and K_DD, K_DD⁻¹ stay the kernel matrix of its points and its inverse. The second case removes more
    than DEFER points in one call (82 of 116)."""
    from okl.dictionary.komp import DEFER

    g = np.random.default_rng(2)
    X, W = g.random((old + 16, 3)) * 2.5, g.standard_normal((old + 16, 3)) * 0.2
    dictionary = KernelDictionary(3, KERNEL)
    komp(dictionary, np.zeros((0, 3)), X[:old], W[:old], 0.0)
    assert dictionary.size == old  # every point outside the others' span
    U = komp(dictionary, W[:old], X[old:], W[old:], eps)
    S = dictionary.X
    assert {tuple(p) for p in S} == {tuple(p) for p in greedy_by_hand(X, W, eps)}
    assert (len(X) - len(S) > DEFER) == (old == 100)
    np.testing.assert_allclose(dictionary.K, KERNEL(S, S), rtol=0, atol=1e-14)
    np.testing.assert_allclose(dictionary.K_inv @ KERNEL(S, S), np.eye(len(S)), atol=1e-8)
    np.testing.assert_allclose(U, np.linalg.solve(KERNEL(S, S), KERNEL(S, X) @ W), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("diminishing", [False, True])
def test_fsgd_is_the_functional_gradient_recursion_by_hand(diminishing):
    """Mini-batches of b = 3 with the square loss: f̃ = (1 − η_k λ) f − (η_k/b) Σ_i 2(f(x_i) − y_i) κ(x_i, ·),
    η_k = η or η/k (Table 1)."""
    X, y = stream(40, 2)
    eta, lam, b = 0.4, 0.05, 3
    fsgd = LEARNERS.get("fsgd")(2, sigma=0.7, eta=eta, lam=lam, loss="square", batch=b, diminishing=diminishing)
    got = play_loop(fsgd, X, y)
    points, coef, expected = np.zeros((0, 2)), np.zeros(0), np.empty(40)
    for k, start in enumerate(range(0, 40, b), start=1):
        step = eta / k if diminishing else eta
        rows = slice(start, min(start + b, 40))
        f = KERNEL(X[rows], points) @ coef if len(coef) else np.zeros(len(y[rows]))
        expected[rows] = f
        coef = np.concatenate([(1 - step * lam) * coef, -(step / b) * 2 * (f - y[rows])])
        points = np.vstack([points, X[rows]])
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    polk = LEARNERS.get("polk")(2, eta=eta, K=0.5, diminishing=diminishing)
    assert polk.eps == pytest.approx(0.5 * eta**2 if diminishing else 0.5 * eta**1.5)  # Table 1


def multidist_head(n, seed=0):
    X, y = next(DATASETS.get("multidist")(seed=seed).chunks())
    return X[:n], y[:n]


@pytest.mark.parametrize(
    ("name", "keys"),
    [("polk", {"K": 0.01, "batch": 4, "eta": 2.0}), ("fsgd", {"batch": 4, "eta": 2.0}), ("bsgd", {"budget": 20})],
)
def test_the_recorded_penalty_is_half_lambda_times_the_squared_norm_and_the_rest_of_the_risk_the_loss(name, keys):
    """Table 3's risks: okl's risk is the loss plus (λ/2)Σ_c||f_c||² of the model that predicted the round; the
    ``penalty`` column is that second term, checked against W_cᵀ K_DD W_c of the model before each round (played
    round by round), and the risk less it against the multi-class hinge loss of that model's activations."""
    X, y = multidist_head(200)
    lam = 0.01
    learner = LEARNERS.get(name)(2, sigma=SIGMA, lam=lam, loss="multi_hinge", **keys)
    penalties, losses, recorded = [], [], []
    for t in range(len(y)):
        A = learner.activations(X[t : t + 1])
        if A.shape[1] > y[t]:  # every class up to y_t seen before: the loss is the activations' own
            losses.append((t, multiclass_loss("multi_hinge", A, y[t : t + 1])[0][0]))
        W, D = learner.W, learner.X
        penalties.append(0.5 * lam * float(np.einsum("ic,ij,jc->", W, learner.kernel(D, D), W)) if len(D) else 0.0)
        learner.predict_learn_block(X[t : t + 1], y[t : t + 1])
        recorded.append((learner.recorded["risk"][0], learner.recorded["penalty"][0]))
    risk, penalty = np.array(recorded).T
    np.testing.assert_allclose(penalty, penalties, rtol=1e-9, atol=1e-12)
    assert penalty[-1] > 0.01  # the check is not vacuous
    at, loss = np.array(losses).T
    np.testing.assert_allclose((risk - penalty)[at.astype(int)], loss, rtol=1e-9, atol=1e-12)


def test_polk_with_a_small_budget_prunes_through_komp_yet_tracks_fsgd():
    """K = 10⁻⁴ (ε = 1.5·10⁻³) goes through KOMP, which prunes most points; ||f − f̃|| <= ε each mini-batch
    keeps the risk and the predicted classes those of FSGD, which keeps every point."""
    X, y = multidist_head(600)
    settings = dict(sigma=SIGMA, eta=6.0, batch=8)
    polk = LEARNERS.get("polk")(2, K=1e-4, **settings)
    fsgd = LEARNERS.get("fsgd")(2, **settings)
    np.testing.assert_array_equal(polk.predict_learn_block(X, y), fsgd.predict_learn_block(X, y))
    assert polk.model_size < 300 and fsgd.model_size == 600
    np.testing.assert_allclose(polk.recorded["risk"], fsgd.recorded["risk"], rtol=0, atol=2e-3)


def test_a_budget_below_komps_resolution_is_a_clear_error(okl_run, results_root):
    """K = 10⁻⁹ made K_DD numerically singular and the risk drift from FSGD's by up to 70: now the run stops
    with a one-line error that says what to change, recorded in its manifest."""
    keys = ("learner=polk", "dataset=multidist", "n=2000", f"sigma={SIGMA}", "learner.eta=6", "learner.batch=32")
    code, _, err = okl_run(*keys, "learner.K=1e-9", "progress=false")
    assert code == 2 and "numerically singular" in err and "raise K (K=1e-09 now), or set K=0" in err
    assert err.count("\n") == 1
    m = only_run(results_root).manifest()
    assert m.status == "failed" and m.rounds < 2000 and "numerically singular" in m.error


def test_polk_with_zero_budget_is_fsgd():
    X, y = multidist_head(600)
    settings = dict(sigma=SIGMA, eta=6.0, batch=8)
    polk = LEARNERS.get("polk")(2, K=0.0, **settings)
    fsgd = LEARNERS.get("fsgd")(2, **settings)
    np.testing.assert_array_equal(polk.predict_learn_block(X, y), fsgd.predict_learn_block(X, y))
    np.testing.assert_array_equal(polk.recorded["risk"], fsgd.recorded["risk"])
    assert polk.model_size == fsgd.model_size == 600


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_polk_model_order_settles_near_the_15_modes(seed):
    """§5.2: K = 0.04 (η = 6, b = 32) keeps a model order near the 15 modes of the mixture."""
    X, y = multidist_head(5000, seed)
    polk = LEARNERS.get("polk")(2, sigma=SIGMA, eta=6.0, batch=32, K=0.04)
    polk.predict_learn_block(X, y)
    sizes = polk.recorded["model_size"][-2000:]
    assert sizes.min() >= 12 and sizes.max() <= 22


def test_polk_error_tracks_the_bayes_error_of_multidist():
    """With the text's generator (σ² = 0.2, σ_y² = 1), the classes overlap: the Bayes error is about 1/3.
    POLK's held-out error is within 5 points of it; on a separated variant (σ² = σ_y² = 0.04) it is <= 5%."""
    for params, slack in (({}, 0.05), ({"mode_var": 0.04, "mean_var": 0.04}, 0.03)):
        ds = DATASETS.get("multidist")(**params)
        (X, y), (Xt, yt) = next(ds.chunks()), ds.test_set()
        polk = LEARNERS.get("polk")(2, sigma=SIGMA, eta=6.0, batch=32, K=0.04)
        polk.predict_learn_block(X, y)
        error = np.mean(polk.predict_many(Xt) != yt)
        assert error <= ds.bayes_error() + slack
    assert ds.bayes_error() < 0.03 and error <= 0.05


def test_multidist_centres_are_on_the_circle_and_its_variances_are_the_papers():
    """θ_c = (cos 2πc/C, sin 2πc/C); μ_{c,j} − θ_c ~ N(0, σ_y² I); x − μ_{y,j} ~ N(0, σ² I)."""
    theta = np.array([[np.cos(2 * np.pi * c / 5), np.sin(2 * np.pi * c / 5)] for c in range(5)])
    ds = DATASETS.get("multidist")(modes=4000, mean_var=0.5)  # many means: their law is measurable
    offsets = ds.means - theta[:, None, :]
    np.testing.assert_allclose(offsets.mean(axis=1), 0.0, atol=0.05)
    np.testing.assert_allclose(offsets.reshape(-1, 2).var(axis=0), 0.5, rtol=0.05)
    one = DATASETS.get("multidist")(modes=1, mean_var=1e-12, mode_var=0.3, length=20000)
    np.testing.assert_allclose(one.means[:, 0, :], theta, atol=1e-5)
    X, y = next(one.chunks())
    residual = X - theta[y.astype(int)]
    np.testing.assert_allclose(residual.mean(axis=0), 0.0, atol=0.02)
    np.testing.assert_allclose(residual.var(axis=0), 0.3, rtol=0.05)


def test_multidist_is_the_papers_mixture():
    ds = DATASETS.get("multidist")()
    (X, y), (Xt, _) = next(ds.chunks()), ds.test_set()
    assert X.shape == (5000, 2) and Xt.shape == (2500, 2) and ds.task == "multiclass"
    assert set(np.unique(y)) == {0, 1, 2, 3, 4} and np.bincount(y.astype(int)).min() > 900
    assert ds.means.shape == (5, 3, 2)  # 15 modes around θ_c on the unit circle
    np.testing.assert_allclose(ds.means.mean(axis=(0, 1)), 0.0, atol=1.0)
    assert not np.isin(Xt[:, 0], X[:, 0]).any()  # a separate draw
    again = DATASETS.get("multidist")()
    np.testing.assert_array_equal(next(again.chunks())[0], X)


def test_multiclass_losses_and_gradients():
    g = np.random.default_rng(3)
    A, y = g.standard_normal((6, 4)), np.array([0, 1, 2, 3, 0, 1], dtype=float)
    values, G = multiclass_loss("multi_logistic", A, y)
    for i in range(6):  # central differences of log Σ exp − f_y
        for c in range(4):
            step = np.zeros(4)
            step[c] = 1e-6
            up, down = (multiclass_loss("multi_logistic", (A[i] + s)[None], y[i : i + 1])[0][0] for s in (step, -step))
            assert G[i, c] == pytest.approx((up - down) / 2e-6, abs=1e-6)
    values, G = multiclass_loss("multi_hinge", A, y)
    for i in range(6):
        r = max((c for c in range(4) if c != y[i]), key=lambda c: A[i, c])
        assert values[i] == pytest.approx(max(0.0, 1 + A[i, r] - A[i, int(y[i])]))
        expected = np.zeros(4)
        if values[i] > 0:
            expected[r], expected[int(y[i])] = 1.0, -1.0
        np.testing.assert_array_equal(G[i], expected)


@pytest.mark.parametrize("maintenance", ["removal", "merging"])
def test_bsgd_keeps_its_budget_and_its_norm(maintenance):
    X, y = multidist_head(400)
    bsgd = LEARNERS.get("bsgd")(2, sigma=SIGMA, budget=10, maintenance=maintenance)
    bsgd.predict_learn_block(X, y)
    assert bsgd.recorded["model_size"].max() == 10
    K = Kernel("gaussian", SIGMA)(bsgd.X, bsgd.X)
    assert bsgd.norm2 == pytest.approx(np.einsum("ic,ij,jc->", bsgd.W, K, bsgd.W), rel=1e-8)


@pytest.mark.parametrize("maintenance", ["removal", "merging"])
def test_bsgd_keeps_its_scaled_support_vectors_in_step_and_its_kernel_is_the_gaussians_to_the_bit(maintenance):
    """BSGD keeps X/σ and its half squared norms beside X (every kernel call rescaled and summed the whole budget:
    66 of 90 s on MNIST at B = 3,731); after inserts, merges and removals they are X's, and its activations are
    those of the Gaussian kernel computed afresh, bit for bit."""
    from okl.kernels import half_norms

    X, y = multidist_head(400)
    bsgd = LEARNERS.get("bsgd")(2, sigma=SIGMA, budget=10, maintenance=maintenance)
    bsgd.predict_learn_block(X, y)
    np.testing.assert_array_equal(bsgd.Xs, bsgd.X / SIGMA)
    np.testing.assert_array_equal(bsgd.half, half_norms(bsgd.X / SIGMA))
    queries = X[:50] + 0.1
    fresh = bsgd.kernel(queries, bsgd.X)  # the Gaussian from the support vectors themselves
    np.testing.assert_array_equal(bsgd.support_kernel(queries), fresh)
    np.testing.assert_array_equal(bsgd.activations(queries), fresh @ bsgd.W)


def test_bsgd_removal_drops_the_smallest_vector_and_merging_finds_the_best_h():
    bsgd = LEARNERS.get("bsgd")(2, sigma=SIGMA, budget=3, maintenance="removal", loss="hinge")
    for x, alpha in zip([[0.0, 0], [1, 0], [0, 1], [1, 1]], [1.0, 0.1, -2.0, 0.5], strict=True):
        bsgd._insert(np.array(x), np.array([alpha]))
    bsgd._maintain()
    assert sorted(map(tuple, bsgd.X)) == [(0.0, 0.0), (0.0, 1.0), (1.0, 1.0)]
    assert sorted(bsgd.W[:, 0]) == [-2.0, 0.5, 1.0]
    from okl.learners.budgeted.bsgd import _best_merge

    k, wm, wn, cross = np.array([0.3, 0.8]), 1.0, np.array([2.0, 0.5]), np.array([1.2, 0.6])
    h, best = _best_merge(k, wm, wn, cross)
    grid = np.linspace(0, 1, 100001)[:, None]
    a, b = k ** ((1 - grid) ** 2), k ** (grid**2)
    values = wm * a * a + wn * b * b + 2 * cross * a * b
    np.testing.assert_allclose(best, values.max(axis=0), rtol=1e-8)


def test_held_out_checkpoints_score_the_learner(okl_run, results_root):
    assert okl_run("learner=polk", "dataset=multidist", "n=1000", "checkpoints=4", "progress=false")[0] == 0
    run = only_run(results_root, learner="polk", dataset="multidist", seed=0)
    test = run.heldout().to_pandas()
    assert test.t.tolist() == [250, 500, 750, 1000]
    X, y = multidist_head(1000)
    polk = LEARNERS.get("polk")(2, sigma=1.0, eta=6.0, batch=32, K=0.04)
    polk.predict_learn_block(X, y)
    Xt, yt = DATASETS.get("multidist")().test_set()
    assert test.test_loss.iloc[-1] == np.mean(polk.predict_many(Xt) != yt)
    assert test.model_size.iloc[-1] == polk.model_size
    rounds = pd.read_parquet(run.rounds_path)
    assert {"risk", "model_size"} <= set(rounds.columns)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ["learner=polk", "dataset=synthetic", "learner.loss=multi_hinge"],
            "does not fit regression datasets; set learner.loss=square\n",
        ),
        (
            ["learner=fsgd", "dataset=multidist", "learner.loss=square"],
            "set learner.loss=multi_hinge or multi_logistic",
        ),
        (["learner=bsgd", "dataset=synthetic"], "does not handle regression datasets"),
        (["learner=polk", "dataset=multidist", "learner.eta=2", "learner.lam=0.6"], "eta·lam must be < 1"),
    ],
)
def test_bad_settings_are_one_line_errors(okl_run, overrides, message):
    code, _, err = okl_run(*overrides, "n=10")
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_polk_stays_well_conditioned_with_a_small_budget(seed):
    """K = 10⁻⁴ (ε = 0.0015): points within the span tolerance are projected, not appended, so K_DD keeps
    a moderate condition number and the risk stays bounded (it diverged with a 10⁻¹⁰ tolerance)."""
    X, y = multidist_head(5000, seed)
    polk = LEARNERS.get("polk")(2, sigma=SIGMA, eta=6.0, batch=32, K=1e-4)
    polk.predict_learn_block(X, y)
    assert np.linalg.cond(polk.dictionary.K) < 1e9
    assert polk.recorded["risk"][-250:].mean() < 1.5
    assert polk.model_size > 60  # a small budget keeps many more points than the 15 modes


def test_a_timed_out_run_keeps_its_checkpoints(okl_run, results_root):
    keys = ("learner=polk", "dataset=multidist", "n=1000", "checkpoints=4", "timeout_s=1e-9", "progress=false")
    assert okl_run(*keys)[0] == 0
    run = only_run(results_root, learner="polk", dataset="multidist", seed=0)
    manifest = run.manifest()
    assert manifest.status == "timeout" and manifest.rounds == 250  # the first block ends at the checkpoint
    assert run.heldout()["t"].to_pylist() == [250]


def near_duplicates(trial):
    """A dictionary, and a mini-batch of 4 new points within 10^-4.5 .. 10^-2 of one of its points (so
    that some are numerically in its span), with ε in [10⁻³, 10⁻¹]."""
    g = np.random.default_rng(trial)
    dictionary, X, W = candidate(seed=trial % 5)
    base = X[g.integers(12)]
    scale = 10 ** g.uniform(-4.5, -2, size=4)
    X_new = base + g.standard_normal((4, 2)) * scale[:, None]
    W_new = g.standard_normal((4, 3))
    return dictionary, X[:12], W[:12], X_new, W_new, 10 ** g.uniform(-3, -1)


@pytest.mark.parametrize("trials", [[2144], range(400)])
def test_komp_budget_holds_with_near_duplicate_points_in_one_mini_batch(trials):
    """Trial 2144 reached ||f − f̃|| = 1.27 ε when in-span points were projected one by one and their
    errors added without the cross terms; the bound now holds on every trial."""
    for trial in trials:
        dictionary, X, W, X_new, W_new, eps = near_duplicates(trial)
        U = komp(dictionary, W, X_new, W_new, eps)
        error = approximation_error(dictionary.X, U, np.vstack([X, X_new]), np.vstack([W, W_new]))
        assert error <= eps * (1 + 1e-6), trial


@pytest.mark.parametrize(("radius", "sd"), [(1.0, 0.5), (3.0, 2.0)])
def test_the_monte_carlo_bayes_error_is_the_exact_one_of_two_gaussians(radius, sd):
    """Two classes, one mode each at (±r, 0) (the means' spread ~0): the Bayes error is Φ(−r/σ)."""
    ds = DATASETS.get("multidist")(classes=2, modes=1, mean_var=1e-12, mode_var=sd**2, radius=radius)
    estimate, se = ds.bayes_error_mc()
    assert se < 1e-3 and abs(estimate - scipy.stats.norm.cdf(-radius / sd)) < 4 * se


def test_the_batch_reference_is_the_kernel_ridge_one_vs_rest_fit():
    """α = (K + nλI)⁻¹Y, Y the ±1 class codes, ŷ = argmax k(x)ᵀα, with §5.3's σ̃² = 0.6 and λ = 1e-6."""
    ds = DATASETS.get("multidist_radius")(length=200, test=100, seed=3)
    (X, y), (Xt, yt) = next(ds.chunks()), ds.test_set()
    K = np.exp(-scipy.spatial.distance.cdist(X, X, "sqeuclidean") / 1.2)
    Y = np.where(y[:, None] == np.arange(5), 1.0, -1.0)
    alpha = np.linalg.solve(K + 200 * 1e-6 * np.eye(200), Y)
    scores = np.exp(-scipy.spatial.distance.cdist(Xt, X, "sqeuclidean") / 1.2) @ alpha
    assert ds.batch_error() == np.mean(scores.argmax(axis=1) != yt)


def test_the_readings_of_section_5_2_keep_the_texts_run_ids():
    """radius was added after the runs of the text's reading existed: at its default it is not in their identity."""
    from okl.registry import identity

    assert "radius" not in identity(DATASETS.get("multidist")().params)
    assert identity(DATASETS.get("multidist")(radius=3.0).params)["radius"] == 3.0
    radius = DATASETS.get("multidist_radius")()
    assert (radius.params.radius, radius.params.mode_var, radius.params.mean_var) == (3.0, 0.2, 1.0)
    sd = DATASETS.get("multidist_sd")()
    assert (sd.params.mode_var, sd.params.mean_var) == (0.04, 1.0)


def test_a_mini_batch_summed_gives_each_point_eq_18s_weight():
    """batch_step=sum: each point of a mini-batch weighs −η ℓ' (eq. (18)); mean: −(η/b) ℓ'. One batch from f = 0."""
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (8, 2)), rng.integers(0, 3, 8).astype(float)
    keys = dict(sigma=0.5, eta=0.4, batch=8, loss="multi_hinge")
    mean, summed = LEARNERS.get("fsgd")(2, **keys), LEARNERS.get("fsgd")(2, batch_step="sum", **keys)
    mean.predict_learn_block(X, y)
    summed.predict_learn_block(X, y)
    np.testing.assert_allclose(summed.W, 8 * mean.W, rtol=1e-15)
    assert np.abs(mean.W).max() > 0


def test_komp_keeps_a_summed_batchs_points_where_it_prunes_every_averaged_one():
    """POLK at MNIST's η = 24 and K = 0.16 (ε = K η^{3/2} = 18.8): averaged, a new point weighs ≤ 24/32 and KOMP
    prunes all of them; summed (eq. (18)'s weight), it keeps some; both the same in blocks as round by round."""
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(320, 4)), rng.integers(0, 4, 320).astype(float)
    keys = dict(sigma=1.0, eta=24.0, K=0.16, batch=32, lam=1e-6, loss="multi_hinge")
    sizes = {}
    for step in ("mean", "sum"):
        learner = LEARNERS.get("polk")(4, batch_step=step, **keys)
        blocks = play_blocks(learner, X, y, (50, 7, 100))
        assert relative_gap(blocks, play_loop(LEARNERS.get("polk")(4, batch_step=step, **keys), X, y)) < 1e-9
        sizes[step] = learner.model_size
    assert sizes["mean"] == 0 and sizes["sum"] > 0
