"""Online gradient descent on an explicit feature map, the compiled step shared by FOGD
(:mod:`okl.learners.random_features.fogd`, random Fourier features) and NOGD
(:mod:`okl.learners.nystrom.nogd`, a Nyström embedding): ŷ_t = w_tᵀz_t,
w_{t+1} = (1 − η_t λ) w_t − η_t ℓ'(ŷ_t, y_t) z_t, and no step at a round whose |ŷ_t − y_t| ≤ ε when a dead
zone ε > 0 is set (:func:`okl.params.dead_zone`).

Example:

>>> import numpy as np
>>> from okl.learners.ogd import ogd_block
>>> from okl.losses import TRAINING
>>> w, out = np.zeros(2), np.empty(2)
>>> ogd_block(np.eye(2), np.array([1.0, -1.0]), w, np.full(2, 0.5), 0.0, TRAINING["square"], 0.0, out)
>>> out, w  # round 2 predicts with w_2 = w_1 − 0.5 · 2(0 − 1) e_1
(array([0., 0.]), array([ 1., -1.]))
>>> w = np.zeros(2)
>>> ogd_block(np.eye(2), np.array([1.0, -0.05]), w, np.full(2, 0.5), 0.0, TRAINING["square"], 0.1, out)
>>> w  # |0 − (−0.05)| ≤ ε = 0.1: round 2 takes no step
array([1., 0.])
"""

from __future__ import annotations

import numpy as np

from okl.jit import njit
from okl.losses import derivative
from okl.warmup import warm


@njit(fastmath=True)
def ogd_block(
    Z: np.ndarray, y: np.ndarray, w: np.ndarray, eta: np.ndarray, lam: float, loss: int, eps: float, out: np.ndarray
) -> None:
    """Play rounds t of a block on embedded inputs Z (B×m): out[t] = ŷ_t = wᵀz_t, then
    w ← (1 − η_t λ) w − η_t ℓ'(ŷ_t, y_t) z_t (η_t = ``eta[t]``, ℓ' of the training loss ``loss``,
    :data:`okl.losses.TRAINING`), in place; with ``eps`` > 0, only at rounds whose |ŷ_t − y_t| > ``eps``."""
    for t in range(Z.shape[0]):
        z = Z[t]
        y_hat = 0.0
        for j in range(z.size):
            y_hat += w[j] * z[j]
        out[t] = y_hat
        if eps > 0.0 and abs(y_hat - y[t]) <= eps:
            continue
        keep = 1.0 - eta[t] * lam
        if keep != 1.0:
            for j in range(z.size):
                w[j] *= keep
        step = -eta[t] * derivative(loss, y_hat, y[t])
        if step != 0.0:
            for j in range(z.size):
                w[j] += step * z[j]


def warm_ogd(loss: int) -> None:
    """Compile (or load) :func:`ogd_block` for the training loss ``loss`` now, not inside timed rounds
    (:func:`okl.warmup.warm`)."""
    warm(ogd_block, np.zeros((1, 1)), np.zeros(1), np.zeros(1), np.zeros(1), 0.0, loss, 0.0, np.empty(1))
