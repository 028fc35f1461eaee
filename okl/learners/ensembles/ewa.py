"""Exponentially weighted aggregation (EWA) of registered learners (raker_shen2018 eqs. (13)–(14);
the online tuning of λ over a grid in pkawv_jezequel2019 §3.1).

Each expert p is any registered online learner, given as a config (``name`` and its keys); all see
every round. With ℓ_{p,s} = ℓ(ŷ_{p,s}, y_s) the training loss of expert p's prediction,

    w_{p,t} = exp(−η Σ_{s<t} ℓ_{p,s})   (eq. (14), w_{p,1} = 1),    ŷ_t = Σ_p w̄_{p,t} ŷ_{p,t}   (eq. (13)),

with w̄ the normalised weights. For the square loss with |ŷ|, |y| <= B and η <= 1/(8B²) the loss is
η-exp-concave and EWA's cumulative loss is at most min_p Σ ℓ_{p,s} + ln(P)/η (a test checks it).

A block of rounds lets each expert play the whole block (its predictions are online by the learner
protocol), then forms every round's weights from the cumulated losses of the earlier rounds: the
same numbers as the per-round loop. Per-round diagnostics: ``model_size`` (the experts' total) and
the weights ``weight_<p>`` used at each round.

Seeds: an expert whose learner draws at random (random features, KORS's coins) and whose config sets no ``seed``
takes the run's (``seed``, as a learner of its own does): a seed sweep redraws every expert. Choice: all experts draw
with that one seed, so two experts of one learner share their draws (common random numbers: they differ only by
the settings their configs give, which is what the weights compare); give an expert ``seed`` to draw apart.

Default experts (``experts`` not given): PKAWV-Taylor with M = 2, σ = 1 and λ ∈ {0.1, 1, 10}, the λ grid
of pkawv_jezequel2019 §3.1, as ``okl-run learner=ewa`` has them at its default M and σ
(``conf/learner/ewa.yaml``, which ties them to the top-level M and σ; a test checks the two agree).

Example: The weights move to the better expert:

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> experts = [dict(name="fogd", D=50, sigma=0.5, eta=0.2), dict(name="pkawv_taylor", M=4, sigma=1.0)]
>>> learner = LEARNERS.get("ewa")(2, experts=experts, eta=0.5)
>>> y_hat = learner.predict_learn_block(X, y)
>>> {key: round(float(w[-1]), 3) for key, w in learner.recorded.items() if key.startswith("weight")}
{'weight_0': 1.0, 'weight_1': 0.0}
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from okl.errors import ConfigError
from okl.learners.base import LEARNERS, BlockLearner, Learner, register
from okl.learners.ensembles.weights import normalised
from okl.losses import TRAINING, training_value
from okl.params import ADDED
from okl.registry import coerced
from okl.validation import one_of, positive, seed

DEFAULT_EXPERTS = tuple({"name": "pkawv_taylor", "M": 2, "sigma": 1.0, "lam": lam} for lam in (0.1, 1.0, 10.0))


@dataclass(frozen=True)
class EWAParams:
    """experts: learner configs, each a mapping with ``name`` and that learner's keys (default: a λ grid of
    PKAWV-Taylor); eta: rate η of eq. (14); loss: the training loss ℓ of the weights."""

    experts: tuple[Any, ...] = DEFAULT_EXPERTS
    eta: float = 0.5
    loss: str = "square"
    seed: int = field(default=0, metadata=ADDED)  # the experts' that set none (module docstring)

    def __post_init__(self) -> None:
        listed = isinstance(self.experts, Sequence) and not isinstance(self.experts, str)
        if not listed or not self.experts or not all(isinstance(e, Mapping) and "name" in e for e in self.experts):
            raise ConfigError("experts must be a non-empty list of learner configs: [{name: fogd, sigma: 1}, ...]")
        positive("eta", self.eta)
        one_of("loss", self.loss, TRAINING)
        seed("seed", self.seed)
        # each expert's keys in its learner's types: {sigma: 1} and {sigma: 1.0} are one expert, and one run id
        experts = tuple(coerced("learner", e["name"], LEARNERS.get(e["name"]).Params, dict(e)) for e in self.experts)
        object.__setattr__(self, "experts", experts)


@register("ewa")
class EWA(BlockLearner):
    """Exponential weights over learner experts."""

    Params = EWAParams
    lighter = "use fewer or lighter experts (learner.experts)"

    def __init__(self, d: int, *, horizon: int | None = None, **params) -> None:
        # the base class checks the footprint, the experts' planned states, before any expert is built
        super().__init__(d, horizon=horizon, **params)
        specs, seeded = self._specs()
        self.experts = []
        for cls, spec in specs:
            try:
                self.experts.append(cls(d, horizon=horizon, **spec))
            except ConfigError as exc:
                raise ConfigError(_expert_keys(exc, len(self.experts))) from None
        self.log_w = np.zeros(len(self.experts))  # log w_{p,t} − max_p, for the next round
        if not seeded and getattr(self.params, "seed", 0):  # no expert draws with the run's seed: one run (one id)
            self.params = replace(self.params, seed=0)

    def _specs(self) -> tuple[list[tuple[type[Learner], dict]], bool]:
        """Each expert's learner and keys (an expert that draws and sets no seed takes the run's), and whether one
        took it."""
        specs, seeded = [], False
        for spec in self.expert_configs():
            spec = dict(spec)
            cls = LEARNERS.get(spec.pop("name"))
            if "seed" in {f.name for f in fields(cls.Params)} and "seed" not in spec:
                spec["seed"], seeded = getattr(self.params, "seed", 0), True
            if cls.beforehand is not None:
                raise ConfigError(f"ewa: expert {cls.name!r} sees the stream beforehand; experts must be online")
            specs.append((cls, spec))
        return specs, seeded

    def footprint(self, rounds: int) -> tuple[int, str] | None:
        """The experts' states together, each planned from its keys (:meth:`Learner.planned`), so that they are
        checked before any expert is built: each allocates its state as it is built (raker at D=100,000,000 drew and
        wrote 6.7 GiB of frequencies for its first kernel, then its second, before their sum was refused), and
        three pkawv_taylor experts at d=18, M=5 (8.4 GiB each) had been let through where 22.7 GiB were available.
        An expert that is an ensemble counts its own experts (raker's kernels, in either variant)."""
        planned = self._planned_experts()
        found = [f for f in (expert.footprint(rounds) for expert in planned) if f is not None]
        if len(found) < 2:
            return found[0] if found else None
        some = f"{len(found)} of its {len(planned)}" if len(found) < len(planned) else f"its {len(found)}"
        return sum(nbytes for nbytes, _ in found), f"the states of {some} experts together ({found[0][1]}, ...)"

    def _planned_experts(self) -> list[Learner]:
        """The experts as :meth:`Learner.planned` gives them: their keys, no state."""
        return [_planned(self.d, i, cls, spec) for i, (cls, spec) in enumerate(self._specs()[0])]

    def check_task(self, task: str) -> None:
        """ewa's own loss, and each expert's, must not be a loss of labels on a regression stream (the rule of
        :meth:`Learner.check_task`; an expert's own further rules, such as dual_sgd's losses per task, are its
        standalone runs', not ewa's)."""
        super().check_task(task)
        for i, expert in enumerate(getattr(self, "experts", ())):  # (Raker's code variant keeps none)
            if task not in expert.tasks:
                raise ConfigError(
                    f"ewa's expert {i} ({expert.name}) does not handle {task} datasets; it handles "
                    f"{', '.join(expert.tasks)}"
                )
            try:
                Learner.check_task(expert, task)
            except ConfigError as exc:
                raise ConfigError(f"ewa's expert {i} ({expert.name}): {_expert_keys(exc, i)}") from None

    def require_memory(self, rounds: int) -> None:
        """Each expert's own check, with its own advice (omkl's experts keep every support vector without a budget;
        a fogd expert too large alone is named with its D), then their states together (:meth:`footprint`). Before
        the experts are built, their planned selves are checked."""
        for expert in getattr(self, "experts", None) or self._planned_experts():
            expert.require_memory(rounds)
        super().require_memory(rounds)

    @property
    def grows(self) -> bool:
        return any(expert.grows for expert in self.experts)

    def expert_configs(self) -> list[Mapping]:
        """The experts' learner configs."""
        return list(self.params.experts)

    @property
    def rate(self) -> float:
        """η of eq. (14)."""
        return self.params.eta

    @property
    def loss(self) -> str:
        """The training loss ℓ of eq. (14)."""
        return self.params.loss

    def predict_one(self, x: np.ndarray) -> float:
        return float(self.predict_many(x[None, :])[0])

    def predict_many(self, X: np.ndarray) -> np.ndarray:
        return np.column_stack([e.predict_many(X) for e in self.experts]) @ normalised(self.log_w)

    def predict_learn_block(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        P = np.column_stack([e.predict_learn_block(X, y) for e in self.experts])  # B×P, each expert online
        L = training_value(self.loss, P, y[:, None])
        before = np.zeros_like(L)  # losses of the earlier rounds of the block (never reads round t's)
        np.cumsum(L[:-1], axis=0, out=before[1:])
        W = normalised(self.log_w[None, :] - self.rate * before)
        self.log_w = self.log_w - self.rate * L.sum(axis=0)
        self.log_w -= self.log_w.max()
        self.recorded = {"model_size": sum(e.diagnostics(len(y))["model_size"] for e in self.experts)}
        self.recorded.update({f"weight_{p}": W[:, p] for p in range(len(self.experts))})
        return np.einsum("ij,ij->i", W, P)

    @property
    def model_size(self) -> int:
        return sum(e.model_size for e in self.experts)


def _planned(d: int, i: int, cls: type[Learner], spec: dict) -> Learner:
    """Expert i as :meth:`Learner.planned` gives it (its key errors in okl-run's keys), kept for specs of plain values:
    the interval ensembles build an instance of their ewa every other round, each with the same experts."""
    items: tuple | None = tuple(sorted(spec.items()))
    try:
        hash(items)
    except TypeError:  # a key holds a list or a mapping (an ewa of ewas): nothing to keep it by
        items = None
    try:
        return cls.planned(d, **spec) if items is None else _planned_kept(d, cls, items)
    except ConfigError as exc:
        raise ConfigError(_expert_keys(exc, i)) from None


@functools.lru_cache(maxsize=256)
def _planned_kept(d: int, cls: type[Learner], items: tuple) -> Learner:
    return cls.planned(d, **dict(items))


def _expert_keys(exc: ConfigError, i: int) -> str:
    """An expert's error in the keys of okl-run: its ``learner.key`` is ``learner.experts[i].key`` (it named ewa's
    own key, and its advice, set there, changed nothing)."""
    return str(exc).replace("learner.", f"learner.experts[{i}].")
