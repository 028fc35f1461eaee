"""The built-in synthetic stream: deterministic, documented target, independent of chunking."""

import numpy as np
import pytest

from okl.datasets.synthetic import PAGE, Synthetic


def collect(ds):
    X, y = zip(*ds.chunks(), strict=True)
    return np.vstack(X), np.concatenate(y)


def test_stream_is_the_documented_function_plus_noise():
    ds = Synthetic(d=5, length=1000, noise=0.0)
    X, y = collect(ds)
    assert X.shape == (1000, 5) and (X >= 0).all() and (X < 1).all()
    np.testing.assert_allclose(y, np.cos(X @ ds.A.T) @ ds.u / 5, rtol=1e-14)


def test_same_seed_same_stream_and_different_seed_different_stream():
    a, b, c = (collect(Synthetic(d=3, length=PAGE + 10, seed=s)) for s in (1, 1, 2))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.allclose(a[0][:100], c[0][:100])


def test_prefix_does_not_depend_on_length():
    short, long = collect(Synthetic(length=1000)), collect(Synthetic(length=PAGE + 5))
    np.testing.assert_array_equal(short[0], long[0][:1000])
    assert len(long[1]) == PAGE + 5


def test_binary_task_gives_signs_of_the_regression_target():
    reg = collect(Synthetic(d=4, length=500, seed=3))
    binary = collect(Synthetic(d=4, length=500, seed=3, task="binary"))
    np.testing.assert_array_equal(binary[1], np.where(reg[1] >= 0, 1.0, -1.0))
    assert Synthetic(task="binary").task == "binary"


def test_noise_has_the_configured_scale():
    noiseless, noisy = (collect(Synthetic(d=4, length=20000, noise=s)) for s in (0.0, 0.3))
    assert np.std(noisy[1] - noiseless[1]) == pytest.approx(0.3, rel=0.03)


def test_piecewise_stationary_stream_changes_its_target_at_the_segment_boundaries():
    stationary = collect(Synthetic(d=3, length=3000, noise=0.0, seed=4))
    ds = Synthetic(d=3, length=3000, noise=0.0, seed=4, changes=2)
    X, y = collect(ds)
    np.testing.assert_array_equal(X, stationary[0])  # same inputs
    np.testing.assert_array_equal(y[:1000], stationary[1][:1000])  # segment 0 is the stationary target
    assert list(ds.segment([0, 999, 1000, 1999, 2000, 2999])) == [0, 0, 1, 1, 2, 2]
    for s, (a, b) in enumerate(((0, 1000), (1000, 2000), (2000, 3000))):
        np.testing.assert_allclose(y[a:b], ds.target(X[a:b], s), rtol=1e-14)
        others = [ds.target(X[a:b], r) for r in range(3) if r != s]
        assert all(np.abs(y[a:b] - o).mean() > 0.1 for o in others)  # an abrupt change, not a drift
    np.testing.assert_array_equal(collect(Synthetic(d=3, length=3000, noise=0.0, seed=4, changes=2))[1], y)


def test_a_dimension_whose_target_cannot_fit_is_one_line(monkeypatch):
    """dataset.d=100000 was an internal MemoryError (a 74.5 GiB target matrix)."""
    from okl import system
    from okl.datasets import DATASETS
    from okl.errors import ResourceError

    monkeypatch.setattr(system, "available_memory", lambda: 2 * system.GIB)
    with pytest.raises(
        ResourceError, match=r"^dataset synthetic: d=100,000 gives 1 target matrices of 100,000×100,000"
    ):
        DATASETS.get("synthetic")(d=100_000)
    assert DATASETS.get("synthetic")(d=100).d == 100
