"""Losses: evaluation losses chosen by the dataset's task, and training losses of gradient learners.

Evaluation:

- regression: square loss (y - ŷ)²;
- binary (labels ±1): 0-1 error 1[y·ŷ <= 0]. A prediction of exactly 0 counts as a mistake (the
  usual mistake count of online classification), so a learner that has learnt nothing scores 1.
- multiclass (labels 0..C−1): 0-1 error 1[ŷ ≠ y], ŷ being the predicted class index.
"""

from __future__ import annotations

import math

import numba
import numpy as np


def square(y: np.ndarray, y_hat: np.ndarray) -> np.ndarray:
    r = y - y_hat
    return r * r


def zero_one(y: np.ndarray, y_hat: np.ndarray) -> np.ndarray:
    return (y * y_hat <= 0).astype(np.float64)


def class_error(y: np.ndarray, y_hat: np.ndarray) -> np.ndarray:
    return (y != y_hat).astype(np.float64)


EVALUATION = {
    "regression": ("square", square),
    "binary": ("zero_one", zero_one),
    "multiclass": ("zero_one", class_error),
}


# Training losses ℓ(ŷ, y) of first-order learners, by code (numba-friendly). Their derivatives in ŷ:
#   square    ℓ = (ŷ - y)²             ℓ' = 2(ŷ - y)          (the evaluation loss of regression)
#   hinge     ℓ = max(0, 1 - yŷ)        ℓ' = -y if yŷ < 1 else 0
#   logistic  ℓ = log(1 + exp(-yŷ))     ℓ' = -y / (1 + exp(yŷ))
TRAINING = {"square": 0, "hinge": 1, "logistic": 2}


@numba.njit(cache=True)
def derivative(code: int, y_hat: float, y: float) -> float:
    """ℓ'(ŷ) of the training loss ``code`` (see ``TRAINING``)."""
    if code == 0:
        return 2.0 * (y_hat - y)
    if code == 1:
        return -y if y * y_hat < 1.0 else 0.0
    margin = y * y_hat
    if margin > 0:  # -y e^{-m} / (1 + e^{-m}), stable for large margins
        e = math.exp(-margin)
        return -y * e / (1.0 + e)
    return -y / (1.0 + math.exp(margin))
