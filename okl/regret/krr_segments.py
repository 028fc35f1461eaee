"""``comparator=krr_segments``: a time-varying comparator for the dynamic regret of raker_shen2018
eq. (26) on piecewise-stationary streams.

The stream's n rounds split into c + 1 segments as ``dataset=synthetic changes=c`` makes them (round
t, 0-based, is in segment ⌊t (c + 1) / N⌋ for the stream's length N), and f*_t is the best
kernel-ridge function of t's segment in hindsight (:mod:`okl.regret.krr` on that segment alone):

    Reg^d = Σ_t (ŷ_t − y_t)² − Σ_t (f*_t(x_t) − y_t)²,   f*_t = f*_{segment(t)},

the interval-wise best functions f_I* of Lemma 3 on the segments where the target does not change,
which Theorem 4's proof compares with. Choice: eq. (27) read literally, f*_t ∈ argmin_{f ∈ ∪_p H_p}
ℓ_t(f(x_t)), interpolates each (x_t, y_t) and loses 0 per round, so its dynamic regret is the
cumulative loss itself; the segment comparator is the dynamic benchmark that tells learners apart.
λ||f||² is reported summed over the segments. With c = 0 it is ``krr``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from okl.params import KernelParams
from okl.regret.base import register
from okl.regret.krr import KRR
from okl.validation import integer_at_least


@dataclass(frozen=True)
class SegmentsParams(KernelParams):
    """sigma, lam; changes: c, the segments' number less one; length: the stream's N (None: the
    rounds scored)."""

    changes: int = 0
    length: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        integer_at_least("changes", self.changes, 0)
        if self.length is not None:
            integer_at_least("length", self.length, 1)


@register("krr_segments")
class KRRSegments(KRR):
    """Kernel ridge refit on each stationary segment."""

    Params = SegmentsParams
    from_dataset = ("changes", "length")

    def losses(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
        p, n = self.params, len(y)
        segment = np.arange(n) * (p.changes + 1) // (p.length or n)
        out, penalty = np.empty(n), 0.0
        for s in np.unique(segment):
            rows = segment == s
            out[rows], part = super().losses(X[rows], y[rows])
            penalty += part
        return out, penalty
