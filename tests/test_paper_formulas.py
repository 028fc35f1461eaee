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
