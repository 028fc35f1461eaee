"""Learners against direct transcriptions of their papers' updates: a few lines of numpy per learner, written from
the equations the test cites (O(n²) or O(n³) on a small stream), and where the learner draws something at random
(a KORS dictionary, random features, coins) the draw is taken from the learner and the rest recomputed."""

from math import factorial

import numpy as np

from helpers import play_blocks, stream
from okl.kernels import Kernel
from okl.learners import LEARNERS


def gaussian(A, B, sigma):
    """k(x, x') = exp(−||x − x'||²/(2σ²))."""
    return np.exp(-((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=-1) / (2 * sigma**2))


def truncated_taylor_kernel(A, B, sigma, M):
    """Σ_{|k|<=M} g_k(x)g_k(x') for the basis of pkawv_jezequel2019 eq. (6):
    e^{−(|x|²+|x'|²)/2σ²} Σ_{j<=M} (xᵀx'/σ²)^j / j! (the multinomial theorem, Appendix F.2)."""
    g = A @ B.T / sigma**2
    sq_a, sq_b = (A * A).sum(axis=1) / (2 * sigma**2), (B * B).sum(axis=1) / (2 * sigma**2)
    return np.exp(-sq_a[:, None] - sq_b[None, :]) * sum(g**j / factorial(j) for j in range(M + 1))


def kernel_awv(K, y, lam, awv):
    """pkawv_jezequel2019 eq. (3)/(4) on the span of a kernel K's features, in its dual form:
    ŷ_t = K[t, :t+1] (K[:t+1, :t+1] + λI)⁻¹ (y_1..y_{t−1}, 0) (AWV: round t's input is in the Gram matrix with
    label 0), or ŷ_t = K[t, :t] (K[:t, :t] + λI)⁻¹ y_{<t} (the ridge twin)."""
    out = np.empty(len(y))
    for t in range(len(y)):
        m = t + 1 if awv else t
        out[t] = K[t, :m] @ np.linalg.solve(K[:m, :m] + lam * np.eye(m), np.append(y[:t], 0.0)[:m])
    return out


def test_pkawv_and_pkrr_taylor_are_kernel_awv_and_ridge_with_the_truncated_taylor_kernel():
    """pkawv_jezequel2019 eq. (4) with H = Span(G_M) (§3.1; the g_k of eq. (6) are orthonormal in the Gaussian RKHS,
    Lemma 12, so ||f||² = ||w||²): f_t is the AWV (or, for pkrr_taylor, §4's ridge without f(x_t)²) solution of the
    kernel Σ_{|k|<=M} g_k(x)g_k(x'), whose closed form (Appendix F.2) needs no feature. M = 3 keeps it far from
    the Gaussian (the check could fail if a feature were missing or scaled)."""
    X, y = stream(150, 3, scale=1.5)
    sigma, lam, M = 0.7, 0.3, 3
    K = truncated_taylor_kernel(X, X, sigma, M)
    assert np.abs(K - gaussian(X, X, sigma)).max() > 0.05
    for name, awv in (("pkawv_taylor", True), ("pkrr_taylor", False)):
        learner = LEARNERS.get(name)(3, M=M, sigma=sigma, lam=lam)
        np.testing.assert_allclose(
            play_blocks(learner, X, y, (7, 40)), kernel_awv(K, y, lam, awv), rtol=1e-9, atol=1e-12
        )


def nystrom_awv(X, y, kernel, dictionary_at, lam, awv):
    """pkawv_jezequel2019 eq. (4) on H_t = Span{φ(z), z ∈ I_t} (``dictionary_at(t)``: the points of I_t): f = Σ_i
    c_i k(z_i, ·), ||f||² = cᵀK_II c, so c = (K_{≤t,I}ᵀK_{≤t,I} + λK_II)⁻¹ K_{<t,I}ᵀ y_{<t} (AWV; the ridge twin
    without row t) and ŷ_t = k_I(x_t)ᵀc."""
    out = np.zeros(len(y))
    for t in range(len(y)):
        Z = dictionary_at(t)
        if not len(Z):
            continue
        rows = kernel(X[: t + 1 if awv else t], Z)
        c = np.linalg.solve(rows.T @ rows + lam * kernel(Z, Z), kernel(X[:t], Z).T @ y[:t])
        out[t] = kernel(X[t : t + 1], Z)[0] @ c
    return out


def test_pkawv_and_pkrr_nystrom_are_eq_4_on_the_span_of_their_kors_dictionary_at_every_round():
    """pkawv_jezequel2019 §3.2, eq. (4) with H_t the span of the KORS dictionary I_t (eq. (8)), solved from scratch
    at each round on the dictionary the learner drew (its rounds ``kors.index``; a point selected at round t is in
    the span of round t, as in Algorithm 2); the beforehand variant (Corollary 8) has the final dictionary of all
    the inputs from round 1. pkrr_nystrom (§4) drops f(x_t)² (tests/test_dictionary_learners.py checks it to 1e-6
    through a least-squares solve; here to round-off)."""
    X, y = stream(200, 3)
    lam, kernel = 0.4, Kernel("gaussian", 0.5)
    for name, awv in (("pkawv_nystrom", True), ("pkrr_nystrom", False)):
        learner = LEARNERS.get(name)(3, sigma=0.5, lam=lam, mu=0.2, seed=3)
        got = play_blocks(learner, X, y, (7, 30))
        joined = learner.kors.index
        assert 10 < len(joined) < 150  # a dictionary that grows during the stream
        expected = nystrom_awv(X, y, kernel, lambda t, joined=joined: X[joined[joined <= t]], lam, awv)
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-11)
    before = LEARNERS.get("pkawv_nystrom_beforehand")(3, sigma=0.5, lam=lam, mu=0.2, seed=3)
    got = play_blocks(before, X, y, (7, 30))
    np.testing.assert_array_equal(before.kors.index, joined)  # KORS reads inputs only: the online one's last dictionary
    expected = nystrom_awv(X, y, kernel, lambda t: before.kors.X, lam, awv=True)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-11)


def h(z, C):
    """h(z) = sign(z) max{|z| − C, 0} (sketched_kons_calandriello2017 eq. (1))."""
    return np.sign(z) * max(abs(z) - C, 0.0)


def ons(F, y, alpha, C, eta, slope=lambda f, y: 2 * (f - y)):
    """ONS with the oblique projection on {w : |φ_tᵀw| <= C}, sketched_kons_calandriello2017 Algorithm 1 / eq. (1),
    on explicit features F (n×j): u_t = ω_{t−1} − A_{t−1}⁻¹g_{t−1}, ω_t = u_t − h(φ_tᵀu_t)/(φ_tᵀA_{t−1}⁻¹φ_t)
    A_{t−1}⁻¹φ_t, ŷ_t = φ_tᵀω_t, g_t = ℓ'(ŷ_t, y_t)φ_t (``slope``: the square loss's by default),
    A_t = A_{t−1} + η_t g_t g_tᵀ (``eta(t)``, t from 1), A_0 = αI."""
    j = F.shape[1]
    A, omega, g, out = alpha * np.eye(j), np.zeros(j), np.zeros(j), np.empty(len(y))
    for t, phi in enumerate(F):
        A_inv = np.linalg.inv(A)
        u = omega - A_inv @ g
        omega = u - h(phi @ u, C) / (phi @ A_inv @ phi) * (A_inv @ phi)
        out[t] = phi @ omega
        g = slope(out[t], y[t]) * phi
        A = A + eta(t + 1) * np.outer(g, g)
    return out


def empirical_features(K):
    """Rows f_s with f_sᵀf_r = K[s, r]: the coordinates of φ(x_1..x_n) in an orthonormal basis of their span, where
    the iterates of KONS stay (w, A⁻¹g and A⁻¹φ all lie in it, A = αI off it)."""
    values, vectors = np.linalg.eigh(K)
    return vectors * np.sqrt(values.clip(0))


def test_kons_is_ons_in_the_span_of_the_inputs():
    """KONS (sketched_kons_calandriello2017 Algorithm 1, eq. (1)) with the Gaussian kernel is ONS on the coordinates of
    φ(x_t) in the span of the inputs (tests/test_dictionary_learners.py checks the linear kernel in R^d), with
    Theorem 1's steps as the docstring sets them: η_t = σ (1/(8C²) for the square loss, e^{−C} for the logistic,
    Assumption 2) and η_t = 1/(LC√t) for the hinge (σ = 0, L = 1). C = 0.6 makes the projection act."""
    X, y = stream(150, 3)
    signs = np.where(y > np.median(y), 1.0, -1.0)
    sigma, alpha, C = 0.8, 0.5, 0.6
    F = empirical_features(gaussian(X, X, sigma))
    cases = (
        ("square", y, lambda t: 1 / (8 * C**2), lambda f, y: 2 * (f - y)),
        ("logistic", signs, lambda t: np.exp(-C), lambda f, y: -y / (1 + np.exp(y * f))),
        ("hinge", signs, lambda t: 1 / (C * np.sqrt(t)), lambda f, y: -y if y * f < 1 else 0.0),
    )
    for loss, labels, eta, slope in cases:
        kons = LEARNERS.get("kons")(3, sigma=sigma, alpha=alpha, C=C, loss=loss)
        expected = ons(F, labels, alpha, C, eta, slope)
        assert np.sum(np.abs(expected) == C) > 10  # projected rounds
        np.testing.assert_allclose(play_blocks(kons, X, labels, (7, 40)), expected, rtol=1e-9, atol=1e-12)


def figure_1(X, y, kernel, joined, alpha, C, eta, slope):
    """PROS-N-KONS, pros_n_kons_calandriello2017 Figure 1 (ℓ' = ``slope``): at round t with z_{t−1} = 1 (x_{t−1} joined
    the dictionary, ``joined``) the map is rebuilt, φ̃(x) = Σ⁻¹Uᵀk_I(x) from K_II = UΣ²Uᵀ (lines 5-8), and
    Ã_{t−1} = αI, ω_t = 0 (lines 9-10); otherwise υ_t = ω_{t−1} − Ã_{t−1}⁻¹g̃_{t−1}, ω_t = υ_t −
    h(φ̃_tᵀυ_t)/(φ̃_tᵀÃ_{t−1}⁻¹φ̃_t) Ã_{t−1}⁻¹φ̃_t (lines 12-13); then ŷ_t = φ̃_tᵀω_t, g̃_t = ℓ'(ŷ_t)φ̃_t,
    Ã_t = Ã_{t−1} + η g̃_t g̃_tᵀ (lines 15-17). Before the first point joins the map is empty and ŷ = 0."""
    out = np.zeros(len(y))
    Z, A, omega, g = X[:0], np.zeros((0, 0)), np.zeros(0), np.zeros(0)
    for t in range(len(y)):
        if t > 0 and t - 1 in joined:
            Z = X[joined[joined < t]]
            values, U = np.linalg.eigh(kernel(Z, Z))
            A, omega = alpha * np.eye(len(Z)), np.zeros(len(Z))
        phi = (U.T @ kernel(Z, X[t : t + 1])[:, 0]) / np.sqrt(values) if len(Z) else np.zeros(0)
        if not (t > 0 and t - 1 in joined) and len(Z):
            A_inv = np.linalg.inv(A)
            upsilon = omega - A_inv @ g
            omega = upsilon - h(phi @ upsilon, C) / (phi @ A_inv @ phi) * (A_inv @ phi)
        out[t] = phi @ omega
        g = slope(out[t], y[t]) * phi
        A = A + eta * np.outer(g, g)
    return out


def test_pros_n_kons_and_b_kons_are_figure_1_on_their_kors_dictionaries():
    """pros_n_kons_calandriello2017 Figure 1 (``figure_1``) on the dictionary the learner's KORS drew (its rounds
    ``kors.index``, drawn again from scratch below); B-KONS (§5) the same on a dictionary that stops at J_max =
    ``budget`` points. The docstring's choices: η = σ (Figure 1 prints σ_t/2): 1/(8C²) for the square loss, e^{−C}
    for the logistic; η = 1 for the hinge (σ = 0); and the Cholesky basis of the embedding in place of Σ⁻¹Uᵀ (an
    orthogonal change of basis, under which ONS is invariant: the test uses Σ⁻¹Uᵀ)."""
    X, y = stream(200, 3)
    signs = np.where(y > np.median(y), 1.0, -1.0)
    sigma, alpha, C = 0.5, 0.5, 0.6
    kernel = Kernel("gaussian", sigma)
    cases = (
        ("square", y, 1 / (8 * C**2), lambda f, y: 2 * (f - y)),
        ("logistic", signs, np.exp(-C), lambda f, y: -y / (1 + np.exp(y * f))),
        ("hinge", signs, 1.0, lambda f, y: -y if y * f < 1 else 0.0),
    )
    for name, extra in (("pros_n_kons", {}), ("b_kons", {"budget": 8})):
        for loss, labels, eta, slope in cases:
            learner = LEARNERS.get(name)(3, sigma=sigma, alpha=alpha, C=C, gamma=0.5, seed=1, loss=loss, **extra)
            got = play_blocks(learner, X, labels, (7, 40))
            joined = learner.kors.index
            assert learner.map.dim == len(joined) > 5  # every point joined a dimension
            assert name == "pros_n_kons" or len(joined) == 8
            expected = figure_1(X, labels, kernel, joined, alpha, C, eta, slope)
            np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


def merge(a_m, a_n, k):
    """BSGD's Gaussian merge of α_m φ(x_m) and α_n φ(x_n) into α_z φ(z), z = h x_m + (1 − h) x_n: α_z = α_m k^{(1−h)²}
    + α_n k^{h²} (k = k(x_m, x_n)), h ∈ [0, 1] maximising ||α_z||² (a bounded scalar search, to 1e-12)."""
    from scipy.optimize import minimize_scalar

    merged = lambda h: a_m * k ** ((1 - h) ** 2) + a_n * k ** (h**2)  # noqa: E731
    h = minimize_scalar(lambda h: -merged(h) @ merged(h), bounds=(0, 1), method="bounded", options={"xatol": 1e-12}).x
    return h, merged(h)


def bsgd(X, y, sigma, eta, lam, budget, merging, classes=None):
    """BSGD (Wang, Crammer & Vucetic 2012, Algorithm 1 and its multi-class version) with the docstring's settings:
    at round t, f ← (1 − η_tλ) f (η_t = η, or 1/(λt) for eta None); if the hinge loss of (x_t, y_t) is positive,
    x_t joins with α = η_t y_t (binary) or η_t (e_{y_t} − e_r), r = argmax_{c≠y_t} f_c(x_t) (classes: those of
    the labels up to y_t); beyond ``budget`` vectors, removal of the smallest ||α_j||, or merging it (m) with the n
    of least weight degradation ||α_m||² + ||α_n||² + 2k_mn α_m·α_n − ||α_z||² (α_z, h of ``merge``). Returns ŷ
    (f(x_t), or argmax_c f_c(x_t) over the classes seen before t) and each round's loss."""
    S, W, seen = X[:0], np.zeros((0, classes or 1)), 0
    out, losses = np.empty(len(y)), np.empty(len(y))
    for t in range(len(y)):
        f = gaussian(X[t : t + 1], S, sigma)[0] @ W if len(S) else np.zeros(W.shape[1])
        step = eta if eta is not None else 1 / (lam * (t + 1))
        if classes is None:
            out[t], losses[t] = f[0], max(0.0, 1 - y[t] * f[0])
            alpha = np.array([step * y[t]])
        else:
            label = int(y[t])
            out[t] = np.argmax(f[:seen]) if seen else 0.0
            seen = max(seen, label + 1)
            others = [c for c in range(seen) if c != label]
            r = max(others, key=lambda c: (f[c], -c)) if others else label
            losses[t] = max(0.0, 1 + f[r] - f[label]) if others else 0.0
            alpha = step * (np.eye(classes)[label] - np.eye(classes)[r])
        W = (1 - step * lam) * W
        if losses[t] > 0:
            S, W = np.vstack([S, X[t]]), np.vstack([W, alpha])
        if len(S) > budget:
            norms = (W * W).sum(axis=1)
            m = int(np.argmin(norms))
            if not merging:
                S, W = np.delete(S, m, axis=0), np.delete(W, m, axis=0)
                continue
            best = None
            for n in range(len(S)):
                if n == m:
                    continue
                k = gaussian(S[m : m + 1], S[n : n + 1], sigma)[0, 0]
                h, alpha_z = merge(W[m], W[n], k)
                loss = norms[m] + norms[n] + 2 * k * W[m] @ W[n] - alpha_z @ alpha_z
                if best is None or loss < best[0]:
                    best = (loss, n, h, alpha_z)
            _, n, h, alpha_z = best
            z = h * S[m] + (1 - h) * S[n]
            keep = [i for i in range(len(S)) if i not in (m, n)]
            S, W = np.vstack([S[keep], z]), np.vstack([W[keep], alpha_z])
    return out, losses


def test_bsgd_is_budgeted_pegasos_with_removal_or_merging():
    """BSGD written out (``bsgd``) with constant steps (POLK's setting, okl's default): the binary hinge and the
    multi-class hinge (Crammer–Singer), each with removal and merging. Removal is exact to round-off; merging's h is
    found by okl's 30 golden-section steps (its docstring's choice, an interval of 0.618³⁰ = 5·10⁻⁷), so merged runs
    agree to that resolution. Pegasos steps are left to the next test: they make the choice of the vector a tie."""
    g = np.random.default_rng(4)
    X = g.uniform(-1, 1, (120, 2))
    signs = np.where(np.sin(3 * X[:, 0]) + X[:, 1] > 0, 1.0, -1.0)
    classes = (np.floor((np.arctan2(X[:, 1], X[:, 0]) + np.pi) / (2 * np.pi / 3)) % 3).astype(float)
    sigma, lam, budget = 0.5, 0.05, 12
    for maintenance, rtol in (("removal", 1e-9), ("merging", 1e-5)):
        for eta in (0.3, 1.0):
            learner = LEARNERS.get("bsgd")(
                2, sigma=sigma, eta=eta, lam=lam, budget=budget, loss="hinge", maintenance=maintenance
            )
            got = learner.predict_learn_block(X, signs)
            expected, losses = bsgd(X, signs, sigma, eta, lam, budget, maintenance == "merging")
            np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol / 10)
            np.testing.assert_allclose(
                learner.recorded["risk"] - learner.recorded["penalty"], losses, rtol=rtol, atol=rtol / 10
            )
        learner = LEARNERS.get("bsgd")(2, sigma=sigma, eta=0.3, lam=lam, budget=budget, maintenance=maintenance)
        got = learner.predict_learn_block(X, classes)
        expected, losses = bsgd(X, classes, sigma, 0.3, lam, budget, maintenance == "merging", classes=3)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_allclose(
            learner.recorded["risk"] - learner.recorded["penalty"], losses, rtol=rtol, atol=rtol / 10
        )
        assert np.sum(losses > 0) > 3 * budget  # the budget is maintained many times


def test_bsgd_with_pegasos_steps_ties_every_coefficient_norm():
    """With η_t = 1/(λt) the shrink 1 − η_tλ = (t − 1)/t makes every α_j equal ±1/(λt) (binary) or of norm
    √2/(λt) (multi-class) whatever its round: removal's and merging's "smallest ||α_j||" is then a tie in exact
    arithmetic, decided in okl by round-off and the slot order (a finding: neither the paper nor the docstring
    says how it is broken)."""
    g = np.random.default_rng(4)
    X = g.uniform(-1, 1, (160, 2))
    for loss, y, norm in (
        ("hinge", np.where(X[:, 0] > 0, 1.0, -1.0), 1.0),
        ("multi_hinge", np.floor(3 * g.random(160)), np.sqrt(2)),
    ):
        learner = LEARNERS.get("bsgd")(2, sigma=0.5, eta=None, lam=0.05, budget=12, loss=loss, maintenance="removal")
        learner.predict_learn_block(X, y)
        assert learner.model_size == 12
        np.testing.assert_allclose(np.linalg.norm(learner.W, axis=1), norm / (0.05 * learner.t), rtol=1e-12)


def dual_sgd(X, y, sigma, lam, budget, k, V, derivative):
    """DUAL-SGD (Le et al. 2016) as the docstring states it: f_t(x) = Σ_{i∈S} α_i k(x_i, x) + wᵀz(x),
    z(x) = D^{−1/2}[sin(Vx); cos(Vx)]; round t: g_t = ℓ'(f_t(x_t), y_t), α and w shrink by 1 − η_tλ = (t − 1)/t
    (η_t = 1/(λt)); if g_t ≠ 0, when S holds ``budget`` vectors the k of smallest |α_i| move to w ← w + Σ α_i z(x_i)
    and leave S (k-merging), then x_t joins with α_t = −η_t g_t."""
    z = lambda A: np.hstack([np.sin(A @ V.T), np.cos(A @ V.T)]) / np.sqrt(len(V))  # noqa: E731
    S, alpha, w, out = X[:0], np.zeros(0), np.zeros(2 * len(V)), np.empty(len(y))
    for t in range(1, len(y) + 1):
        x = X[t - 1 : t]
        out[t - 1] = gaussian(x, S, sigma)[0] @ alpha + z(x)[0] @ w
        g = derivative(out[t - 1], y[t - 1])
        alpha, w = alpha * (t - 1) / t, w * (t - 1) / t
        if g == 0:
            continue
        if len(S) == budget:
            smallest = np.argsort(np.abs(alpha), kind="stable")[:k]
            w = w + z(S[smallest]).T @ alpha[smallest]
            S, alpha = np.delete(S, smallest, axis=0), np.delete(alpha, smallest)
        S, alpha = np.vstack([S, x]), np.append(alpha, -g / (lam * t))
    return out


def test_dual_sgd_merges_its_smallest_coefficients_into_its_random_features():
    """DUAL-SGD written out (``dual_sgd``) past its budget (k-merging every few rounds), with the learner's
    frequencies V: the square loss on a regression stream and the logistic loss on ±1 labels (the hinge is left
    out: with it every |α_i| = 1/(λt), and the k smallest are a tie decided by round-off)."""
    X, y = stream(200, 3)
    sigma, budget, k, D = 0.7, 15, 4, 20
    signs = np.where(y > np.median(y), 1.0, -1.0)
    for loss, labels, lam, slope in (
        ("square", y, 1.0, lambda f, y: 2 * (f - y)),
        ("logistic", signs, 0.05, lambda f, y: -y / (1 + np.exp(y * f))),
    ):
        learner = LEARNERS.get("dual_sgd")(3, sigma=sigma, lam=lam, budget=budget, k=k, D=D, loss=loss, seed=2)
        got = learner.predict_learn_block(X, labels)
        expected = dual_sgd(X, labels, sigma, lam, budget, k, learner.features.V, slope)
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
        assert np.abs(learner.w).max() > 0.01  # the auxiliary space carries what was merged


def hedge(F, y, eta):
    """raker_shen2018 eqs. (13)-(14) with ℓ(ŷ, y) = ½(ŷ − y)²: ŷ_t = Σ_p w̄_{p,t} f_{p,t}(x_t),
    w_{p,t+1} = w_{p,t} exp(−η ℓ(f_{p,t}(x_t), y_t)), w_{p,1} = 1 (F: the experts' predictions, n×P)."""
    w, out = np.ones(F.shape[1]), np.empty(len(y))
    for t in range(len(y)):
        out[t] = w @ F[t] / w.sum()
        w = w * np.exp(-eta * 0.5 * (F[t] - y[t]) ** 2)
    return out


def test_raker_is_eqs_13_to_16_on_its_orthogonal_random_features():
    """Raker (raker_shen2018 Algorithm 1) with P = 3 kernels, written out: z_p(x) = D^{−1/2}[sin(V_p x); cos(V_p x)]
    (eq. (9); the frequencies V_p of eq. (12) taken from the learner), θ_{p,t+1} = θ_{p,t} − η ∇[ℓ + (λ/2)||θ||²]
    (eq. (16) with the docstring's ridge λ of eq. (2)), ℓ = ½(ŷ − y)², combined by eqs. (13)-(14)."""
    X, y = stream(150, 3)
    eta, lam = 0.5, 0.01
    raker = LEARNERS.get("raker")(3, sigma2=(0.1, 1.0, 10.0), D=10, eta=eta, lam=lam, seed=2)
    got = play_blocks(raker, X, y, (7, 40))
    F = np.empty((150, 3))
    for p, expert in enumerate(raker.experts):
        V = expert.features.V
        Z = np.hstack([np.sin(X @ V.T), np.cos(X @ V.T)]) / np.sqrt(len(V))
        theta = np.zeros(Z.shape[1])
        for t in range(150):
            F[t, p] = theta @ Z[t]
            theta = theta - eta * ((F[t, p] - y[t]) * Z[t] + lam * theta)
    assert np.ptp(F[-50:].std(axis=0)) > 0.01  # experts that differ
    np.testing.assert_allclose(got, hedge(F, y, eta), rtol=1e-9, atol=1e-12)


def test_omkl_is_hedge_over_kernel_gradient_descents_in_the_papers_units():
    """OMKL (raker_shen2018 §4's baseline) as its docstring states it: eqs. (13)-(14) over P = 3 Gaussian-kernel
    experts f_{p,t+1} = (1 − ηλ) f_{p,t} − η (f_{p,t}(x_t) − y_t) κ_p(x_t, ·) (ℓ = ½(ŷ − y)² with (λ/2)||f||²), each
    keeping its ``budget`` most recent support vectors (none dropped for budget None)."""
    X, y = stream(120, 3)
    eta, lam, sigma2 = 0.5, 0.01, (0.1, 1.0, 10.0)
    for budget in (None, 25):
        omkl = LEARNERS.get("omkl")(3, sigma2=sigma2, eta=eta, lam=lam, budget=budget)
        got = play_blocks(omkl, X, y, (7, 40))
        F = np.empty((120, 3))
        for p, s2 in enumerate(sigma2):
            coef = np.zeros(0)
            for t in range(120):
                first = 0 if budget is None else max(0, t - budget)
                F[t, p] = gaussian(X[t : t + 1], X[first:t], np.sqrt(s2))[0] @ coef[first:t]
                coef = np.append((1 - eta * lam) * coef, -eta * (F[t, p] - y[t]))
        np.testing.assert_allclose(got, hedge(F, y, eta), rtol=1e-9, atol=1e-12)


def destructive_komp(D, w, eps, kernel):
    """polk_koppel2019 Algorithm 1 from scratch: starting from I = all of D̃, remove the j whose
    γ_j = min_w ||f̃ − Σ_{I∖j} w_k κ(d_k, ·)||_H is least while γ_j <= ε; then w = argmin ||f̃ − wᵀκ_D(·)||_H,
    i.e. K_II⁻¹ K_ID̃ w̃ (eq. (20)). Squared errors from kernel matrices: ||f̃||² − bᵀK_II⁻¹b, b = K_ID̃ w̃."""
    K, index = kernel(D, D), list(range(len(D)))
    total = w @ K @ w

    def error2(kept):
        b = K[kept] @ w
        return total - (b @ np.linalg.solve(K[np.ix_(kept, kept)], b) if kept else 0.0)

    while index:
        gammas = [error2(index[:j] + index[j + 1 :]) for j in range(len(index))]
        j = int(np.argmin(gammas))
        if gammas[j] > eps**2:
            break
        del index[j]
    coef = np.linalg.solve(K[np.ix_(index, index)], K[index] @ w) if index else np.zeros(0)
    return D[index], coef


def test_polk_is_algorithm_2_with_destructive_komp_from_scratch():
    """POLK (polk_koppel2019 Algorithm 2) with mini-batches of b = 4 as its docstring states them (every round of
    mini-batch k predicted by f_k; f̃_{k+1} = (1 − η_kλ) f_k − (η_k/b) Σ_i ℓ'(f_k(x_i), y_i) κ(x_i, ·), eqs. (17)-(18),
    the square loss), each f̃ pruned by Algorithm 1 (``destructive_komp``) with Table 1's budgets: ε = K η^{3/2} for a
    constant step, ε_k = K η_k² for η_k = η/k. okl's choice of holding a point within 10⁻⁶ of the span instead of
    appending it does not arise on these points."""
    X, y = stream(160, 2)
    sigma, lam, b = 0.6, 0.01, 4
    kernel = Kernel("gaussian", sigma)
    for diminishing, eta, K in ((False, 0.5, 0.02), (True, 2.0, 0.05)):
        polk = LEARNERS.get("polk")(
            2, sigma=sigma, eta=eta, lam=lam, loss="square", batch=b, K=K, diminishing=diminishing
        )
        got = play_blocks(polk, X, y, (7, 40))
        D, w, expected, sizes = X[:0], np.zeros(0), np.empty(160), []
        for k, start in enumerate(range(0, 160, b), start=1):
            step = eta / k if diminishing else eta
            eps = K * step**2 if diminishing else K * step**1.5
            rows = slice(start, start + b)
            expected[rows] = kernel(X[rows], D) @ w if len(D) else 0.0
            new = -(step / b) * 2 * (expected[rows] - y[rows])
            D, w = destructive_komp(np.vstack([D, X[rows]]), np.append((1 - step * lam) * w, new), eps, kernel)
            sizes.append(len(D))
        assert 5 < max(sizes) < 100 and min(sizes[5:]) > 3 and sizes[-1] < 4 * len(sizes)  # KOMP prunes, keeps a model
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
        assert polk.model_size == sizes[-1]


def test_fsgd_multi_class_is_eqs_17_18_with_the_losses_26_and_28():
    """FSGD (polk_koppel2019 eqs. (17)-(18), mini-batches of b = 3 with averaged gradients, the docstring's reading)
    with the multi-class hinge (26) (subgradient +1 at r = argmax_{c≠y} f_c, −1 at y when violated) and the
    multi-class logistic loss (28) (gradient softmax(f) − e_y), written out. The docstring's choices: the classes
    grow with the labels, round t predicting argmax_c f_c(x_t) among the classes of y_1..y_{t−1} (0 before any)
    and taking its loss over those of y_1..y_t; the regulariser is the shrink (1 − ηλ)."""
    g = np.random.default_rng(7)
    X = g.uniform(-1, 1, (90, 2))
    y = np.argmax(X @ g.normal(size=(2, 4)) + 0.3 * g.normal(size=(90, 4)), axis=1).astype(float)
    y[:5] = [1, 1, 0, 3, 2]  # classes that appear inside the first mini-batches
    sigma, eta, lam, b = 0.6, 0.8, 0.02, 3
    kernel = Kernel("gaussian", sigma)
    for loss in ("multi_hinge", "multi_logistic"):
        fsgd = LEARNERS.get("fsgd")(2, sigma=sigma, eta=eta, lam=lam, loss=loss, batch=b)
        got = play_blocks(fsgd, X, y, (5, 1, 40))
        D, W, pred, losses = X[:0], np.zeros((0, 4)), np.empty(90), np.empty(90)
        for start in range(0, 90, b):
            G = []
            for t in range(start, start + b):
                f = kernel(X[t : t + 1], D)[0] @ W if len(D) else np.zeros(4)
                before, label = int(y[:t].max()) + 1 if t else 0, int(y[t])
                pred[t] = np.argmax(f[:before]) if before else 0.0
                seen = max(before, label + 1)
                grad = np.zeros(4)
                if loss == "multi_hinge":
                    others = [c for c in range(seen) if c != label]
                    r = others[int(np.argmax(f[others]))] if others else label
                    losses[t] = max(0.0, 1 + f[r] - f[label]) if others else 0.0
                    if losses[t] > 0:
                        grad[r], grad[label] = 1.0, -1.0
                else:
                    p = np.exp(f[:seen] - f[:seen].max()) / np.exp(f[:seen] - f[:seen].max()).sum()
                    losses[t] = -np.log(p[label])
                    grad[:seen] = p - np.eye(seen)[label]
                G.append(grad)
            D, W = np.vstack([D, X[start : start + b]]), np.vstack([(1 - eta * lam) * W, -(eta / b) * np.array(G)])
        np.testing.assert_array_equal(got, pred)
        last = fsgd.recorded["risk"] - fsgd.recorded["penalty"]  # the last block's rounds
        np.testing.assert_allclose(last, losses[-len(last) :], rtol=1e-9, atol=1e-12)
        assert len(np.unique(pred)) > 2 and (losses > 0).mean() > 0.2


class KORSReplay:
    """KORS (sketched_kons_calandriello2017 Algorithm 2) from scratch: at round t, Eq. 4 on the temporary dictionary
    Ī = I ∪ {t} with S = Diag(1/√p̃) (p̃_t = 1), τ̃_t = (1+ε)/α (k̄_tt − k̄_Īᵀ S (Sᵀ K̄_Ī S + αI)⁻¹ Sᵀ k̄_Ī), on the
    rescaled kernel k̄(x_i, x_j) = s_i s_j k(x_i, x_j); p̃_t = min{β τ̃_t, 1}; x_t joins when its coin u_t < p̃_t
    (and a budget leaves room). The coins are the learner's seeded stream (okl.seeding.rng(seed, name))."""

    def __init__(self, kernel, alpha, seed, name, n, eps=0.5, beta=1.0, budget=None):
        from okl.seeding import rng

        self.kernel, self.alpha, self.eps, self.beta, self.budget = kernel, alpha, eps, beta, budget
        self.coins = rng(seed, name).random(n)
        self.X, self.s, self.p, self.index, self.t = None, np.zeros(0), np.zeros(0), [], 0

    def step(self, x, s=1.0):
        Xb, sb = x if self.X is None else np.vstack([self.X, x]), np.append(self.s, s)
        K = np.outer(sb, sb) * self.kernel(Xb, Xb)
        S = np.diag(1 / np.sqrt(np.append(self.p, 1.0)))
        k = K[:, -1]
        tau = (
            (1 + self.eps)
            / self.alpha
            * (K[-1, -1] - k @ S @ np.linalg.solve(S @ K @ S + self.alpha * np.eye(len(Xb)), S @ k))
        )
        p = min(self.beta * tau, 1.0)
        joins = self.coins[self.t] < p and (self.budget is None or len(self.index) < self.budget)
        if joins:
            self.X, self.s, self.p, self.index = Xb, sb, np.append(self.p, p), [*self.index, self.t]
        self.t += 1
        return tau, p, joins


def test_the_kors_dictionaries_of_the_learners_are_algorithm_2_from_scratch():
    """The dictionaries the tests above take from the learners, drawn again by ``KORSReplay`` with the learners' coins:
    pkawv_nystrom's (ridge μ, pkawv_jezequel2019 eq. (8)), PROS-N-KONS's and B-KONS's (ridge γ, budget J_max)."""
    X, _ = stream(200, 3)
    cases = [
        ("pkawv_nystrom", dict(sigma=0.5, lam=0.4, mu=0.2, seed=3), 0.2, None),
        ("pros_n_kons", dict(sigma=0.5, gamma=0.5, seed=1), 0.5, None),
        ("b_kons", dict(sigma=0.5, gamma=0.5, seed=1, budget=8), 0.5, 8),
    ]
    for name, keys, ridge, budget in cases:
        learner = LEARNERS.get(name)(3, **keys)
        learner.predict_learn_block(X, np.zeros(200))
        replay = KORSReplay(Kernel("gaussian", keys["sigma"]), ridge, keys["seed"], "kors", 200, budget=budget)
        for x in X:
            replay.step(x[None, :])
        np.testing.assert_array_equal(learner.kors.index, replay.index)
        assert 5 < len(replay.index) < 150


def test_sketched_kons_with_its_kors_and_coins_from_scratch():
    """Sketched-KONS (sketched_kons_calandriello2017 Algorithm 3) entirely from its equations and its two coin
    streams: ONS (eq. (1)) on the coordinates of φ(x_t) in the span of the inputs, KORS (``KORSReplay``, ridge α)
    on φ̄_t = ġ_t √η_t φ_t (line 8), p̃_t = max{min{β τ̃_t, 1}, γ} (line 9), z_t ~ B(p̃_t) (line 10), and
    Ã_t = Ã_{t−1} + η_t z_t g_t g_tᵀ (line 11, unweighted); z_t counts only for a non-zero gradient. The recursion
    u_{t+1} = ω_t − Ã_t⁻¹g_t (the docstring's "KONS whose preconditioner keeps only sampled gradients") is what okl
    and this test follow; Lemma 4's b̃_i, read literally, keeps the term ỹ_i (from η g_i g_iᵀω_i) at rounds whose
    coin failed too, which agrees only when every gradient is kept (on this stream the literal reading moves the
    predictions by 0.087: a finding, okl's docstring does not say which it follows)."""
    X, y = stream(150, 3)
    sigma, alpha, C, gamma, seed = 0.8, 0.5, 0.6, 0.1, 2
    eta = 1 / (8 * C**2)
    F = empirical_features(gaussian(X, X, sigma))
    kors = KORSReplay(Kernel("gaussian", sigma), alpha, seed, "sketched_kons/kors", 150)
    from okl.seeding import rng

    coins = rng(seed, "sketched_kons/coins").random(150)
    A, omega, g, expected, kept = alpha * np.eye(150), np.zeros(150), np.zeros(150), np.empty(150), []
    for t, phi in enumerate(F):
        A_inv = np.linalg.inv(A)
        u = omega - A_inv @ g
        omega = u - h(phi @ u, C) / (phi @ A_inv @ phi) * (A_inv @ phi)
        expected[t] = phi @ omega
        slope = 2 * (expected[t] - y[t])
        g = slope * phi
        tau, _, _ = kors.step(X[t : t + 1], np.sqrt(eta) * slope)
        if coins[t] < max(min(tau, 1.0), gamma) and slope != 0:
            A = A + eta * np.outer(g, g)
            kept.append(t)
    sketched = LEARNERS.get("sketched_kons")(3, sigma=sigma, alpha=alpha, C=C, gamma=gamma, seed=seed)
    np.testing.assert_allclose(play_blocks(sketched, X, y, (7, 40)), expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(sketched.kept, kept)
    assert 10 < len(kept) < 140 and len(kors.index) > 3
