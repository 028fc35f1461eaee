"""Exact Kernel-AWV (pkawv_jezequel2019, §2, eq. (3); regret bound of Proposition 1).

    f_t ∈ argmin_{f ∈ H} Σ_{s<t} (y_s - f(x_s))² + λ||f||² + f(x_t)²,    ŷ_t = f_t(x_t),

with the Gaussian kernel. Cost O(t²) time and memory per round (the growing Cholesky factor of
:mod:`okl.linalg.kernel_ridge`): the reference for small streams and adversarial experiments.

Example: Kernel-AWV shrinks KRR's prediction by λ/(λ + s_t), s_t >= 0 the posterior variance at x_t:

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> awv = LEARNERS.get("kernel_awv")(2, sigma=0.5, lam=1.0).predict_learn_block(X, y)
>>> krr = LEARNERS.get("online_krr")(2, sigma=0.5, lam=1.0).predict_learn_block(X, y)
>>> bool(np.all(np.abs(awv) <= np.abs(krr))), mse(awv), mse(krr)
(True, 0.0364, 0.024)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar

import numpy as np

from okl.errors import ResourceError
from okl.learners.base import Learner, register
from okl.linalg.kernel_ridge import OnlineKernelRidge
from okl.params import KernelParams


@register("kernel_awv")
class KernelAWV(Learner):
    """Kernel-AWV, eq. (3), exact."""

    Params = KernelParams
    awv: ClassVar[bool] = True
    lighter = "use pkawv_taylor or pkrr_taylor, whose state does not grow with the rounds"

    def __init__(self, d: int, *, horizon: int | None = None, **params) -> None:
        super().__init__(d, horizon=horizon, **params)
        self.core = OnlineKernelRidge(d, self.params.sigma, self.params.lam, awv=self.awv, horizon=horizon)

    def footprint(self, rounds: int) -> tuple[int, str]:
        return OnlineKernelRidge.state_bytes(
            rounds, self.d
        ), f"the exact {rounds:,}×{rounds:,} kernel factor of n={rounds:,} rounds"

    def predict_one(self, x: np.ndarray) -> float:
        return self.core.predict(x)

    def predict_many(self, X: np.ndarray) -> np.ndarray:
        return self.core.predict_many(X)

    def learn_one(self, x: np.ndarray, y: float) -> None:
        with self._memory_guard():
            self.core.update(x, y)

    def predict_learn_block(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        with self._memory_guard():
            return self.core.predict_update_block(X, y)

    @property
    def model_size(self) -> int:
        return self.core.t

    def diagnostics(self, rounds: int) -> dict[str, np.ndarray]:
        t = self.core.t
        return {"model_size": np.arange(t - rounds + 1, t + 1, dtype=np.int64)}

    @contextmanager
    def _memory_guard(self) -> Iterator[None]:
        """Turn the factor's MemoryError into a one-line :class:`ResourceError`."""
        try:
            yield
        except MemoryError as exc:
            raise ResourceError(
                f"{self.name} stopped at round {self.core.t + 1:,}: {exc or 'out of memory'}; "
                f"set n= to fewer rounds or use pkawv_taylor / pkrr_taylor"
            ) from None
