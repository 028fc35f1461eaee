"""Online ridge / AWV on features: block innovations = Sherman–Morrison loop = normal equations."""

import numpy as np
import pytest

from helpers import relative_gap
from okl.features.taylor import TaylorFeatures
from okl.linalg.online_ridge import OnlineRidge


def sherman_morrison(Phi, y, lam, awv):
    """Algorithm 1 of Appendix H.1, written out with a dense inverse (the paper's reference code)."""
    r = Phi.shape[1]
    A_inv, b, out = np.eye(r) / lam, np.zeros(r), np.empty(len(y))
    for t, phi in enumerate(Phi):
        v = A_inv @ phi
        h = phi @ v
        ridge = v @ b
        out[t] = ridge / (1 + h) if awv else ridge
        A_inv -= np.outer(v, v) / (1 + h)
        b += y[t] * phi
    return out


def normal_equations(Phi, y, lam, awv):
    """ŷ_t = φ_tᵀ (λI + Σ_{s<t} φφᵀ [+ φ_tφ_tᵀ for AWV])⁻¹ Σ_{s<t} y_s φ_s, solved from scratch."""
    r = Phi.shape[1]
    out = np.empty(len(y))
    for t in range(len(y)):
        past = Phi[: t + 1] if awv else Phi[:t]
        A = lam * np.eye(r) + past.T @ past
        out[t] = Phi[t] @ np.linalg.solve(A, Phi[:t].T @ y[:t])
    return out


def features(n, r, seed=0):
    g = np.random.default_rng(seed)
    return g.standard_normal((n, r)) / np.sqrt(r), g.standard_normal(n)


@pytest.mark.parametrize("awv", [True, False])
def test_sequential_recursion_equals_normal_equations(awv):
    Phi, y = features(150, 12)
    state = OnlineRidge(12, 0.5, awv)
    seq = np.empty(len(y))
    for t in range(len(y)):
        seq[t] = state.predict(Phi[t])
        state.update(Phi[t], y[t])
    assert relative_gap(seq, normal_equations(Phi, y, 0.5, awv)) < 1e-12


@pytest.mark.parametrize("awv", [True, False])
@pytest.mark.parametrize("sizes", [(1,), (64,), (7, 1, 33, 2), (400,)])
def test_blocks_equal_sherman_morrison(awv, sizes):
    Phi, y = features(300, 20, seed=1)
    state = OnlineRidge(20, 1.0, awv)
    out, start, i = [], 0, 0
    while start < len(y):
        stop = min(start + sizes[i % len(sizes)], len(y))
        out.append(state.predict_update_block(Phi[start:stop], y[start:stop]))
        start, i = stop, i + 1
    assert relative_gap(np.concatenate(out), sherman_morrison(Phi, y, 1.0, awv)) < 1e-11


def test_awv_is_ridge_divided_by_one_plus_leverage():
    Phi, y = features(80, 6, seed=2)
    awv, ridge = OnlineRidge(6, 1.0, True), OnlineRidge(6, 1.0, False)
    for t in range(len(y)):
        h = Phi[t] @ np.linalg.solve(np.eye(6) + Phi[:t].T @ Phi[:t], Phi[t])
        assert awv.predict(Phi[t]) == pytest.approx(ridge.predict(Phi[t]) / (1 + h), rel=1e-12, abs=1e-15)
        awv.update(Phi[t], y[t])
        ridge.update(Phi[t], y[t])


def test_long_stream_stays_within_1e8_of_a_fresh_solve():
    """2·10⁶ rounds of ill-conditioned Taylor features (σ = 4): blocks keep downdating A⁻¹ with no
    refactorisation, and the predictions at checkpoints still match a from-scratch solve."""
    n, d, block, chunk = 2_000_000, 6, 256, 1 << 16
    taylor = TaylorFeatures(d, 2, 4.0)
    g = np.random.default_rng(3)
    state = OnlineRidge(taylor.dim, 1.0, awv=True)
    A = np.eye(taylor.dim)  # λI + Σ φφᵀ, accumulated independently
    b = np.zeros(taylor.dim)
    checkpoints = [n // 4 + 17, n // 2 + 100, n - 1]
    worst = 0.0
    for first in range(0, n, chunk):
        X = g.random((min(chunk, n - first), d))
        Phi = taylor.transform(X)
        y = np.cos(X.sum(1)) + 0.1 * g.standard_normal(len(X))
        pred = np.concatenate(
            [state.predict_update_block(Phi[s : s + block], y[s : s + block]) for s in range(0, len(y), block)]
        )
        for t in [c - first for c in checkpoints if first <= c < first + len(y)]:
            A_t = A + Phi[: t + 1].T @ Phi[: t + 1]
            fresh = Phi[t] @ np.linalg.solve(A_t, b + Phi[:t].T @ y[:t])
            worst = max(worst, abs(pred[t] - fresh) / abs(fresh))
        A += Phi.T @ Phi
        b += Phi.T @ y
    assert np.linalg.cond(A) > 1e4  # the case is not trivially conditioned
    assert worst <= 1e-8, worst


@pytest.mark.parametrize("awv", [False, True])
def test_a_feature_added_later_equals_the_ridge_that_had_it_from_the_start(awv):
    """add_feature(Σφψ, Σψ², Σyψ) grows A⁻¹ and b to those of λI + [Φ ψ]ᵀ[Φ ψ] and [Φ ψ]ᵀy."""
    g = np.random.default_rng(5)
    Phi, psi, y = g.standard_normal((60, 4)), g.standard_normal(60), g.standard_normal(60)
    grown, full = OnlineRidge(4, 0.3, awv), OnlineRidge(5, 0.3, awv)
    grown.predict_update_block(Phi, y)
    grown.add_feature(Phi.T @ psi, psi @ psi, y @ psi)
    full.predict_update_block(np.column_stack([Phi, psi]), y)
    np.testing.assert_allclose(np.triu(grown.P), np.triu(full.P), atol=1e-12)
    np.testing.assert_allclose(grown.b, full.b, atol=1e-12)
    later = g.standard_normal((10, 5))
    np.testing.assert_allclose(
        grown.predict_update_block(later, y[:10]), full.predict_update_block(later, y[:10]), atol=1e-12
    )


def test_the_initial_state_is_one_r_by_r_array_at_its_peak():
    """P = I/λ was np.eye(r) / λ, then its Fortran copy: three r×r arrays, two alive at once (6.5 GB for the 3.3 GB
    state of a 200-feature dict with M = 2, and okl-run's memory check counts the state once). Measured by numpy's
    allocations (tracemalloc), not by time."""
    import tracemalloc

    OnlineRidge(2, 1.0, awv=True)  # its compiled code loaded first
    r = 1500
    tracemalloc.start()
    ridge = OnlineRidge(r, 4.0, awv=True)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1.2 * 8 * r * r
    assert ridge.P.flags.f_contiguous and np.array_equal(ridge.P, np.eye(r) / 4.0)
