"""Any river model as an okl learner, so that river's baselines play okl's datasets and adversaries and land
in the same results store, with timings and regret::

    okl-run learner=river learner.model=neighbors.KNNRegressor 'learner.params={n_neighbors: 5}' dataset=casp

``model`` is a dotted path under ``river.`` (a regressor for regression datasets, a classifier otherwise) and
``params`` its keyword arguments. river is an optional extra (``pip install 'okl[river]'``).

``standardize: true`` plays the model in the pipeline river's documentation uses for linear and kernel models,
``preprocessing.StandardScaler() | model``, with ``preprocessing.TargetStandardScaler`` around the model for
regression. ``model`` may also be one of okl's river estimators (``okl.river.Regressor``, ``okl.river.Classifier``,
``okl.river.MultiClassifier``, with ``params: {learner: pkawv_taylor, M: 2}``): okl's learners played as a river
user plays them, in the same pipeline as river's models (``okl-bench bench_river_bundled``).

Round t gives river the dict ``{0: x_t[0], ..., d-1: x_t[d-1]}`` and reads the prediction ŷ_t as okl scores it:

- regression: ``predict_one``;
- binary (okl's labels ±1 are river's ``True``/``False``): P(True) − P(False) from ``predict_proba_one``, a score
  in [−1, 1] whose sign is river's predicted label (a tie, 0, counts as an error); ±1 from ``predict_one`` for a
  classifier without probabilities;
- multiclass (labels 0..C−1): the class ``predict_one`` predicts (0 before any label).

A classifier is binary until ``check_task("multiclass")`` (which okl-run calls from the dataset's task): its
labels are −1 or +1, then class indices 0, 1, ...; any other label is a one-line error (labels 0, 1, 2 from Python
were read as y > 0, and once multiclass, 2.5 and −1 became classes of their own).

A model with a ``seed`` argument that ``params`` does not set gets the run's seed (``seed``), so that the same
config and seed give the same rounds.

river models share no measure of their size: ``model_size`` is 0 and the run's report holds the model's memory
(``memory_bytes``, river's ``_raw_memory_usage``) instead.

>>> knn = RiverModel(2, model="neighbors.KNNRegressor", params={"n_neighbors": 1})
>>> knn.learn_one(np.array([0.0, 0.0]), 1.0)
>>> knn.learn_one(np.array([1.0, 1.0]), 3.0)
>>> knn.predict_one(np.array([0.9, 0.8]))
3.0
"""

from __future__ import annotations

import copy
import importlib
import inspect
from dataclasses import dataclass
from typing import Any

import numpy as np

from okl import riverlib
from okl.errors import ConfigError
from okl.learners.base import Learner, register
from okl.validation import seed

TASK_LABELS = {"regression": None, "binary": "sign", "multiclass": "class"}  # what a label is (Learner.labels)


@dataclass(frozen=True)
class RiverParams:
    """model: a river regressor or classifier by its dotted path under ``river.`` (or ``okl.river.<estimator>``);
    params: its keyword arguments (None: none); seed: the model's seed, where it takes one and params does not
    set it; standardize: standardise x (and a regression target) online, in river's pipeline."""

    model: str = "linear_model.LinearRegression"
    params: dict[str, Any] | None = None
    seed: int = 0
    standardize: bool = False

    def __post_init__(self) -> None:
        seed("seed", self.seed)
        base = riverlib.require().base
        found = riverlib.resolve(self.model, "model")
        if not (isinstance(found, type) and issubclass(found, (base.Regressor, base.Classifier))):
            raise ConfigError(f"model {self.model!r} is not a river regressor or classifier")
        if self.params is not None and not isinstance(self.params, dict):
            raise ConfigError(f"params must be a mapping of {self.model}'s arguments by name, e.g. {{name: value}}")


@register("river")
class RiverModel(Learner):
    """A river model (``river.<model>(**params)``) played round by round."""

    Params = RiverParams
    tasks = ("regression", "binary", "multiclass")

    def __init__(self, d: int, *, horizon: int | None = None, **params: Any) -> None:
        super().__init__(d, horizon=horizon, **params)
        p = self.params
        model = riverlib.resolve(p.model, "model")
        arguments = dict(p.params or {})
        if "seed" in inspect.signature(model).parameters:
            arguments.setdefault("seed", p.seed)
        try:
            self.estimator = model(**arguments)
        except (TypeError, ValueError, ConfigError) as exc:  # ConfigError: okl.river's own estimators check there
            raise ConfigError(f"learner.params: {riverlib.full_name(p.model)} rejects {p.params}: {exc}") from None
        self._keys = range(self.d)
        self._task = "regression" if isinstance(self.estimator, riverlib.require().base.Regressor) else "binary"
        self.labels = TASK_LABELS[self._task]
        self.model = self._pipeline(self.estimator)
        self._try()

    def _pipeline(self, estimator: Any) -> Any:
        """The estimator, behind river's online standard scalers when ``standardize`` is set."""
        if not self.params.standardize:
            return estimator
        scaling = importlib.import_module("river.preprocessing")
        if self._task == "regression":
            estimator = scaling.TargetStandardScaler(estimator)
        return scaling.StandardScaler() | estimator

    def _try(self) -> None:
        """Play two rounds on a fresh copy of the model: river checks many parameters only when it first
        predicts or learns (``n_neighbors=0`` raised ValueError at round 2)."""
        trial = copy.copy(self)
        trial.model = self._pipeline(self.estimator.clone())
        x = np.zeros(self.d)
        try:
            for y in (1.0, 0.0):  # unchecked (x and y are finite): the checks' compiled code loads when a run plays
                type(self).predict_one.__wrapped__(trial, x)
                type(self).learn_one.__wrapped__(trial, x, y)
            type(self).predict_one.__wrapped__(trial, x)
        except Exception as exc:  # noqa: BLE001 (river raises what its code raises: say which, and where)
            raise ConfigError(
                f"learner.params: {riverlib.full_name(self.params.model)} with {self.params.params} fails on its first "
                f"rounds ({type(exc).__name__}: {exc}): check them against the documentation of "
                f"{riverlib.full_name(self.params.model)}"
            ) from None

    def check_task(self, task: str) -> None:
        base = riverlib.require().base
        if task == "regression" and not isinstance(self.estimator, base.Regressor):
            raise ConfigError(
                f"learner.model {self.params.model} is not a regressor: choose one (e.g. linear_model.LinearRegression)"
            )
        if task != "regression" and not isinstance(self.estimator, base.Classifier):
            raise ConfigError(
                f"learner.model {self.params.model} is not a classifier, and {task} datasets need one "
                f"(e.g. linear_model.LogisticRegression)"
            )
        if task == "multiclass" and not self.estimator._multiclass:
            raise ConfigError(
                f"learner.model {self.params.model} is binary only: choose a multiclass one "
                f"(e.g. tree.HoeffdingTreeClassifier)"
            )
        self._task = task
        self.labels = TASK_LABELS[task]

    def _x(self, x: np.ndarray) -> dict[int, float]:
        return dict(zip(self._keys, x.tolist(), strict=True))

    def predict_one(self, x: np.ndarray) -> float:
        task = self._task
        if task == "regression":
            return float(self.model.predict_one(self._x(x)))
        if task == "multiclass":
            label = self.model.predict_one(self._x(x))
            return 0.0 if label is None else float(label)
        try:
            proba = self.model.predict_proba_one(self._x(x))
        except NotImplementedError:
            return 1.0 if self.model.predict_one(self._x(x)) else -1.0
        return float(proba.get(True, 0.0) - proba.get(False, 0.0))

    def learn_one(self, x: np.ndarray, y: float) -> None:
        task = self._task
        label = float(y) if task == "regression" else (y > 0 if task == "binary" else int(y))
        self.model.learn_one(self._x(x), label)

    @property
    def model_size(self) -> int:
        return 0

    def report(self) -> dict[str, Any]:
        return {**super().report(), "memory_bytes": int(self.model._raw_memory_usage)}
