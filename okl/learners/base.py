"""The learner protocol (river-style ``predict_one`` / ``learn_one``) and the learner registry.

Online protocol at round t: the learner receives x_t, predicts ŷ_t using x_1..x_t and
y_1..y_{t-1} only, then receives y_t. ``predict_learn_block(X, y)`` plays B consecutive rounds and
must return exactly what the per-round loop returns (to floating-point round-off); learners override
it when they can batch the rounds with BLAS-3 work.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np

from okl import system
from okl.dictionary.kors import KORS
from okl.errors import ConfigError
from okl.jit import njit
from okl.kernels import Kernel
from okl.losses import LABEL_LOSSES, labels_of
from okl.registry import Registry, build_params
from okl.validation import integer_at_least
from okl.warmup import warm

LEARNERS = Registry("learner")
register = LEARNERS.register


class StepSize:
    """The steps η_t of a gradient learner (FOGD, NOGD, RBF-OGD): ``eta`` at every round when it is set; for
    ``eta = None``, 1/√n over a run of n known rounds (the PKAWV and Raker papers' baselines: what okl-run
    uses, since it knows n), and the anytime η_t = 1/√t when n is unknown (a river estimator, a learner
    built without ``horizon``): the same η at t = n, without knowing n (Zinkevich 2003's schedule, regret
    O(√n) for convex losses).

    >>> StepSize(None, horizon=4).next(3), StepSize(0.1, horizon=None).next(2)
    (array([0.5, 0.5, 0.5]), array([0.1, 0.1]))
    >>> anytime = StepSize(None, horizon=None)
    >>> anytime.next(2), anytime.next(2)
    (array([1.        , 0.70710678]), array([0.57735027, 0.5       ]))
    """

    def __init__(self, eta: float | None, horizon: int | None) -> None:
        self.constant = eta if eta is not None else (1.0 / math.sqrt(horizon) if horizon else None)
        self.t = 0  # rounds stepped

    def next(self, n: int) -> np.ndarray:
        """The steps of the next ``n`` rounds."""
        t, self.t = self.t, self.t + n
        if self.constant is not None:
            return np.full(n, self.constant)
        return 1.0 / np.sqrt(np.arange(t + 1, t + n + 1, dtype=np.float64))


class Learner(ABC):
    """Base class. Subclasses define a ``Params`` dataclass and register with ``@register(key)``.

    Parameters
    ----------
    d:
        Input dimension.
    horizon:
        Number of rounds the run plans (``None`` if unknown). Learners whose tuning depends on the
        horizon (FOGD's η = 1/√n) read it; the others ignore it.
    **params:
        Hyperparameters, validated by ``Params``.
    """

    name: ClassVar[str] = ""
    Params: ClassVar[type]
    tasks: ClassVar[tuple[str, ...]] = ("regression", "binary")  # dataset tasks it can learn
    # What the learner sees before round 1: None (online), "inputs" (every x_t, labels revealed online:
    # pkawv_jezequel2019 Corollary 8) or "stream" (every (x_t, y_t): batch comparators such as BATCH).
    beforehand: ClassVar[str | None] = None
    # What a user means by a top-level key the learner does not read (``{"sigma": "learner.sigma2, a list of
    # σ²"}``): the one-line error of ``okl-run learner=<key> sigma=2`` names it (:func:`okl.config.plan`).
    instead: ClassVar[dict[str, str]] = {}

    # What to change when the state does not fit in memory, besides fewer rounds (see :meth:`footprint`).
    lighter: ClassVar[str] = ""
    # Raised when a fix changes the numbers the same settings gave before, or the columns a run records: a run of
    # an earlier revision is then another run (its id differs), played again rather than reused (okl.config.plan;
    # 0 is left out of the id).
    revision: ClassVar[int] = 0
    # What y must be, checked with the inputs (:func:`_checked`): "class" (an index 0, 1, ...: a multi-class loss),
    # "sign" (−1 or +1: hinge, logistic...) or None (any real number); set from the loss (okl.losses.labels_of).
    labels: str | None = None

    @property
    def revised(self) -> dict[str, int]:
        """The revision as it enters the run's identity: nothing at 0 (every earlier run id is kept)."""
        return {"revision": self.revision} if self.revision else {}

    @property
    def grouping_free(self) -> bool:
        """Whether the numbers do not depend on how the rounds are grouped into blocks (to roundoff): true of every
        learner but an ill-conditioned reading (CON-KONS's ``carry: singular``), whose run is then identified by
        its ``block`` too (:func:`okl.config.plan`)."""
        return True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Every learner's ``predict_one``, ``learn_one``, ``predict_many`` and ``predict_learn_block`` check
        their inputs here, once for all learners (:func:`_checked`)."""
        super().__init_subclass__(**kwargs)
        for name in CHECKS:
            method = vars(cls).get(name)
            if method is not None and not getattr(method, "__isabstractmethod__", False):
                setattr(cls, name, _checked(name, method))

    def __init__(self, d: int, *, horizon: int | None = None, **params: Any) -> None:
        integer_at_least("d", d, 1)
        if horizon is not None:  # the rounds a step like 1/√n is set for ("math domain error" at -1, 0 accepted)
            integer_at_least("horizon", horizon, 1)
        self.d = int(d)
        self.horizon = horizon
        self.params = build_params("learner", self.name or type(self).__name__, self.Params, params)
        self.labels = labels_of(getattr(self.params, "loss", None))
        self.require_memory(0)  # before any allocation: the state that does not grow (FOGD's D features)
        warm(_all_finite, np.zeros(1))  # the input checks' loop (:func:`_checked`), not inside timed rounds

    @classmethod
    def planned(cls, d: int, **params: Any) -> Learner:
        """The learner ``cls(d, **params)`` would be, holding ``d`` and its checked ``params`` and no state: what
        :meth:`footprint` reads, so that a state is checked before anything allocates it (ewa checks its experts'
        states together before it builds any)."""
        learner = object.__new__(cls)
        learner.d, learner.horizon = int(d), None
        learner.params = build_params("learner", cls.name or cls.__name__, cls.Params, params)
        return learner

    def footprint(self, rounds: int) -> tuple[int, str] | None:
        """The memory of the learner's state after ``rounds`` rounds when it is large and known before round 1
        (it grows with the rounds, or with a setting such as FOGD's D): (bytes, what holds them), else None.
        It reads ``d`` and ``params`` only."""
        return None

    @property
    def grows(self) -> bool:
        """Whether the state grows with every round, with no bound (:meth:`footprint` at 20,000 rounds above its
        value at 10,000): the exact kernel learners, KONS, an expansion without a budget."""
        small, large = self.footprint(10_000), self.footprint(20_000)
        return small is not None and large is not None and large[0] > small[0]

    def require_memory(self, rounds: int) -> None:
        """Raise :class:`~okl.errors.ResourceError` when the state after ``rounds`` rounds (:meth:`footprint`)
        would not fit in half the available memory (:func:`okl.system.require_memory`). Called at construction
        for 0 rounds, and before round 1 for the run's rounds when it has no time budget (one with a budget may
        stop long before)."""
        found = self.footprint(rounds)
        if found is not None:
            system.require_memory(
                found[0],
                f"{self.name}: {found[1]}",
                lambda budget: self.memory_advice(budget, rounds),
                share=system.STATE_SHARE,
            )

    def memory_advice(self, budget: int, rounds: int) -> str:
        """What to change when the state after ``rounds`` rounds exceeds ``budget`` bytes: the most rounds
        that fit (the footprint grows with them), and :attr:`lighter`."""
        low, high = 0, rounds  # the most rounds whose state fits: bisection on a growing footprint
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if self.footprint(middle)[0] <= budget else (low, middle - 1)
        hints = [f"set n= to at most {low:,} rounds"] if low else []
        return ", or ".join(hints + [self.lighter] if self.lighter else hints) or "use a machine with more memory"

    @abstractmethod
    def predict_one(self, x: np.ndarray) -> float:
        """Prediction ŷ_t for input x_t; does not change the learner."""

    @abstractmethod
    def learn_one(self, x: np.ndarray, y: float) -> None:
        """Reveal the label y_t of x_t."""

    def check_task(self, task: str) -> None:
        """Raise ConfigError when the parameters do not fit the dataset's task (which ``tasks`` allows): here, a loss
        of labels (hinge, logistic...) on a regression stream (it ran, and reported a meaningless square loss)."""
        loss = getattr(self.params, "loss", None)
        if task == "regression" and loss in LABEL_LOSSES:
            raise ConfigError(
                f"learner {self.name!r}: loss {loss!r} is a loss of labels, and the stream is a regression one; set "
                "learner.loss=square"
            )

    def step_size(self, eta: float | None) -> StepSize:
        """A gradient learner's steps η_t (:class:`StepSize`) for its ``eta`` and the run's horizon."""
        return StepSize(eta, self.horizon)

    def predict_many(self, X: np.ndarray) -> np.ndarray:
        """ŷ for each row of X as if it were the next input x_t; does not change the learner. Adaptive
        environments query it at candidate points (:class:`okl.datasets.base.Environment`)."""
        return np.array([self.predict_one(x) for x in X])

    def predict_learn_block(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Play the rounds (X[i], y[i]) in order; return the predictions made before each label."""
        out = np.empty(len(y))
        for i in range(len(y)):
            out[i] = self.predict_one(X[i])
            self.learn_one(X[i], y[i])
        return out

    def next_block(self, t: int, block: int) -> int:
        """Rounds for the next ``predict_learn_block`` call after t rounds, given the configured
        ``block`` (> 1). Learners whose batching pays off on longer blocks return more."""
        return block

    def prepare(self, X: np.ndarray, y: np.ndarray | None) -> None:  # noqa: B027 (optional hook)
        """Receive a chunk of the stream before round 1 (``beforehand`` learners; y is None for "inputs")."""

    def prepared(self) -> None:  # noqa: B027 (optional hook)
        """The whole stream has been shown through :meth:`prepare`."""

    @property
    @abstractmethod
    def model_size(self) -> int:
        """Size of the model after the last round: features, dictionary or support vectors."""

    def diagnostics(self, rounds: int) -> dict[str, np.ndarray]:
        """Per-round diagnostics for the last ``rounds`` rounds played (values after each round).

        The default repeats the current model size; learners whose size changes inside a block
        override it.
        """
        return {"model_size": np.full(rounds, self.model_size, dtype=np.int64)}

    def report(self) -> dict[str, Any]:
        """What a run records about the learner when it ends (the manifest's ``report``): its model size, and
        what its family adds (:class:`KORSLearner`: the dictionary's settings, which the effective-dimension
        analysis reads)."""
        return {"model_size": int(self.model_size)}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(d={self.d}, {self.params})"


def _checked(name: str, method):
    """``method`` behind the checks of its inputs: x a vector of d finite numbers (``predict_one``,
    ``learn_one``), X a B×d matrix of finite numbers (``predict_many``, ``predict_learn_block``), y finite
    (and one per row of X), a class index 0, 1, ... for a learner of a multi-class loss and −1 or +1 for one of a
    binary loss of labels (``labels``: fsgd, polk and bsgd took okl's own ±1 labels from Python silently, −1 as the
    last class, 2.7 as class 2, and 1e12 as an allocation of 7 TiB; a hinge learner took 2.5 or 0 as a label). A
    wrong input is a one-line ValueError naming the learner, d and what came: a 2×5 matrix given to ``predict_one``
    returned one number, a NaN label turned every later prediction into NaN, and an infinite input to
    ``predict_one`` gave 0.0 (a plausible number) or NaN by learner. Cost: one pass over the numbers (about 4 µs for a
    256×8 block); a round's two calls cost about 1 µs together (the wrapper of a round is its own function, with no
    branch for blocks: 3.5 µs before, a sixth of a Nyström learner's compiled round)."""
    if getattr(method, "_checks_inputs", False):
        return method
    checked = (_checked_block if name in ("predict_many", "predict_learn_block") else _checked_round)(name, method)
    checked._checks_inputs = True
    checked.__name__, checked.__qualname__, checked.__doc__ = method.__name__, method.__qualname__, method.__doc__
    checked.__wrapped__ = method
    return checked


def _checked_round(name: str, method):
    """The checks of ``predict_one(x)`` and ``learn_one(x, y)``."""

    def checked(self, x, *rest):
        if type(x) is not np.ndarray or (x.dtype is not _FLOAT64 and x.dtype != _FLOAT64):
            x = _floats(self, name, x, False)
        if x.shape != (self.d,):
            raise ValueError(f"{self.name}: {name} takes {_wanted(False, self.d)}, got {_described(x)}")
        if not _all_finite(x):  # a prediction too: some learners returned 0.0 at an infinite input, a plausible number
            raise ValueError(f"{self.name}: {name} got a non-finite input ({_first_bad(x)}): drop or impute it")
        if not rest:
            return method(self, x)
        try:
            y = float(rest[0])
        except (TypeError, ValueError):
            raise ValueError(f"{self.name}: {name} takes one number as the label, got {_shown(rest[0])}") from None
        if not math.isfinite(y):
            raise ValueError(_bad_label(self.name, name, np.asarray(y)))
        if self.labels is not None and not _label(self.labels, y):
            raise ValueError(_bad_label_kind(self, name, y))
        return method(self, x, y, *rest[1:])  # more arguments than the method takes: Python's own TypeError

    return checked


def _checked_block(name: str, method):
    """The checks of ``predict_many(X)`` and ``predict_learn_block(X, y)``."""

    def checked(self, X, *rest):
        if type(X) is not np.ndarray or (X.dtype is not _FLOAT64 and X.dtype != _FLOAT64):
            X = _floats(self, name, X, True)
        if X.ndim != 2 or X.shape[1] != self.d:  # one input is predict_one's, or X[None, :]
            raise ValueError(f"{self.name}: {name} takes {_wanted(True, self.d)}, got {_described(X)}")
        if not _finite(X):
            raise ValueError(f"{self.name}: {name} got a non-finite input ({_first_bad(X)}): drop or impute it")
        if rest:
            try:
                y = np.asarray(rest[0], dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError(
                    f"{self.name}: {name} takes {len(X)} numbers as labels, got {_shown(rest[0])}"
                ) from None
            if y.shape != (len(X),):
                raise ValueError(f"{self.name}: {name} takes {len(X)} labels, got {_described(y)}")
            if not _finite(y):
                raise ValueError(_bad_label(self.name, name, y))
            if self.labels is not None and len(y):
                wrong = ~_label(self.labels, y)
                if wrong.any():
                    raise ValueError(_bad_label_kind(self, name, float(y[np.argmax(wrong)])))
            rest = (y,)
        return method(self, X, *rest)

    return checked


MAX_CLASSES = 10_000  # the labels a multi-class learner takes: 0..MAX_CLASSES − 1 (a column of its state per class)
_FLOAT64 = np.dtype(np.float64)  # the native float64 dtype: most arrays hold this instance (an unpickled one, its own)


def _bad_label(learner: str, name: str, y: np.ndarray) -> str:
    return (
        f"{learner}: {name} got a non-finite label ({_first_bad(y)}): it would turn every later prediction into NaN; "
        f"drop the row"
    )


def _label(kind: str, y):
    """Whether y (a number, or each of an array) is a label of ``kind``: a class index below ``MAX_CLASSES``, or ±1."""
    if kind == "class":
        whole = y == math.floor(y) if isinstance(y, float) else y == np.floor(y)  # a round's y: no numpy call
        return (y >= 0) & (y < MAX_CLASSES) & whole
    return (y == 1.0) | (y == -1.0)


def _bad_label_kind(learner: Learner, name: str, y: float) -> str:
    if learner.labels == "class":
        return (
            f"{learner.name}: {name} got the label {y:g}: with a multi-class loss a label is a class index 0, 1, 2, "
            f"... (below {MAX_CLASSES:,}); number the classes from 0 (binary ±1 labels: 0 and 1, or a binary loss such "
            "as hinge)"
        )
    loss = getattr(learner.params, "loss", None)
    return (
        f"{learner.name}: {name} got the label {y:g}: {f'the {loss} loss' if loss else 'a binary classifier'} takes "
        "binary labels -1 or +1; map the two classes to -1 and +1 (classes 0, 1, 2, ...: a multi-class loss; a real "
        "target: loss=square)"
    )


def _finite(a: np.ndarray) -> bool:
    """No NaN or infinity in ``a`` (float64), by a compiled loop that stops at the first: 0.4 µs for one input,
    where the largest and smallest entries' two reductions took 2.5 µs and a sum, which could overflow, warns."""
    return _all_finite(a.reshape(-1))


@njit
def _all_finite(a: np.ndarray) -> bool:
    for value in a:  # noqa: SIM110 (all() over a generator does not compile)
        if not np.isfinite(value):
            return False
    return True


def _floats(learner: Learner, name: str, x, block: bool) -> np.ndarray:
    """x as float64 numbers, or the one-line error that names the learner (numpy's said "could not convert string to
    float: 'a'", and no more)."""
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{learner.name}: {name} takes {_wanted(block, learner.d)}, got {_shown(x)}") from None


def _shown(value) -> str:
    """What came, for an error: an array's shape, else its Python repr (cut short)."""
    if isinstance(value, np.ndarray) and value.ndim:
        return f"{_described(value)} of {value.dtype}"
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _wanted(block: bool, d: int) -> str:
    return f"a B×{d} matrix (B inputs of d={d})" if block else f"one input vector of d={d} numbers"


def _described(a: np.ndarray) -> str:
    if a.ndim == 0:
        return "a single number"
    if a.ndim == 1:
        return f"a vector of {len(a)} numbers"
    return f"an array of shape {'×'.join(map(str, a.shape))}"


def _first_bad(a: np.ndarray) -> str:
    if a.ndim == 0:
        return str(a)
    where = np.argwhere(~np.isfinite(a))[0]
    return f"{a[tuple(where)]} at index {', '.join(map(str, where))}"


CHECKS = ("predict_one", "learn_one", "predict_many", "predict_learn_block")
for _name in ("predict_many", "predict_learn_block"):  # the base class's own defaults
    setattr(Learner, _name, _checked(_name, vars(Learner)[_name]))


class KORSLearner:
    """Mixin of the learners that keep a KORS dictionary (``self.kors``): their report holds its settings
    and size, and :meth:`dictionary` gives its kernel and points."""

    kors: KORS

    def report(self) -> dict[str, Any]:
        return {**super().report(), "kors": self.kors.report()}  # type: ignore[misc]

    def dictionary(self) -> tuple[Kernel, np.ndarray]:
        """The dictionary's kernel and points (|I|×d)."""
        return self.kors.kernel, self.kors.X


class BlockLearner(Learner):
    """A learner whose rounds are played by ``predict_learn_block`` (dictionary learners, whose
    state changes with the inputs): ``learn_one`` plays a block of one round, and the per-round
    diagnostics are the arrays the last block stored in ``self.recorded``."""

    recorded: dict[str, np.ndarray]

    def learn_one(self, x: np.ndarray, y: float) -> None:
        self.predict_learn_block(x[None, :], np.array([y], dtype=np.float64))

    def diagnostics(self, rounds: int) -> dict[str, np.ndarray]:
        return {key: values[-rounds:] for key, values in self.recorded.items()}
