"""Losses: evaluation losses chosen by the dataset's task, and training losses of gradient learners.

Evaluation:

- regression: square loss (y - ŷ)²;
- binary (labels ±1): 0-1 error 1[y·ŷ <= 0]. A prediction of exactly 0 counts as a mistake (the
  usual mistake count of online classification), so a learner that has learnt nothing scores 1.
- multiclass (labels 0..C−1): 0-1 error 1[ŷ ≠ y], ŷ being the predicted class index.
"""

from __future__ import annotations

import math

import numpy as np

from okl.jit import njit


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


# Training losses ℓ(ŷ, y) of gradient learners, by code (numba-friendly). Their derivatives in ŷ:
#   square          ℓ = (ŷ - y)²             ℓ' = 2(ŷ - y)          (the evaluation loss of regression)
#   hinge           ℓ = max(0, 1 - yŷ)        ℓ' = -y if yŷ < 1 else 0
#   logistic        ℓ = log(1 + exp(-yŷ))     ℓ' = -y / (1 + exp(yŷ))
#   squared_hinge   ℓ = max(0, 1 - yŷ)²       ℓ' = -2y max(0, 1 - yŷ)
TRAINING = {"square": 0, "hinge": 1, "logistic": 2, "squared_hinge": 3}


def curvature(loss: str, C: float) -> float:
    """σ of Assumption 2 (sketched_kons_calandriello2017; pros_n_kons_calandriello2017) on S, i.e.
    for predictions in [-C, C] and labels |y| <= C (regression) or ±1 (classification):

        ℓ(w) >= ℓ(u) + ℓ'(u)(w - u) + (σ/2) (ℓ'(u)(w - u))²    for all u, w in [-C, C].

    - square: σ = 1/(8C²), the papers' value (ℓ'' = 2, |ℓ'| <= L = 4C, σ = ℓ''/L²).
    - logistic: ℓ'' >= e^C/(1+e^C)², |ℓ'| <= e^C/(1+e^C), so σ = ℓ''_min/L² = e^{-C}.
    - squared_hinge: ℓ'' = 2 on the active side only; the bound across the kink (u active, w not)
      gives σ = min{1/(2(1+C)²), (3C-1)/(8C²(1+C))} for C > 1 and 1/(2(1+C)²) for C <= 1.
    - hinge: σ = 0 (no curvature).

    A test checks the inequality on a grid of (u, w, y) for each loss.
    """
    if loss == "square":
        return 1.0 / (8.0 * C * C)
    if loss == "logistic":
        return math.exp(-C)
    if loss == "squared_hinge":
        base = 1.0 / (2.0 * (1.0 + C) ** 2)
        return base if C <= 1.0 else min(base, (3.0 * C - 1.0) / (8.0 * C * C * (1.0 + C)))
    return 0.0


def lipschitz(loss: str, C: float) -> float:
    """L of Assumption 1: max |ℓ'| over predictions in [-C, C] (labels as in :func:`curvature`)."""
    return {"square": 4.0 * C, "hinge": 1.0, "logistic": 1.0 / (1.0 + math.exp(-C)), "squared_hinge": 2.0 * (1.0 + C)}[
        loss
    ]


@njit
def excess(z: float, C: float) -> float:
    """h(z) = sign(z) max{|z| - C, 0}: how far z lies outside [-C, C] (sketched_kons eq. (1))."""
    if z > C:
        return z - C
    if z < -C:
        return z + C
    return 0.0


@njit
def derivative(code: int, y_hat: float, y: float) -> float:
    """ℓ'(ŷ) of the training loss ``code`` (see ``TRAINING``)."""
    if code == 0:
        return 2.0 * (y_hat - y)
    if code == 1:
        return -y if y * y_hat < 1.0 else 0.0
    if code == 3:
        return -2.0 * y * max(0.0, 1.0 - y * y_hat)
    margin = y * y_hat
    if margin > 0:  # -y e^{-m} / (1 + e^{-m}), stable for large margins
        e = math.exp(-margin)
        return -y * e / (1.0 + e)
    return -y / (1.0 + math.exp(margin))


def training_value(loss: str, y_hat: np.ndarray, y: np.ndarray) -> np.ndarray:
    """ℓ(ŷ, y) of the training loss ``loss`` (see ``TRAINING``), elementwise with broadcasting."""
    if loss == "square":
        return (y_hat - y) ** 2
    margin = y * y_hat
    if loss == "logistic":
        return np.logaddexp(0.0, -margin)
    gap = np.maximum(0.0, 1.0 - margin)
    return gap if loss == "hinge" else gap * gap


SMOOTH = ("squared_hinge", "logistic")  # the binary training losses with a second derivative (a.e.)


def smooth_derivatives(loss: str, y_hat: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ℓ'(ŷ) and ℓ''(ŷ) of a ``SMOOTH`` training loss, elementwise (labels ±1); the squared hinge's ℓ''
    is its generalised second derivative 2·1[yŷ < 1] (Chapelle's primal SVM)."""
    margin = y * y_hat
    if loss == "logistic":
        return -y / (1.0 + np.exp(margin)), 0.25 / np.cosh(0.5 * margin) ** 2
    return -2.0 * y * np.maximum(0.0, 1.0 - margin), 2.0 * (margin < 1.0)


# Multi-class training losses of C class functions f = (f_1..f_C) at a labelled point (x, y),
# y ∈ {0..C−1} (polk_koppel2019 §5.1, without their regulariser):
#   multi_hinge      ℓ = max(0, 1 + f_r(x) − f_y(x)),  r = argmax_{c≠y} f_c(x)    (26)
#   multi_logistic   ℓ = log Σ_c exp(f_c(x)) − f_y(x)                              (28)
MULTICLASS = ("multi_hinge", "multi_logistic")
LABEL_LOSSES = ("hinge", "logistic", "squared_hinge", *MULTICLASS)  # the losses of labels, none of a real target
BINARY_OF = {"multi_hinge": "hinge", "multi_logistic": "logistic"}  # each multi-class loss's two-class form


def labels_of(loss: str | None) -> str | None:
    """What a label must be under ``loss``: ``"class"`` (an index 0, 1, 2, ...: a multi-class loss), ``"sign"`` (−1
    or +1: the binary losses of labels) or None (any real number: the square loss, or no loss)."""
    return "class" if loss in MULTICLASS else "sign" if loss in LABEL_LOSSES else None


def multiclass_loss(loss: str, A: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ℓ, ∂ℓ/∂f) for activations A (B×C, A[i, c] = f_c(x_i)) and labels y (B): values (B) and
    gradients (B×C). The hinge's subgradient is +1 at r and −1 at y when the margin is violated
    (r the first maximiser among c ≠ y); the logistic's is softmax(A) − e_y."""
    rows, labels = np.arange(len(y)), y.astype(np.int64)
    G = np.zeros_like(A)
    if loss == "multi_logistic":
        top = A.max(axis=1, keepdims=True)
        E = np.exp(A - top)
        total = E.sum(axis=1)
        G = E / total[:, None]
        G[rows, labels] -= 1.0
        return np.log(total) + top[:, 0] - A[rows, labels], G
    others = A.copy()
    others[rows, labels] = -np.inf
    r = np.argmax(others, axis=1) if A.shape[1] > 1 else labels
    gap = 1.0 + others[rows, r] - A[rows, labels] if A.shape[1] > 1 else np.zeros(len(y))
    violated = gap > 0
    G[rows[violated], r[violated]] += 1.0
    G[rows[violated], labels[violated]] -= 1.0
    return np.maximum(gap, 0.0), G
