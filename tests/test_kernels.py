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
