"""The compiled kernel row against the direct formulas."""

import math

import numpy as np
import pytest

from okl.kernels import gaussian, kernel_row, squared_distance


@pytest.mark.parametrize("n, d", [(1, 3), (7, 2), (13, 784), (64, 22)])
def test_the_gaussian_row_is_the_ordered_sum_of_every_row_to_the_bit(n, d):
    g = np.random.default_rng(n + d)
    x, Y = g.standard_normal(d), g.standard_normal((2 * n, d))[:n]  # the first rows of a buffer, as dictionaries
    out, sigma = np.empty(n), 1.7
    assert kernel_row(True, sigma, x, Y, out) == 1.0
    direct = [math.exp(-0.5 / sigma**2 * sum((a - b) * (a - b) for a, b in zip(x, row, strict=True))) for row in Y]
    np.testing.assert_array_equal(out, direct)  # four rows at a time, each summed in index order
    np.testing.assert_array_equal(out, [math.exp(-0.5 / sigma**2 * squared_distance(x, row)) for row in Y])
    np.testing.assert_allclose(out, gaussian(x[None, :], Y, sigma)[0], rtol=1e-12)


def test_the_linear_row_is_the_inner_products():
    g = np.random.default_rng(1)
    x, Y, out = g.standard_normal(5), g.standard_normal((6, 5)), np.empty(6)
    assert kernel_row(False, 1.0, x, Y, out) == pytest.approx(x @ x)
    np.testing.assert_allclose(out, Y @ x, rtol=1e-14)


@pytest.mark.parametrize("gaussian_kernel", [True, False])
def test_rows_by_chunks_are_the_rows_one_by_one_to_the_bit(gaussian_kernel):
    """kernel_rows takes Y by chunks of CHUNK_BYTES (32 rows at d = 1,000): 103 rows make three whole chunks and a
    last one of 7 (its last 3 rows summed alone); every entry is kernel_row's."""
    from okl.kernels import CHUNK_BYTES, kernel_rows

    g = np.random.default_rng(5)
    X, Y = g.standard_normal((6, 1000)), g.standard_normal((103, 1000))
    assert 4 < CHUNK_BYTES // (8 * 1000) < 103
    out = np.empty((6, 103))
    kernel_rows(gaussian_kernel, 30.0, X, Y, out)
    for p in range(6):
        row = np.empty(103)
        kernel_row(gaussian_kernel, 30.0, X[p], Y, row)
        np.testing.assert_array_equal(out[p], row)
