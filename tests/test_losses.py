"""Evaluation losses and the derivatives used by gradient learners."""

import numpy as np
import pytest

from okl.losses import SMOOTH, TRAINING, derivative, smooth_derivatives, square, training_value, zero_one

LOSS = {
    "square": lambda p, y: (p - y) ** 2,
    "hinge": lambda p, y: max(0.0, 1 - y * p),
    "logistic": lambda p, y: np.log1p(np.exp(-y * p)),
    "squared_hinge": lambda p, y: max(0.0, 1 - y * p) ** 2,
}


def test_zero_one_counts_ties_as_mistakes():
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    y_hat = np.array([0.3, 0.2, -2.0, -0.1, 0.0])
    np.testing.assert_array_equal(zero_one(y, y_hat), [0, 1, 1, 0, 1])
    np.testing.assert_array_equal(square(y, y_hat), (y - y_hat) ** 2)


@pytest.mark.parametrize("name", sorted(TRAINING))
@pytest.mark.parametrize(("p", "y"), [(0.3, 1.0), (-0.7, 1.0), (2.5, -1.0), (0.4, -1.0), (1.7, 1.0)])
def test_derivative_matches_finite_differences(name, p, y):
    h = 1e-6
    numeric = (LOSS[name](p + h, y) - LOSS[name](p - h, y)) / (2 * h)
    assert derivative(TRAINING[name], p, y) == pytest.approx(numeric, rel=1e-6, abs=1e-8)


def test_logistic_derivative_is_stable_for_large_margins():
    assert derivative(TRAINING["logistic"], 800.0, 1.0) == pytest.approx(0.0, abs=1e-300)
    assert derivative(TRAINING["logistic"], -800.0, 1.0) == pytest.approx(-1.0)


@pytest.mark.parametrize("name", SMOOTH)
def test_smooth_derivatives_are_the_first_and_second_derivatives(name):
    """ℓ' equals the compiled derivative, ℓ'' the finite difference of ℓ' (away from the squared hinge's
    kink, where it is the generalised 2·1[yŷ < 1]); the value is the loss above."""
    p = np.array([0.3, -0.7, 2.5, 0.4, 1.7, -3.0])
    y = np.array([1.0, 1.0, -1.0, -1.0, 1.0, -1.0])
    first, second = smooth_derivatives(name, p, y)
    h = 1e-6
    numeric = (smooth_derivatives(name, p + h, y)[0] - smooth_derivatives(name, p - h, y)[0]) / (2 * h)
    np.testing.assert_allclose(first, [derivative(TRAINING[name], a, b) for a, b in zip(p, y, strict=True)], rtol=1e-12)
    np.testing.assert_allclose(second, numeric, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(training_value(name, p, y), [LOSS[name](a, b) for a, b in zip(p, y, strict=True)])
