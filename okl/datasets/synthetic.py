"""Built-in synthetic stream (no download): a smooth nonlinear target on the unit cube.

    x_t ~ U[0, 1]^d,    f(x) = uᵀ cos(A x) / d,    u ~ N(0, I_d),  A_ij ~ N(0, 1),

``regression``: y_t = f(x_t) + noise · ε_t with ε_t ~ N(0, 1);
``binary``:     y_t = sign(f(x_t) + noise · ε_t) ∈ {-1, +1} (sign(0) = +1).

(u, A) come from the random stream ``rng(seed, "synthetic/target")`` and rows are generated in pages
of 65,536 from ``rng(seed, "synthetic/rows", page)``, so the stream does not depend on how it is
read. With d = 18 and 10⁶ rows it stands in for SUSY in benchmarks.

Non-stationary variant (raker_shen2018 §3, AdaRaker's setting): ``changes`` = c > 0 splits the stream
into c + 1 equal segments (round t, 0-based, is in segment ⌊t (c + 1) / length⌋) and segment s ≥ 1
draws its own target (u_s, A_s) from ``rng(seed, "synthetic/target", s)``: the target changes
abruptly c times, the inputs and noise are as before. Segment 0 is the stationary stream's target.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from okl import system
from okl.datasets.base import Generated, register
from okl.seeding import rng
from okl.validation import integer_at_least, non_negative, one_of, seed

PAGE = 1 << 16


@dataclass(frozen=True)
class SyntheticParams:
    """d: input dimension; length: rounds; noise: noise level; task; changes: abrupt changes of the
    target (0: stationary); seed."""

    d: int = 8
    length: int = 200_000
    noise: float = 0.1
    task: str = "regression"
    changes: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        seed("seed", self.seed)
        integer_at_least("d", self.d, 1)
        integer_at_least("length", self.length, 1)
        integer_at_least("changes", self.changes, 0)
        non_negative("noise", self.noise)
        one_of("task", self.task, ("regression", "binary"))


@register("synthetic")
class Synthetic(Generated):
    """The stream above."""

    Params = SyntheticParams

    def __init__(self, **params) -> None:
        super().__init__(**params)
        p = self.params
        system.require_memory(  # dataset.d=100000 was an internal MemoryError (a 74.5 GiB target matrix)
            8 * p.d * (p.d * (p.changes + 1) + 2 * PAGE),
            f"dataset synthetic: d={p.d:,} gives {p.changes + 1} target matrices of {p.d:,}×{p.d:,} and pages of "
            f"{PAGE:,}×{p.d:,} inputs",
            "lower dataset.d",
            share=system.STATE_SHARE,
        )
        self.targets = [_draw(rng(p.seed, "synthetic/target"), p.d)]
        self.targets += [_draw(rng(p.seed, "synthetic/target", s), p.d) for s in range(1, p.changes + 1)]
        self.u, self.A = self.targets[0]

    def segment(self, t: np.ndarray) -> np.ndarray:
        """The segment of each 0-based round t."""
        return np.asarray(t) * (self.params.changes + 1) // self.params.length

    def target(self, X: np.ndarray, segment: int = 0) -> np.ndarray:
        """The noiseless regression function of a segment, f_s(x) = u_sᵀcos(A_s x)/d."""
        u, A = self.targets[segment]
        return np.cos(X @ A.T) @ u / self.params.d

    def chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        return self.head(self.params.length)

    def head(self, n: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The first n rounds; a page's inputs and noise are drawn whole (so that its rows do not depend on
        n) and its target is computed for the rows taken only: 200 rounds cost 200 targets, not 65,536."""
        p = self.params
        for page, start in enumerate(range(0, min(n, p.length), PAGE)):
            rows, take = min(PAGE, p.length - start), min(PAGE, n - start)
            g = rng(p.seed, "synthetic/rows", page)
            X = g.random((rows, p.d))[:take]
            noise = g.standard_normal(rows)[:take]
            seg = self.segment(np.arange(start, start + take))
            f = np.empty(take)
            for s in np.unique(seg):
                f[seg == s] = self.target(X[seg == s], int(s))
            y = f + p.noise * noise
            if p.task == "binary":
                y = np.where(y >= 0, 1.0, -1.0)
            yield X, y


def _draw(g: np.random.Generator, d: int) -> tuple[np.ndarray, np.ndarray]:
    """(u, A) of one target."""
    return g.standard_normal(d), g.standard_normal((d, d))
