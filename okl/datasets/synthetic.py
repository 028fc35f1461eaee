"""Built-in synthetic stream (no download): a smooth nonlinear target on the unit cube.

    x_t ~ U[0, 1]^d,    f(x) = uᵀ cos(A x) / d,    u ~ N(0, I_d),  A_ij ~ N(0, 1),

``regression``: y_t = f(x_t) + noise · ε_t with ε_t ~ N(0, 1);
``binary``:     y_t = sign(f(x_t) + noise · ε_t) ∈ {-1, +1} (sign(0) = +1).

(u, A) come from the random stream ``rng(seed, "synthetic/target")`` and rows are generated in pages
of 65,536 from ``rng(seed, "synthetic/rows", page)``, so the stream does not depend on how it is
read. With d = 18 and 10⁶ rows it stands in for SUSY in benchmarks.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from okl.datasets.base import Generated, register
from okl.seeding import rng
from okl.validation import integer_at_least, non_negative, one_of

PAGE = 1 << 16


@dataclass(frozen=True)
class SyntheticParams:
    """d: input dimension; length: rounds; noise: noise level; task; seed."""

    d: int = 8
    length: int = 200_000
    noise: float = 0.1
    task: str = "regression"
    seed: int = 0

    def __post_init__(self) -> None:
        integer_at_least("d", self.d, 1)
        integer_at_least("length", self.length, 1)
        non_negative("noise", self.noise)
        one_of("task", self.task, ("regression", "binary"))


@register("synthetic")
class Synthetic(Generated):
    """The stream above."""

    Params = SyntheticParams

    def __init__(self, **params) -> None:
        super().__init__(**params)
        p = self.params
        g = rng(p.seed, "synthetic/target")
        self.u = g.standard_normal(p.d)
        self.A = g.standard_normal((p.d, p.d))

    def target(self, X: np.ndarray) -> np.ndarray:
        """The noiseless regression function f(x) = uᵀcos(Ax)/d."""
        return np.cos(X @ self.A.T) @ self.u / self.params.d

    def chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        p = self.params
        for page, start in enumerate(range(0, p.length, PAGE)):
            rows = min(PAGE, p.length - start)
            g = rng(p.seed, "synthetic/rows", page)
            X = g.random((rows, p.d))
            y = self.target(X) + p.noise * g.standard_normal(rows)
            if p.task == "binary":
                y = np.where(y >= 0, 1.0, -1.0)
            yield X, y
