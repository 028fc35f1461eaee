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


def test_pkawv_nystrom_is_eq_4_on_the_span_of_its_kors_dictionary_at_every_round():
    """pkawv_jezequel2019 §3.2, eq. (4) with H_t the span of the KORS dictionary I_t (eq. (8)), solved from scratch
    at each round on the dictionary the learner drew (its rounds ``kors.index``; a point selected at round t is in
    the span of round t, as in Algorithm 2); the beforehand variant (Corollary 8) has the final dictionary of all
    the inputs from round 1."""
    X, y = stream(200, 3)
    lam, kernel = 0.4, Kernel("gaussian", 0.5)
    learner = LEARNERS.get("pkawv_nystrom")(3, sigma=0.5, lam=lam, mu=0.2, seed=3)
    got = play_blocks(learner, X, y, (7, 30))
    joined = learner.kors.index
    assert 10 < len(joined) < 150  # a dictionary that grows during the stream
    expected = nystrom_awv(X, y, kernel, lambda t: X[joined[joined <= t]], lam, awv=True)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-11)
    before = LEARNERS.get("pkawv_nystrom_beforehand")(3, sigma=0.5, lam=lam, mu=0.2, seed=3)
    got = play_blocks(before, X, y, (7, 30))
    assert len(before.kors.X) > 10
    expected = nystrom_awv(X, y, kernel, lambda t: before.kors.X, lam, awv=True)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-11)


def h(z, C):
    """h(z) = sign(z) max{|z| − C, 0} (sketched_kons_calandriello2017 eq. (1))."""
    return np.sign(z) * max(abs(z) - C, 0.0)


def ons(F, y, alpha, C, eta, kept=None):
    """ONS with the oblique projection on {w : |φ_tᵀw| <= C}, sketched_kons_calandriello2017 Algorithm 1 / eq. (1)
    (Algorithm 3 with the coins z_s: only the rounds in ``kept`` add η g gᵀ; None: every round), on explicit
    features F (n×j), square loss ℓ' = 2(ŷ − y): u_t = ω_{t−1} − A_{t−1}⁻¹g_{t−1}, ω_t = u_t −
    h(φ_tᵀu_t)/(φ_tᵀA_{t−1}⁻¹φ_t) A_{t−1}⁻¹φ_t, ŷ_t = φ_tᵀω_t, A_t = A_{t−1} + η z_t g_t g_tᵀ, A_0 = αI."""
    j = F.shape[1]
    A, omega, g, out = alpha * np.eye(j), np.zeros(j), np.zeros(j), np.empty(len(y))
    for t, phi in enumerate(F):
        A_inv = np.linalg.inv(A)
        u = omega - A_inv @ g
        omega = u - h(phi @ u, C) / (phi @ A_inv @ phi) * (A_inv @ phi)
        out[t] = phi @ omega
        g = 2 * (out[t] - y[t]) * phi
        if kept is None or t in kept:
            A = A + eta * np.outer(g, g)
    return out


def empirical_features(K):
    """Rows f_s with f_sᵀf_r = K[s, r]: the coordinates of φ(x_1..x_n) in an orthonormal basis of their span, where
    the iterates of KONS stay (w, A⁻¹g and A⁻¹φ all lie in it, A = αI off it)."""
    values, vectors = np.linalg.eigh(K)
    return vectors * np.sqrt(values.clip(0))


def test_kons_and_sketched_kons_are_ons_in_the_span_of_the_inputs():
    """KONS (sketched_kons_calandriello2017 Algorithm 1, eq. (1)) with the Gaussian kernel is ONS on the coordinates of
    φ(x_t) in the span of the inputs; Sketched-KONS (Algorithm 3) the same ONS whose Ã_t adds η_t g_t g_tᵀ only at
    the rounds its coins keep (lines 10-11, unweighted), the kept rounds taken from the learner. The step is the
    docstring's η_t = σ = 1/(8C²) (square loss, Theorem 1); C = 0.6 makes the projection act."""
    X, y = stream(150, 3)
    sigma, alpha, C = 0.8, 0.5, 0.6
    F = empirical_features(gaussian(X, X, sigma))
    kons = LEARNERS.get("kons")(3, sigma=sigma, alpha=alpha, C=C)
    expected = ons(F, y, alpha, C, 1 / (8 * C**2))
    assert np.sum(np.abs(expected) == C) > 10  # projected rounds
    np.testing.assert_allclose(play_blocks(kons, X, y, (7, 40)), expected, rtol=1e-9, atol=1e-12)
    sketched = LEARNERS.get("sketched_kons")(3, sigma=sigma, alpha=alpha, C=C, gamma=0.1, seed=2)
    got = play_blocks(sketched, X, y, (7, 40))
    kept = set(sketched.kept.tolist())
    assert 10 < len(kept) < 140
    np.testing.assert_allclose(got, ons(F, y, alpha, C, 1 / (8 * C**2), kept), rtol=1e-9, atol=1e-12)


def figure_1(X, y, kernel, joined, alpha, C, eta):
    """PROS-N-KONS, pros_n_kons_calandriello2017 Figure 1, square loss: at round t with z_{t−1} = 1 (x_{t−1} joined
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
        g = 2 * (out[t] - y[t]) * phi
        A = A + eta * np.outer(g, g)
    return out


def test_pros_n_kons_and_b_kons_are_figure_1_on_their_kors_dictionaries():
    """pros_n_kons_calandriello2017 Figure 1 (``figure_1``) on the dictionary the learner's KORS drew (its rounds
    ``kors.index``); B-KONS (§5) the same on a dictionary that stops at J_max = ``budget`` points. The docstring's
    choices: η = σ = 1/(8C²) (square loss; Figure 1 prints σ_t/2), and the Cholesky basis of the embedding in
    place of Σ⁻¹Uᵀ (an orthogonal change of basis, under which ONS is invariant: the test uses Σ⁻¹Uᵀ)."""
    X, y = stream(200, 3)
    sigma, alpha, C = 0.5, 0.5, 0.6
    kernel = Kernel("gaussian", sigma)
    for name, extra in (("pros_n_kons", {}), ("b_kons", {"budget": 8})):
        learner = LEARNERS.get(name)(3, sigma=sigma, alpha=alpha, C=C, gamma=0.5, seed=1, **extra)
        got = play_blocks(learner, X, y, (7, 40))
        joined = learner.kors.index
        assert learner.map.dim == len(joined) > 5  # every point joined a dimension
        assert name == "pros_n_kons" or len(joined) == 8
        np.testing.assert_allclose(got, figure_1(X, y, kernel, joined, alpha, C, 1 / (8 * C**2)), rtol=1e-9, atol=1e-12)
