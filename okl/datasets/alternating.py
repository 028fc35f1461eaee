"""The alternating-label stream of sketched_kons_calandriello2017 §6 and pros_n_kons_calandriello2017 §3.

One point x is shown at every round with labels +C, −C, +C, ... (round t has +C when t is odd): the
best function in hindsight predicts 0, and second-order methods reach O(log T) regret on it, while a
learner whose step size stops shrinking (a fixed budget that skips x) does not. The variant with
``points`` = P > 1 cycles through P points (x_{(t−1) mod P}), each point's labels alternating over
its own visits, "a set of repeating vectors that exceed the budget" (pros_n_kons §3): it defeats any
learner with fewer than P support vectors, random features or a fixed dictionary.

The points are drawn uniformly from [−1, 1]^d with ``rng(seed, "alternating")``; the task is
regression (square loss), as in both papers.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from okl.datasets.base import Generated, register
from okl.seeding import rng
from okl.validation import integer_at_least, positive, seed

CHUNK = 1 << 16


@dataclass(frozen=True)
class AlternatingParams:
    """d: input dimension; length: rounds; points: P points cycled through; C: label magnitude; seed."""

    d: int = 5
    length: int = 10_000
    points: int = 1
    C: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        seed("seed", self.seed)
        for key in ("d", "length", "points"):
            integer_at_least(key, getattr(self, key), 1)
        positive("C", self.C)


@register("alternating")
class Alternating(Generated):
    """x_t = z_{(t−1) mod P}, y_t = ±C alternating over the visits of each point."""

    Params = AlternatingParams

    def __init__(self, **params) -> None:
        super().__init__(**params)
        p = self.params
        self.points = rng(p.seed, "alternating").uniform(-1.0, 1.0, (p.points, p.d))

    def chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        p = self.params
        for start in range(0, p.length, CHUNK):
            t = np.arange(start, min(start + CHUNK, p.length))  # 0-based rounds
            visit = t // p.points
            yield self.points[t % p.points], np.where(visit % 2 == 0, p.C, -p.C)
