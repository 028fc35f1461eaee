"""okl's learners as river estimators, for river users: any registered learner by its key, with its
parameters as keywords, on river's dict samples, in river's pipelines and evaluations.

>>> from river import datasets, evaluate, metrics, preprocessing
>>> from okl.river import Regressor
>>> model = preprocessing.StandardScaler() | preprocessing.TargetStandardScaler(
...     Regressor("pkawv_taylor", M=2, sigma=4.0, lam=0.1))
>>> evaluate.progressive_val_score(datasets.TrumpApproval(), model, metrics.MAE())
MAE: 0.554977

(river's ``linear_model.LinearRegression`` in the same pipeline: MAE 1.314548.) okl's kernel learners have no
intercept and start from ŷ = 0: standardise the target, as here, unless it is centred.

A sample's dict becomes the learner's vector x_t in a fixed feature order: ``features`` when given, else the
first sample's keys, sorted (:mod:`okl.riverlib`). The learner is built at that first sample, with d the
number of features; features absent from a sample are 0, features outside the order are ignored.
``horizon`` is the number of rounds for learners whose default tuning needs it (FOGD's η = 1/√n when
``eta`` is not given).

:class:`Classifier` is binary, on river's labels ``True``/``False`` (or 1/0), which the learner sees as +1/−1.
Its score f(x) gives the label True when f(x) > 0, and probabilities where they mean something: a learner of the
square loss estimates E[y | x] = 2 P(True | x) − 1, so P(True | x) = (1 + f(x)) / 2 clipped to [0, 1]; one of
the logistic loss (``loss="logistic"``) gives 1 / (1 + e^{−f(x)}); one of a hinge loss has no probabilities
(``predict_proba_one`` raises NotImplementedError, as river allows).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from okl import riverlib
from okl.errors import ConfigError
from okl.learners import LEARNERS, Learner

riverlib.require()

from river import base  # noqa: E402 (after the check that says how to install river)


class _Adapter(base.Estimator):
    """What both estimators share: the learner's key and parameters, the feature order, the learner."""

    task = ""

    def __init__(
        self,
        learner: str = "pkawv_taylor",
        features: Sequence[Hashable] | None = None,
        horizon: int | None = None,
        **params: Any,
    ) -> None:
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
        # wrong keys and values fail here, not at the first sample
        self._loss = getattr(LEARNERS.params(learner, params), "loss", "square")
        self._order = self.features
        self._okl: Learner | None = None

    def _vector(self, x: dict) -> np.ndarray | None:
        """``x`` as the learner's input; the first sample with features fixes the order and builds the learner
        (None before it)."""
        if self._okl is None:
            self._order = self._order or riverlib.feature_order(x)
            if not self._order:
                return None
            self._okl = LEARNERS.get(self.learner)(len(self._order), horizon=self.horizon, **self.params)
            self._okl.check_task(self.task)
        return riverlib.vector(x, self._order)

    def _score(self, x: dict) -> float:
        """The learner's prediction f(x) (0 before the learner exists)."""
        vector = self._vector(x)
        return 0.0 if vector is None else float(self._okl.predict_one(vector))

    def _learn(self, x: dict, y: float) -> None:
        vector = self._vector(x)
        if vector is not None:
            self._okl.learn_one(vector, y)


class Regressor(_Adapter, base.Regressor):
    """An okl learner as a river regressor: ``Regressor("pkrr_nystrom", sigma=1.0, lam=1.0)``."""

    task = "regression"

    def learn_one(self, x: dict, y: float) -> None:
        self._learn(x, float(y))

    def predict_one(self, x: dict) -> float:
        return self._score(x)


class Classifier(_Adapter, base.Classifier):
    """An okl learner as a binary river classifier: ``Classifier("fogd", eta=0.1, loss="logistic")``."""

    task = "binary"

    def learn_one(self, x: dict, y: bool) -> None:
        if y not in (True, False):
            raise ValueError(f"okl.river.Classifier is binary: labels are True/False (or 1/0), got {y!r}")
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
            raise NotImplementedError(f"a learner of the {self._loss} loss has no probabilities")
        return {False: 1 - p, True: p}
