"""Random Fourier features: the sincos kernel, normalisation and unbiasedness of the kernel estimate."""

import numpy as np
import pytest

from okl.features import random_fourier
from okl.features.random_fourier import RandomFourierFeatures
from okl.features.sincos import sincos_rows
from okl.kernels import gaussian


def test_sincos_matches_numpy():
    rng = np.random.default_rng(0)
    A = np.concatenate([rng.uniform(-10, 10, 5000), rng.uniform(-1e5, 1e5, 5000), [0.0, np.pi / 4, -np.pi]])
    A = A.reshape(1, -1)
    out = np.empty((1, 2 * A.shape[1]))
    sincos_rows(A, 1.0, out)
    n = A.shape[1]
    assert np.abs(out[0, :n] - np.sin(A[0])).max() <= 4.5e-16
    assert np.abs(out[0, n:] - np.cos(A[0])).max() <= 4.5e-16


def test_sincos_falls_back_beyond_its_reduction_range():
    A = np.array([[1e9, -3e12, 2.0]])
    out = np.empty((1, 6))
    sincos_rows(A, 0.5, out)
    np.testing.assert_allclose(out[0], 0.5 * np.concatenate([np.sin(A[0]), np.cos(A[0])]), rtol=1e-15)


def test_features_have_unit_norm_and_are_row_wise():
    f = RandomFourierFeatures(d=4, D=50, sigma=1.5, seed=3)
    X = np.random.default_rng(1).random((9, 4))
    Z = f.transform(X)
    assert Z.shape == (9, 100)
    np.testing.assert_allclose((Z * Z).sum(axis=1), 1.0, rtol=1e-14)
    np.testing.assert_allclose(Z, np.vstack([f.transform(x) for x in X]), rtol=0, atol=1e-15)


def test_kernel_estimate_is_unbiased():
    """Mean of z(x)ᵀz(x') over independent draws of V equals k(x, x') within 4 standard errors."""
    X = np.random.default_rng(2).random((5, 3))
    K = gaussian(X, X, 0.8)
    estimates = []
    for seed in range(300):
        Z = RandomFourierFeatures(d=3, D=20, sigma=0.8, seed=seed).transform(X)
        estimates.append(Z @ Z.T)
    estimates = np.array(estimates)
    mean, se = estimates.mean(0), estimates.std(0, ddof=1) / np.sqrt(len(estimates))
    off = ~np.eye(5, dtype=bool)
    assert (np.abs(mean - K)[off] <= 4 * se[off]).all()


def test_kernel_estimate_spread_shrinks_like_one_over_sqrt_D():
    X = np.random.default_rng(3).random((4, 3))

    def spread(D):
        draws = [RandomFourierFeatures(3, D, 0.8, s).transform(X) for s in range(200)]
        return np.array([Z @ Z.T for Z in draws]).std(0)[~np.eye(4, dtype=bool)].mean()

    ratio = spread(80) / spread(20)
    assert 0.4 < ratio < 0.6  # 1/√4 = 0.5


def test_seed_determines_the_frequencies():
    a, b, c = (RandomFourierFeatures(3, 10, 1.0, s).V for s in (5, 5, 6))
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_orthogonal_rows_are_orthogonal_within_a_block_and_gaussian_in_norm():
    """raker_shen2018 eq. (12): V = σ⁻¹SQ per block of d rows; D > d stacks independent blocks."""
    d, D, sigma = 5, 12, 0.7
    V = RandomFourierFeatures(d, D, sigma, seed=4, orthogonal=True).V
    assert V.shape == (D, d)
    for a in range(0, D, d):
        block = V[a : a + d] * sigma
        gram = block @ block.T
        np.testing.assert_allclose(gram - np.diag(np.diag(gram)), 0, atol=1e-12)
    assert not np.allclose((V[:5] * sigma) @ (V[5:10] * sigma).T, 0, atol=1e-3)  # blocks are independent
    # row norms are χ_d like Gaussian rows: σ²||v||² ~ χ²_d, mean d and variance 2d (a constant √d fails)
    norms = np.concatenate([(RandomFourierFeatures(d, d, sigma, s, orthogonal=True).V ** 2).sum(1) for s in range(400)])
    assert np.mean(norms) * sigma**2 == pytest.approx(d, rel=0.05)
    assert np.var(norms) * sigma**4 == pytest.approx(2 * d, rel=0.15)


def kernel_errors(X, D, orthogonal, draws=300):
    """(mean estimate − k, spread) of z(x)ᵀz(x') over independent draws, off the diagonal."""
    K = gaussian(X, X, 0.8)
    est = np.array(
        [(Z := RandomFourierFeatures(X.shape[1], D, 0.8, s, orthogonal).transform(X)) @ Z.T for s in range(draws)]
    )
    off = ~np.eye(len(X), dtype=bool)
    return est.mean(0)[off] - K[off], est.std(0, ddof=1)[off]


def test_orthogonal_features_are_unbiased_with_lower_variance_than_iid_features():
    """Yu et al. 2016: the gain is largest for nearby points; measured here (d = 8, D = 16, σ = 0.8, points
    in [0, s]^8) the variance ratio ORF/RFF is 0.22, 0.41, 0.80, 1.05 for s = 0.5, 1, 1.5, 3."""
    X = np.random.default_rng(5).random((5, 8))
    bias, spread = kernel_errors(X, D=16, orthogonal=True)
    assert (np.abs(bias) <= 4 * spread / np.sqrt(300)).all()  # unbiased within 4 standard errors
    _, iid_spread = kernel_errors(X, D=16, orthogonal=False)
    assert np.mean(spread**2) < 0.6 * np.mean(iid_spread**2)  # equal D, smaller variance (Yu et al. 2016)


@pytest.mark.parametrize(("D", "d", "blocks"), [(53, 5, 3), (12, 4, 4096), (7, 9, 1), (1, 1, 2)])
def test_orthogonal_blocks_drawn_together_are_those_drawn_one_by_one(monkeypatch, D, d, blocks):
    """The blocks of orthogonal rows are drawn and factored ``BLOCKS`` at a time (stacked QR; learner.D=40000000 spent
    minutes in a Python loop over its blocks): the same bits as drawing each block's Q matrix, then its S matrix,
    and factoring it alone, across the chunks' ends and for D not a multiple of d."""
    monkeypatch.setattr(random_fourier, "BLOCKS", blocks)
    g = np.random.default_rng(3)
    rows = []
    for _ in range(-(-D // d)):
        Q, R = np.linalg.qr(g.standard_normal((d, d)))
        S = np.linalg.norm(g.standard_normal((d, d)), axis=1)
        rows.append(S[:, None] * (Q * np.sign(np.diag(R))[None, :]))
    np.testing.assert_array_equal(random_fourier._orthogonal_rows(np.random.default_rng(3), D, d), np.vstack(rows)[:D])


@pytest.mark.parametrize(("D", "d"), [(40_000, 20), (20_000, 50)])
def test_orthogonal_rows_drawn_together_take_less_memory_than_drawn_one_by_one(D, d):
    """The learners' footprints count the D×d frequencies once and allow for the block-by-block draw's peak (twice
    them: the blocks, then their stacked copy); all blocks drawn and factored at once held six times them."""
    import tracemalloc

    tracemalloc.start()
    try:
        V = random_fourier._orthogonal_rows(np.random.default_rng(0), D, d)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= 2 * V.nbytes, f"peak {peak / V.nbytes:.1f}x the frequencies"
