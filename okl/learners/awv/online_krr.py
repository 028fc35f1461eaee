"""Exact online kernel ridge regression (KRR), the i.i.d. counterpart of Kernel-AWV
(pkawv_jezequel2019 §2: eq. (3) without the f(x_t)² term; "Kernel Ridge Regression" in §4).

    ŷ_t = k_tᵀ (K_{t-1} + λI)⁻¹ y_{1:t-1}.

Example: Round t's prediction is k_tᵀ(K_{t-1} + λI)⁻¹y_{1:t-1}:

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> from okl.kernels import Kernel
>>> y_hat = LEARNERS.get("online_krr")(2, sigma=0.5, lam=1.0).predict_learn_block(X, y)
>>> K = Kernel("gaussian", 0.5)(X, X)
>>> t = 399; direct = K[t, :t] @ np.linalg.solve(K[:t, :t] + np.eye(t), y[:t])
>>> bool(np.isclose(y_hat[t], direct))
True
"""

from __future__ import annotations

from okl.learners.awv.kernel_awv import KernelAWV
from okl.learners.base import register


@register("online_krr")
class OnlineKRR(KernelAWV):
    """Exact online kernel ridge regression."""

    awv = False
