"""Learners on the dyadic intervals of raker_shen2018 §3.1 (Algorithm 2, eqs. (22)–(25)): the
ensemble behind AdaRaker (:mod:`okl.learners.multikernel.adaraker`) and AdaMKL (:mod:`okl.learners.multikernel.adamkl`).

Intervals (rounds t are 1-based): for every level j >= 0 the intervals of length 2^j are
[k·2^j, (k+1)·2^j − 1], k >= 1, so the active set I(t) of eq. (22) holds one interval per level j
with 2^j <= t (:func:`active_intervals`). Each interval I runs a fresh instance A_I of the ensemble's
``Instance`` learner with rate η^(I) = min{η, η₀/√|I|}, η the instance's own ``eta`` (the paper's cap
1/2 is §4's η = 0.5 for every MKL method). With ℓ(ŷ, y) = ½(ŷ − y)² (Raker's loss), f_t^(I) the
instances' predictions and h the interval weights:

    f_t = Σ_{I ∈ I(t)} h̄_t^(I) f_t^(I),   h̄ = h / Σ_{J ∈ I(t)} h^(J)                          (25)
    h_{t+1}^(I) = η^(I) if t = start(I),   h_t^(I) exp(+η^(I) r_t^(I)) for later t ∈ I          (23)
    r_t^(I) = ℓ(f_t, y_t) − ℓ(f_t^(I), y_t)                                                   (24)

Choices (the paper leaves them open or, we believe, misprints them; tests pin each down):

- Sign of (23). Printed, h ← h·exp(−η r) with r of (24) lowers the weight of an instance that beats
  the ensemble. We use h ← h·exp(+η r), for four reasons: (24) defines r as "the loss of A_I relative
  to the overall loss", i.e. the ensemble's loss minus the instance's, a reward that should raise the
  weight; the analogous weight update (14) of the kernel ensemble multiplies by exp(−η·loss), which
  with r = −(the instance's excess loss) is exp(+η r); Daniely et al. (2015), whose sleeping-experts
  scheme (23) follows, update with (1 + η r), increasing in r; and the proof of Lemma 3 bounds
  Σ_t r_t^(I) through log h growing with r, which only holds with the + sign. (The printed sentence
  "decrease (increase) the weights of those instances with small (large) losses" is itself inverted and
  cannot settle it.) A test checks the direction.
- A new instance. (23) sets h_{t+1} = η^(I) at t = start(I); at t = start(I) itself the instance's
  weight is h_t = 0 (the case t ∉ I at t − 1): it learns its first round without voting. So a
  length-1 interval never votes, and its instance is not run (no prediction depends on it). At
  t = 2^k every active interval starts, no instance votes, and the prediction is 0, a fresh
  instance's (log₂ T rounds in all).
- The weights h are kept as log h, unnormalised, since entering instances join with the absolute
  weight η^(I).

The state is one instance per level, O(log t); a block of rounds lets each level's instances play
their segments of it (restarting at interval starts), then forms (25) round by round in a compiled
loop, which gives the per-round loop's numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import ClassVar

import numpy as np

from okl.jit import njit
from okl.learners.base import BlockLearner, Learner
from okl.learners.ensembles.weights import normalised
from okl.validation import positive
from okl.warmup import warm

LEVELS = 63  # intervals up to 2^62 rounds


def active_intervals(t: int) -> list[tuple[int, int]]:
    """I(t) of eq. (22): (first round, length) of the active interval of each level j with 2^j <= t."""
    return [((t >> j) << j, 1 << j) for j in range(t.bit_length())]


def bit_lengths(t: np.ndarray) -> np.ndarray:
    """``int.bit_length`` of each positive integer in ``t`` (below 2⁵³: frexp's exponent is exact), for the
    per-round model sizes of a block."""
    return np.frexp(np.asarray(t, dtype=np.float64))[1].astype(np.int64)


def voting_levels(t: int) -> list[int]:
    """The levels j >= 1 whose instance votes at round t: 2^j <= t and the interval began before t."""
    return [j for j in range(1, t.bit_length()) if t % (1 << j)]


@dataclass(frozen=True)
class AdaptiveParams:
    """Mixin for the instance's Params: eta0: η₀ of η^(I) = min{η, η₀/√|I|}. Default 32: intervals
    up to 4,096 rounds learn at η = 1/2. The paper gives no value; on the tests' piecewise-stationary
    stream (d = 4, 8,000 rounds, 3 changes) AdaRaker's MSE was 0.059, 0.024, 0.018, 0.014, 0.013,
    0.013 for η₀ = 1, 4, 8, 16, 32, 64."""

    eta0: float = 32.0

    def __post_init__(self) -> None:
        super().__post_init__()
        positive("eta0", self.eta0)


class IntervalEnsemble(BlockLearner):
    """Instances of ``Instance`` on the dyadic intervals, combined by eqs. (23)–(25)."""

    Instance: ClassVar[type[Learner]]
    tasks = ("regression",)

    def __init__(self, d: int, *, horizon: int | None = None, **params) -> None:
        super().__init__(d, horizon=horizon, **params)
        self.t = 0
        self.log_h = np.zeros(LEVELS)
        cap = self.params.eta
        self.eta = np.minimum(cap, self.params.eta0 / np.sqrt(2.0 ** np.arange(LEVELS)))
        self.instances: dict[int, Learner] = {}
        warm(_mix, np.zeros((0, LEVELS)), np.zeros(0), 0, np.zeros(LEVELS), self.eta, np.zeros(0))  # compile now

    @property
    def grows(self) -> bool:
        return self.Instance(self.d, **self.instance_config(0)).grows

    def instance_config(self, j: int) -> Mapping:
        """The level-j instance's parameters: the ensemble's, with η^(I)."""
        config = asdict(self.params)
        del config["eta0"]
        return {**config, "eta": float(self.eta[j])}

    def play_instances(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Play rounds t+1..t+B on every level's instances, restarting each at its intervals' starts;
        return F, F[b, j] the level-j instance's prediction at round t+1+b (NaN before level j
        exists). Records the model size after each round: the instances' sizes, each from its own diagnostics."""
        B = len(y)
        F = np.full((B, LEVELS), np.nan)
        sizes = np.zeros(B, dtype=np.int64)
        last = self.t + B
        for j in range(1, last.bit_length()):
            length = 1 << j
            b = max(0, length - self.t - 1)  # the level's first round in the block
            while b < B:
                t = self.t + 1 + b
                if t % length == 0:
                    self.instances[j] = self.Instance(self.d, **self.instance_config(j))
                end = min(B, b + length - (t % length))  # up to the interval's end
                F[b:end, j] = self.instances[j].predict_learn_block(X[b:end], y[b:end])
                sizes[b:end] += self.instances[j].diagnostics(end - b)["model_size"]
                b = end
        self.recorded = {"model_size": sizes}
        return F

    def query_instances(self, X: np.ndarray, levels: list[int]) -> np.ndarray:
        """The listed levels' instances' predictions at the rows of X: B × len(levels)."""
        return np.column_stack([self.instances[j].predict_many(X) for j in levels])

    def predict_one(self, x: np.ndarray) -> float:
        return float(self.predict_many(x[None, :])[0])

    def predict_many(self, X: np.ndarray) -> np.ndarray:
        levels = voting_levels(self.t + 1)
        if not levels:
            return np.zeros(len(X))
        return self.query_instances(X, levels) @ normalised(self.log_h[levels])

    def predict_learn_block(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        F = self.play_instances(X, y)
        out = np.empty(len(y))
        _mix(F, y, self.t, self.log_h, self.eta, out)
        self.t += len(y)
        return out

    @property
    def model_size(self) -> int:
        return sum(instance.model_size for instance in self.instances.values())


@njit
def _mix(F, y, t0, log_h, eta, out):
    """Eqs. (23)–(25) for rounds t0 + 1, ...: out[b] = f_t, then the weights h for round t + 1."""
    for b in range(F.shape[0]):
        t = t0 + b + 1
        top = -np.inf
        j = 1
        while (1 << j) <= t:
            if t % (1 << j):
                top = max(top, log_h[j])
            j += 1
        num, den = 0.0, 0.0
        j = 1
        while (1 << j) <= t:
            if t % (1 << j):
                h = math.exp(log_h[j] - top)
                num += h * F[b, j]
                den += h
            j += 1
        y_hat = num / den if den > 0.0 else 0.0
        out[b] = y_hat
        loss = 0.5 * (y_hat - y[b]) ** 2
        j = 1
        while (1 << j) <= t:
            if t % (1 << j):
                log_h[j] += eta[j] * (loss - 0.5 * (F[b, j] - y[b]) ** 2)
            else:
                log_h[j] = math.log(eta[j])
            j += 1
