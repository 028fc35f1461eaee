"""okl's learners as river estimators, for river users: any registered learner by its key, with its
parameters as keywords, on river's dict samples, in river's pipelines and evaluations.

>>> from river import datasets, evaluate, linear_model, metrics, preprocessing
>>> from okl.river import Regressor
>>> def scaled(model):
...     return preprocessing.StandardScaler() | preprocessing.TargetStandardScaler(model)
>>> evaluate.progressive_val_score(
...     datasets.TrumpApproval(), scaled(Regressor("pkawv_taylor", M=2, sigma=4.0, lam=0.1)), metrics.MAE())
MAE: 0.554977
>>> evaluate.progressive_val_score(datasets.TrumpApproval(), scaled(linear_model.LinearRegression()), metrics.MAE())
MAE: 0.38562

In the same pipeline, river's linear regression wins on TrumpApproval; okl's kernel learners win where the
target is not linear in the features (Friedman, Phishing, Bananas). ``okl-bench bench_river_bundled
bench_river_bundled_binary`` plays both sides on river's bundled datasets with the same pipelines
(BENCHMARKS.md). okl's kernel learners have no intercept and start from ŷ = 0: standardise the target, as
here, unless it is centred.

A sample's dict becomes the learner's vector x_t in a fixed feature order: ``features`` when given, else the
first sample's keys, sorted (:mod:`okl.riverlib`). The learner is built at that first sample, with d the
number of features; features absent from a sample are 0. A feature outside the order is ignored, with a
warning the first time one comes (one-hot categories seen after the first sample): pass ``features=[...]``
with every feature to use them.

Defaults that need no horizon: a gradient learner without ``eta`` (fogd, nogd, rbf_ogd) steps with the
anytime η_t = 1/√t (:class:`okl.learners.base.StepSize`; okl-run, which knows the n rounds, uses 1/√n);
``horizon=n`` selects 1/√n. Errors name the keywords (``eta=``), not okl-run's keys (``learner.eta``).

:class:`Classifier` is binary, on river's labels ``True``/``False`` (or 1/0), which the learner sees as +1/−1.
Its score f(x) gives the label True when f(x) > 0, and probabilities where they mean something: a learner of the
square loss estimates E[y | x] = 2 P(True | x) − 1, so P(True | x) = (1 + f(x)) / 2 clipped to [0, 1]; one of
the logistic loss (``loss="logistic"``) gives 1 / (1 + e^{−f(x)}); one of a hinge loss has no probabilities
(``predict_proba_one`` raises NotImplementedError, as river allows). A learner whose default loss is
multi-class (fsgd, polk, bsgd: ``multi_hinge``) gets its binary counterpart (``hinge``) unless ``loss`` is given.

:class:`MultiClassifier` takes okl's multi-class learners (fsgd, polk, bsgd; ``loss="multi_hinge"`` or
``"multi_logistic"``) on any hashable labels, numbered 0, 1, ... in the order they first come; the
multi-logistic loss gives the softmax of the class scores as probabilities.

River's ``check_estimator`` passes for every learner, except its bounded-memory check for the learners whose
state grows with every round by design (:meth:`okl.learners.base.Learner.grows`: kernel_awv, online_krr,
kons, sketched_kons, fsgd, omkl and adamkl, rbf_ogd without a budget), which declare it in ``_unit_test_skips``.
A learner whose default loss is one of labels (fsgd, polk: ``multi_hinge``) learns the square loss in a
:class:`Regressor` unless ``loss`` is given.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

import numpy as np

from okl import riverlib
from okl.errors import ConfigError, OklError, in_python_words
from okl.learners import LEARNERS, Learner
from okl.losses import BINARY_OF, LABEL_LOSSES, MULTICLASS
from okl.validation import integer_at_least

riverlib.require()

from river import base  # noqa: E402 (after the check that says how to install river)

MEMORY_CHECK = "check_bounded_memory_growth"  # river's check that a learner's memory stops growing


@contextlib.contextmanager
def _python_words() -> Iterator[None]:
    """okl's errors in the keywords of a Python call: ``set learner.eta`` becomes ``set eta=``."""
    try:
        yield
    except (OklError, ValueError) as exc:
        raise _in_python_words(exc) from None


def _in_python_words(exc: Exception) -> Exception:
    """``exc`` with its ``learner.key`` words as ``key=`` (see :func:`_python_words`)."""
    return in_python_words(exc, "learner")


def _score_loss(learner: Learner) -> str | None:
    """The loss whose scale the learner's score f(x) has (what its probabilities follow): its own, the one the task
    chose (dual_sgd), or for an ensemble that of its experts when they share one (ewa's own loss weighs the experts;
    its score averages theirs: hinge experts gave "probabilities" (1 + f) / 2, LogLoss 1.197 on Phishing)."""
    experts = getattr(learner, "experts", None)
    if experts:
        losses = {_score_loss(expert) for expert in experts}
        return losses.pop() if len(losses) == 1 else None
    return getattr(learner.params, "loss", None) or getattr(learner, "loss", None) or "square"


class _Adapter(base.Estimator):
    """What the estimators share: the learner's key and parameters, the feature order, the learner."""

    task = ""

    def __init__(
        self,
        learner: str = "pkawv_taylor",
        features: Sequence[Hashable] | None = None,
        horizon: int | None = None,
        **params: Any,
    ) -> None:
        if horizon is not None:  # the learner is built at the first sample: its keywords are checked here
            integer_at_least("horizon", horizon, 1)
        if isinstance(features, (str, bytes)) or (features is not None and not len(features)):
            raise ConfigError(  # "time" became the features 't', 'i', 'm', 'e'; [] was taken as not given
                f"features takes the list of feature keys, got {features!r}: features=[{features!r}] for one"
                if isinstance(features, (str, bytes))
                else "features=[] names no feature: give the feature keys, or leave features out"
            )
        self.learner = learner
        self.features = None if features is None else tuple(features)
        self.horizon = horizon
        self.params = params
        spec = LEARNERS.get(learner)
        if self.task not in spec.tasks:
            raise ConfigError(
                f"learner {learner!r} does not learn {self.task} tasks; it learns {', '.join(spec.tasks)}"
            )
        if spec.beforehand is not None:
            raise ConfigError(f"learner {learner!r} sees the stream before round 1; river estimators learn online")
        self._settings = self._defaults(spec, params)
        with _python_words():  # wrong keys and values, and a loss that does not fit the task, fail here
            probe = spec(1, **self._settings)  # (Regressor("fsgd", loss="hinge") failed at the first sample)
            probe.check_task(self.task)
            self._loss = _score_loss(probe)
            self._grows = probe.grows  # whether the state grows with the rounds does not depend on d
        self._order = self.features
        self._known: frozenset = frozenset(self._order or ())
        self._warned = False
        self._okl: Learner | None = None

    def _defaults(self, spec: type[Learner], params: dict[str, Any]) -> dict[str, Any]:
        """The learner's settings: ``params`` and this estimator's defaults for the keys not given."""
        return dict(params)

    def _unit_test_skips(self) -> set[str]:
        """river's checks that do not apply: its memory check for a learner whose state grows by design."""
        return {MEMORY_CHECK} if self._grows else set()

    def _vector(self, x: dict) -> np.ndarray | None:
        """``x`` as the learner's input; the first sample with features fixes the order and builds the learner
        (None before it)."""
        if self._okl is None:
            self._order = self._order or riverlib.feature_order(x)
            if not self._order:
                return None
            self._known = frozenset(self._order)
            with _python_words():  # kept once it fits the task: a refused one is refused again at the next sample
                learner = LEARNERS.get(self.learner)(len(self._order), horizon=self.horizon, **self._settings)
                learner.check_task(self.task)
            self._okl = learner
        if not self._warned and not self._known.issuperset(x):
            self._warned = True
            unknown = sorted(map(repr, set(x) - self._known))
            warnings.warn(
                f"okl.river: features {', '.join(unknown)} are not in the learner's {len(self._order)} features "
                f"(the first sample's) and are ignored; pass features=[...] with every feature to use them",
                stacklevel=3,
            )
        return riverlib.vector(x, self._order)

    def _score(self, x: dict) -> float:
        """The learner's prediction f(x) (0 before the learner exists)."""
        vector = self._vector(x)
        return 0.0 if vector is None else float(self._okl.predict_one(vector))

    def _learn(self, x: dict, y: float) -> None:
        vector = self._vector(x)
        if vector is not None:
            try:  # _python_words' rule, without a context manager's 2-3 µs in every round
                self._okl.learn_one(vector, y)
            except (OklError, ValueError) as exc:
                raise _in_python_words(exc) from None


class Regressor(_Adapter, base.Regressor):
    """An okl learner as a river regressor: ``Regressor("pkrr_nystrom", sigma=1.0, lam=1.0)``."""

    task = "regression"

    def _defaults(self, spec: type[Learner], params: dict[str, Any]) -> dict[str, Any]:
        """A default loss of labels becomes the square loss (fsgd, polk: multi_hinge; Regressor("fsgd") failed at the
        first sample)."""
        default = getattr(spec.Params, "loss", None)
        return {"loss": "square", **params} if default in LABEL_LOSSES else dict(params)

    def learn_one(self, x: dict, y: float) -> None:
        try:
            target = float(y)
        except (TypeError, ValueError):
            raise ValueError(f"okl.river: learn_one takes a number as y (got {y!r})") from None
        self._learn(x, target)

    def predict_one(self, x: dict) -> float:
        return self._score(x)


class Classifier(_Adapter, base.Classifier):
    """An okl learner as a binary river classifier: ``Classifier("fogd", eta=0.1, loss="logistic")``."""

    task = "binary"

    def _defaults(self, spec: type[Learner], params: dict[str, Any]) -> dict[str, Any]:
        """A multi-class default loss becomes its binary counterpart (fsgd's multi_hinge: hinge)."""
        default = getattr(spec.Params, "loss", None)
        return {"loss": BINARY_OF[default], **params} if default in BINARY_OF else dict(params)

    def learn_one(self, x: dict, y: bool) -> None:
        if y not in (True, False):
            raise ValueError(
                f"okl.river.Classifier is binary: labels are True/False (or 1/0), got {y!r}; "
                f"use okl.river.MultiClassifier for more classes"
            )
        self._learn(x, 1.0 if y else -1.0)

    def predict_one(self, x: dict) -> bool:
        return self._score(x) > 0

    def predict_proba_one(self, x: dict) -> dict[bool, float]:
        f = self._score(x)
        if self._loss == "logistic":
            p = 0.5 * (1 + math.tanh(f / 2))  # 1 / (1 + e^{-f}), without overflow
        elif self._loss == "square":
            p = min(max((1 + f) / 2, 0.0), 1.0)
        else:
            what = f"the {self._loss} loss" if self._loss else "experts of several losses"
            raise NotImplementedError(f"a learner of {what} has no probabilities")
        return {False: 1 - p, True: p}


class MultiClassifier(_Adapter, base.Classifier):
    """An okl multi-class learner as a river classifier: ``MultiClassifier("polk", sigma=0.5, K=0.04)``;
    labels are any hashables, numbered 0, 1, ... as they first come."""

    task = "multiclass"

    def __init__(
        self,
        learner: str = "fsgd",
        features: Sequence[Hashable] | None = None,
        horizon: int | None = None,
        **params: Any,
    ) -> None:
        super().__init__(learner, features, horizon, **params)
        if self._loss not in MULTICLASS:
            raise ConfigError(f"MultiClassifier needs a multi-class loss: loss={' or '.join(map(repr, MULTICLASS))}")
        self._labels: list[Hashable] = []
        self._index: dict[Hashable, int] = {}

    @property
    def _multiclass(self) -> bool:
        return True

    def learn_one(self, x: dict, y: Hashable) -> None:
        if y is None or y != y:  # None, or a NaN: each NaN had become a class of its own (NaN != NaN)
            raise ValueError(f"okl.river.MultiClassifier: learn_one got a missing label ({y!r}): drop the sample")
        new = y not in self._index
        if new:
            self._index[y] = len(self._labels)
            self._labels.append(y)
        try:
            self._learn(x, float(self._index[y]))
        except Exception:  # a refused sample registers no label (NaN labels became a class each, unlearned)
            if new:
                del self._index[y]
                self._labels.pop()
            raise

    def predict_one(self, x: dict) -> Hashable | None:
        if not self._labels:
            return None
        return self._labels[int(self._score(x))]

    def predict_proba_one(self, x: dict) -> dict[Hashable, float]:
        """The softmax of the class scores f_c(x) for the multi-logistic loss (its model of P(c | x))."""
        if self._loss != "multi_logistic":
            raise NotImplementedError(f"a learner of the {self._loss} loss has no probabilities")
        if not self._labels:
            return {}
        vector = self._vector(x)
        if vector is None:  # no sample with features yet: nothing learned, every known label alike
            return dict.fromkeys(self._labels, 1 / len(self._labels))
        scores = self._okl.activations(vector[None, :])[0]
        scores = np.concatenate([scores, np.zeros(len(self._labels) - len(scores))])  # classes not yet scored
        p = np.exp(scores - scores.max())
        return dict(zip(self._labels, (p / p.sum()).tolist(), strict=True))
