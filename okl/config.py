"""Typed configuration: the root schema, its checks, and the plan of one run.

Hydra composes ``conf/config.yaml`` over the structured root schema :class:`RunConfig` (so that a
wrong type such as ``M=abc`` fails at composition), then :func:`plan` validates each group against
its registry's ``Params`` dataclass and builds the dataset and the learner before anything is
written. Every failure is a :class:`~okl.errors.ConfigError` (or ``ResourceError``) with one line.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from okl.datasets import DATASETS, Dataset
from okl.dictionary.kors import WEIGHTS
from okl.errors import ConfigError, DataError
from okl.interpolation import parsed_once, resolved
from okl.learners import LEARNERS, Learner
from okl.learners.multikernel.raker import STEPS
from okl.losses import EVALUATION
from okl.registry import build_params, identity
from okl.regret import COMPARATORS, Comparator
from okl.store import RunDir, SinkParams
from okl.validation import bandwidth, integer_at_least, one_of, positive, seed
from okl.warmup import deferred, run_all

GROUPS = ("dataset", "learner", "comparator")


@dataclass
class RunConfig:
    """Top-level keys of a run; learner and dataset configs interpolate them (``sigma: ${sigma}``).

    M: Taylor degree; sigma: Gaussian bandwidth σ; lam: regularisation λ; seed: random seed of the
    stream and the learner; n: maximal number of rounds (None: the whole stream); timeout_s: wall
    clock budget of the learner (None: none); block: rounds per learner call (1: the per-round
    loop); progress: show a progress bar (single runs only); checkpoints: evenly spaced rounds at
    which a dataset's held-out set is scored (``test.parquet``; 0: never); kors: the KORS weights of
    the dictionary learners (``eq4`` or ``code``, :mod:`okl.dictionary.kors`); variant: raker's and
    adaraker's (``paper`` or ``code``, :mod:`okl.learners.multikernel.raker_code`); analyses: the post-run
    analyses after the rounds (:mod:`okl.analyses`; false: the rounds only, and the run keeps what a later run of
    the same command with true needs to compute them). Not part of a run's identity.
    """

    dataset: Any = None
    learner: Any = None
    sink: Any = None
    comparator: Any = None
    M: int = 2
    sigma: float = 1.0
    lam: float = 1.0
    seed: int = 0
    n: int | None = None
    timeout_s: float | None = None
    block: int = 256
    progress: bool = True
    checkpoints: int = 20
    kors: str = "eq4"
    variant: str = "paper"
    analyses: bool = True

    def __post_init__(self) -> None:
        integer_at_least("M", self.M, 1)
        bandwidth("sigma", self.sigma)
        positive("lam", self.lam)
        seed("seed", self.seed)
        if self.n is not None:
            integer_at_least("n", self.n, 1)
        if self.timeout_s is not None:
            positive("timeout_s", self.timeout_s)
        integer_at_least("block", self.block, 1)
        integer_at_least("checkpoints", self.checkpoints, 0)
        one_of("kors", self.kors, WEIGHTS)
        one_of("variant", self.variant, STEPS)


ConfigStore.instance().store(name="okl_schema", node=RunConfig)


@dataclass
class Plan:
    """Everything one run needs, validated: built objects, the run's identity and its config."""

    run: RunConfig
    dataset: Dataset
    learner: Learner
    sink: SinkParams
    rounds: int
    run_id: str
    config: dict[str, Any] = field(repr=False)
    identity: dict[str, Any] = field(repr=False)  # what determines the rounds: run_id hashes it
    comparator: Comparator | None = None  # regret is computed after play when set
    warm_ups: list = field(default_factory=list, repr=False)  # the learner's compilations, deferred (okl.warmup)

    def warm_up(self) -> None:
        """Compile (or load) the learner's compiled code: the runner calls it before round 1's clock starts
        (planning, which builds every learner of a sweep, leaves it to the runs that play)."""
        run_all(self.warm_ups)

    @property
    def partition(self) -> dict[str, object]:
        """Hive-style keys of the run directory, in order."""
        return {"learner": self.learner.name, "dataset": self.dataset.name, "seed": self.run.seed, "run": self.run_id}

    def run_dir(self) -> RunDir:
        return RunDir.at(self.sink.root, self.partition)

    @property
    def loss(self) -> tuple[str, Any]:
        """(name, function) of the dataset task's evaluation loss."""
        return EVALUATION[self.dataset.task]

    def stream(self, n: int, skip: int = 0) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Rounds skip+1 .. n of the stream, chunk by chunk as the dataset cuts them: (X, y), contiguous
        float64, checked finite."""
        seen = 0
        for X, y in self.dataset.head(n):
            start, seen = max(skip - seen, 0), seen + len(y)
            if start >= len(y):
                continue
            X = np.ascontiguousarray(X[start:], dtype=np.float64)
            y = np.ascontiguousarray(y[start:], dtype=np.float64)
            _check_finite(self.dataset.name, X, y, seen - len(y))
            yield X, y

    def inputs(self, n: int) -> np.ndarray:
        """The inputs of the first n rounds, as one array."""
        return np.concatenate([X for X, _ in self.stream(n)] or [np.zeros((0, self.dataset.d))])


def _check_finite(name: str, X: np.ndarray, y: np.ndarray, offset: int) -> None:
    for what, values in (("x", X), ("y", y)):
        finite = np.isfinite(values)
        if not finite.all():
            row = offset + 1 + int(np.argmin(finite.reshape(len(values), -1).all(axis=1)))
            raise DataError(
                f"dataset {name!r} gives a non-finite {what} at round {row:,}: the learners need finite values; "
                f"check the dataset's settings (dataset.*) or its files (okl-data verify)"
            )


def plan(cfg: DictConfig, given: Iterable[str] = ()) -> Plan:
    """Validate a composed config and build the run's dataset, learner and sink parameters. ``given``: the
    top-level keys the user set on the command line, each of which must reach the run (:func:`unused_keys`;
    a preset or a sweep may set a shared key, such as ``kors``, that only some of its learners read)."""
    try:
        try:
            values = resolved(cfg)
        except Exception:  # noqa: BLE001  (OmegaConf's walk raises it again, formatted as it formats it)
            with parsed_once():
                values = OmegaConf.to_container(cfg, resolve=True)
    except OmegaConfBaseException as exc:
        raise ConfigError(f"cannot resolve the configuration: {str(exc).splitlines()[0]}") from None
    nodes = {}
    for group in GROUPS:
        node = values.get(group)
        if not isinstance(node, dict) or "name" not in node:
            raise ConfigError(f"no {group} selected: add {group}=<name> to the command line")
        nodes[group] = dict(node)
    keys = [f.name for f in dataclasses.fields(RunConfig) if f.name not in GROUPS]
    for key in values.keys() - {*keys, *GROUPS}:
        raise ConfigError(
            f"unknown top-level key {key!r}; the top-level keys are {', '.join(keys)} "
            f"(a learner's or dataset's own key goes under it: learner.{key}=...)"
        )
    run = RunConfig(**values)
    for problem in unused_keys(cfg, given).values():
        raise ConfigError(problem)
    dataset = DATASETS.get(nodes["dataset"].pop("name"))(**nodes["dataset"])
    rounds = dataset.n if run.n is None else min(run.n, dataset.n)
    learner_class = LEARNERS.get(nodes["learner"].pop("name"))
    if dataset.task not in learner_class.tasks:
        raise ConfigError(
            f"learner {learner_class.name!r} does not handle {dataset.task} datasets ({dataset.name}); "
            f"it handles {', '.join(learner_class.tasks)}"
        )
    if dataset.adaptive and learner_class.beforehand is not None:
        raise ConfigError(
            f"learner {learner_class.name!r} sees the stream before round 1, but {dataset.name} chooses its "
            f"rounds online against the learner: pick an online learner, or replay the sequence (dataset=replay)"
        )
    with deferred() as warm_ups:  # what it compiles is compiled when the run plays (okl.warmup)
        learner = learner_class(dataset.d, horizon=rounds, **nodes["learner"])
    learner.check_task(dataset.task)
    if run.timeout_s is None:  # a run with a time budget may stop long before its state fills the memory
        learner.require_memory(rounds)
    comparator = _comparator(nodes["comparator"], dataset)
    sink = build_params("sink", "parquet", SinkParams, dict(values.get("sink") or {}))
    key = {
        "dataset": {"name": dataset.name, **identity(dataset.params)},
        "learner": {"name": learner.name, **identity(learner.params), **learner.revised},
        "rounds": rounds,
        "seed": run.seed,
    }
    if not learner.grouping_free:  # its numbers depend on the blocks (only then: every other run id is kept)
        key["block"] = run.block
    run_id = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]
    return Plan(
        run=run,
        dataset=dataset,
        learner=learner,
        sink=sink,
        rounds=rounds,
        run_id=run_id,
        config=values,
        identity=key,
        comparator=comparator,
        warm_ups=warm_ups,
    )


SHARED = ("M", "sigma", "lam", "kors", "variant")  # top-level keys that only reach the configs interpolating them


def unused_keys(cfg: DictConfig, given: Iterable[str]) -> dict[str, str]:
    """What is wrong with each shared top-level key in ``given`` (the keys the user set) that the selected
    learner does not read: no group interpolates it (``sigma: ${sigma}``), so ``okl-run learner=raker sigma=2``
    would run with raker's own σ² and silently ignore σ = 2. Each message names what to set instead."""
    own = {k.removeprefix("learner.") for k in given if k.startswith("learner.")}  # learner.sigma=2 given too
    given, found = set(given) & set(SHARED), {}
    if not given:
        return found
    used = json.dumps([OmegaConf.to_container(cfg[group], resolve=False) for group in GROUPS])
    learner = LEARNERS.get(cfg.learner.name)
    fields = {f.name: f for f in dataclasses.fields(learner.Params)}
    for key in (k for k in SHARED if k in given):
        if re.search(rf"\$\{{(oc\.select:)?{key}[,}}]", used):
            continue
        if key in fields and key in own:  # it said "set learner.sigma", which the user had
            fix = f"drop {key}=, learner.{key}={cfg.learner[key]} is what it uses"
        elif key in fields:
            fix = f"set learner.{key} (its own, default {fields[key].default})"
        elif key in learner.instead:
            fix = f"set {learner.instead[key]}"
        else:
            fix = f"drop {key}= (its keys: {', '.join(fields)})"
        found[key] = f"learner {learner.name!r} does not use the top-level {key}={cfg[key]}: {fix}"
    return found


def _comparator(node: dict[str, Any], dataset: Dataset) -> Comparator | None:
    name = node.pop("name")
    if name == "none":
        return None
    comparator = COMPARATORS.get(name)(**node)
    if dataset.task != "regression":
        raise ConfigError(
            f"comparator {name!r} scores the square loss of regression streams; {dataset.name} is "
            f"{dataset.task}: drop comparator= or pick a regression dataset"
        )
    return comparator
