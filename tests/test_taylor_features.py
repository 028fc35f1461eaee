"""Taylor basis of eq. (6): size, exactness of the truncated kernel, convergence (Lemmas 12-13)."""

from math import comb, exp, factorial, sqrt

import numpy as np
import pytest

from okl.features.taylor import TaylorFeatures, taylor_dim
from okl.kernels import gaussian


def test_one_feature_per_multi_index():
    f = TaylorFeatures(18, 2, 1.0)
    assert f.dim == taylor_dim(18, 2) == comb(20, 2) == 190  # the paper's SUSY run
    assert len({tuple(k) for k in f.exponents}) == f.dim
    assert f.exponents.sum(axis=1).max() == 2
    assert TaylorFeatures(3, 4, 1.0).dim == comb(7, 4)


def test_features_equal_the_product_formula_of_eq_6():
    d, M, sigma = 3, 3, 0.7
    f = TaylorFeatures(d, M, sigma)
    x = np.array([0.3, -0.8, 0.5])
    psi = lambda k, z: z**k / (sigma**k * sqrt(factorial(k))) * exp(-(z * z) / (2 * sigma**2))  # noqa: E731
    direct = [np.prod([psi(int(k_i), z) for k_i, z in zip(k, x, strict=True)]) for k in f.exponents]
    np.testing.assert_allclose(f.transform(x)[0], direct, rtol=1e-13)


def test_inner_products_are_the_truncated_gaussian_kernel():
    """Σ_{|k|<=M} g_k(x)g_k(x') = e^{-(|x|²+|x'|²)/2σ²} Σ_{j<=M} (xᵀx'/σ²)^j / j! (Appendix F.2)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (6, 4))
    sigma = 1.3
    for M in (0, 1, 2, 5):
        F = TaylorFeatures(4, M, sigma).transform(X)
        g = X @ X.T / sigma**2
        sq = (X * X).sum(1) / (2 * sigma**2)
        truncated = np.exp(-sq[:, None] - sq[None, :]) * sum(g**j / factorial(j) for j in range(M + 1))
        np.testing.assert_allclose(F @ F.T, truncated, rtol=1e-12, atol=1e-15)


def test_taylor_kernel_converges_to_the_gaussian_within_lemma_13():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (20, 3))
    sigma = 1.0
    R = np.linalg.norm(X, axis=1).max()
    K = gaussian(X, X, sigma)
    errors = []
    for M in range(1, 13):
        F = TaylorFeatures(3, M, sigma).transform(X)
        err = np.abs(F @ F.T - K).max()
        assert err <= (R / sigma) ** (2 * M + 2) / factorial(M + 1) + 1e-14  # Lemma 13
        errors.append(err)
    assert all(b < a for a, b in zip(errors, errors[1:], strict=False))
    assert errors[-1] < 1e-7


@pytest.mark.parametrize("n", [1, 7])
def test_transform_is_row_wise(n):
    f = TaylorFeatures(5, 2, 2.0)
    X = np.random.default_rng(2).random((n, 5))
    np.testing.assert_array_equal(f.transform(X), np.vstack([f.transform(x) for x in X]))
