"""Hyperparameter studies (``okl-tune``, the optuna extra): tune on a prefix of the stream, report on the rest.

A study searches the keys given as Optuna distributions (:func:`parse_space`: ``lam=loguniform(1e-4,10)``,
``sigma=uniform(0.1,2)``, ``M=int(1,4)``, ``kors=choice(eq4,code)``); every other argument is an ``okl-run``
override shared by all trials. Each trial plays one ordinary run per seed (under the results root, visible to
``okl-results``; a run already there is reused) on the stream's first ``prefix`` rounds, and scores the mean of
their average losses; a trial whose run fails, or whose values the learner refuses, fails with its reason (never a
loss over part of the prefix: ``timeout_s`` is refused), and Ctrl-C ends the study with its trial failed. While a
run plays, its average loss so far is reported to Optuna at ``CHECKPOINTS`` evenly spaced rounds (step = seed index
× ``CHECKPOINTS`` + checkpoint), so the pruner (median by default) stops a trial that is worse than the median of
the earlier ones at the same point: its run ends there with status ``pruned``. When the study holds ``trials``
trials, the best values play the report runs on the rest of the stream (``dataset.skip`` moved past the prefix, to
the user's ``dataset.length``), with the same seeds: the numbers to quote, since no choice saw them.

The study lives in ``<results root>/okl-tune.db`` (SQLite, ``optuna-dashboard sqlite:///results/okl-tune.db``
shows it) under a name derived from the command (or ``--study``): running the same command again continues it
(trial numbers go on), and the sampler is seeded with the study's seed plus the number of trials already
there, so a resumed study proposes new points deterministically.

Example::

    okl-tune dataset=casp learner=pkawv_taylor 'lam=loguniform(1e-4,10)' 'sigma=loguniform(0.1,10)' \\
        --prefix 10000 --trials 30 --seeds 3
"""

from __future__ import annotations

import functools
import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from omegaconf import DictConfig

from okl import config, runner
from okl.errors import ConfigError
from okl.reproduce.sweep import compose_config
from okl.runner.play import Stop

CHECKPOINTS = 10  # reports to the pruner per run
KINDS = ("loguniform", "uniform", "int", "choice")
SPEC = re.compile(r"^(?P<key>[\w.]+)=(?P<kind>\w+)\((?P<args>.*)\)$")


@dataclass
class Study:
    """A study's settings: the fixed overrides, the search space, the protocol and where it is stored."""

    overrides: list[str]
    space: dict[str, object]  # key -> an optuna distribution
    prefix: int
    trials: int = 30
    seeds: int = 1
    pruner: str = "median"
    seed: int = 0
    name: str | None = None
    root: Path = field(default_factory=lambda: Path("results"))

    @functools.cached_property
    def window(self) -> tuple[int, int | None]:
        """The user's stream in the file: its ``dataset.skip`` and ``dataset.length`` (None: to the end), composed once
        per study (every trial's run and the report read it)."""
        dataset = compose_config(list(self.overrides)).dataset
        if "skip" not in dataset:
            raise ConfigError(
                f"--prefix needs a dataset with dataset.skip and dataset.length (the real datasets, dataset=file); "
                f"{dataset.name} has none"
            )
        skip, length = dataset.skip or 0, dataset.length
        if length is not None and length <= self.prefix:
            raise ConfigError(
                f"--prefix {self.prefix} leaves no rounds of dataset.length={length} to report on: give a shorter "
                "--prefix"
            )
        return skip, length

    @property
    def command(self) -> str:
        """What makes the study: its fixed overrides, search space and prefix, in a fixed order."""
        words = sorted(self.overrides) + [f"{k}={v!r}" for k, v in sorted(self.space.items())] + [str(self.prefix)]
        return " ".join(words)

    @property
    def study_name(self) -> str:
        return self.name or "okl-" + hashlib.sha256(self.command.encode()).hexdigest()[:10]


def parse_space(arguments: list[str]) -> tuple[list[str], dict[str, object]]:
    """Split command-line arguments into fixed overrides and the search space (``key=kind(args)``)."""
    import optuna.distributions as d

    fixed, space = [], {}
    for argument in arguments:
        found = SPEC.match(argument)
        if not found or found["kind"] not in KINDS:
            if found and "(" in argument:
                raise ConfigError(
                    f"{argument!r}: unknown distribution {found['kind']!r}; use one of {', '.join(KINDS)}"
                )
            opened = re.match(r"([\w.]+)=(\w+)\(", argument)
            if opened and opened[2] in KINDS:  # a distribution that does not close: it read "nothing to tune"
                raise ConfigError(f"{argument!r}: close its parenthesis: {opened[1]}={opened[2]}(...)")
            fixed.append(argument)
            continue
        key, kind, args = found["key"], found["kind"], [a.strip() for a in found["args"].split(",") if a.strip()]
        if key in space:
            raise ConfigError(f"{argument!r}: {key} is given twice; give it one distribution")
        if kind == "choice":
            if not args:
                raise ConfigError(f"{argument!r}: choice takes one or more values: {key}=choice(a,b,...)")
            space[key] = d.CategoricalDistribution(args)
            continue
        try:
            low, high = (int(a) if kind == "int" else float(a) for a in args)
            if not low < high or (kind == "loguniform" and low <= 0):
                raise ValueError
        except ValueError:
            what = "low>0" if kind == "loguniform" else "low"
            raise ConfigError(
                f"{argument!r}: {kind} takes two numbers, {what} < high: {key}={kind}(low,high)"
            ) from None
        space[key] = (
            d.IntDistribution(low, high) if kind == "int" else d.FloatDistribution(low, high, log=kind == "loguniform")
        )
    if not space:
        raise ConfigError("nothing to tune: give at least one key as a distribution, e.g. 'lam=loguniform(1e-4,10)'")
    return fixed, space


def run(study: Study, say: Callable[[str], None] = print) -> dict:
    """Complete the study to ``study.trials`` trials, then play the report runs; returns the best values, the
    study's counts and the report's mean loss."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if any(o.startswith("timeout_s=") and o != "timeout_s=null" for o in study.overrides):
        raise ConfigError(  # trials stopped at different rounds were compared, the longest-played one "best"
            "timeout_s stops a trial before the end of its prefix, and only trials played to the end are scored: "
            "drop timeout_s (a shorter --prefix makes the trials shorter)"
        )
    inside = {k: _inside(d) for k, d in study.space.items()}
    variants = [inside] + [{**inside, k: c} for k, d in study.space.items() for c in getattr(d, "choices", ())[1:]]
    for values in variants:  # a bad override, any choice, or a prefix that leaves no rest: before any study is stored
        for report in (False, True):
            try:
                config.plan(_composed(study, values, 0, report))
            except ConfigError as exc:  # the report's skip is okl-tune's, not a key the user set
                if report and "leaves no rows" in str(exc):
                    raise ConfigError(
                        f"--prefix {study.prefix} leaves no rows to report on ({exc}): give a shorter --prefix"
                    ) from None
                raise
    try:
        study.root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file there, or no right to write: a traceback before
        raise ConfigError(
            f"cannot use the results root {study.root}: {exc.strerror or exc}; set OKL_RESULTS (or --root) to a "
            "writable folder"
        ) from None
    storage = f"sqlite:///{study.root.resolve() / 'okl-tune.db'}"
    base = optuna.load_study(study_name=study.study_name, storage=storage) if _exists(study, storage) else None
    ended = ("COMPLETE", "PRUNED", "FAIL")  # a trial left running by a process that is gone is not one of the study's
    done = sum(t.state.name in ended for t in base.trials) if base else 0
    scored = base.user_attrs.get("seeds", study.seeds) if base else study.seeds
    if scored != study.seeds:  # its best would be chosen among means over other numbers of seeds
        raise ConfigError(
            f"study {study.study_name} scores its trials over {scored} seed{'s' * (scored != 1)}: pass --seeds "
            f"{scored} to continue it, or --study NAME for a new study"
        )
    made = base.user_attrs.get("command", study.command) if base else study.command
    if made != study.command:  # --study NAME given to another command: its best was another learner's, or space's
        raise ConfigError(
            f"study {study.study_name} was made by another command ({made}): give this one another --study name"
        )
    pruner = (
        optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=2)
        if study.pruner == "median"
        else (optuna.pruners.NopPruner())
    )
    sampler = optuna.samplers.TPESampler(seed=study.seed + done)
    optuna_study = optuna.create_study(
        study_name=study.study_name,
        storage=storage,
        direction="minimize",
        load_if_exists=True,
        sampler=sampler,
        pruner=pruner,
    )
    optuna_study.set_user_attr("seeds", study.seeds)
    optuna_study.set_user_attr("command", study.command)
    say(f"study {study.study_name} in {storage}: {done} trials there, {max(0, study.trials - done)} to play")
    start = time.perf_counter()
    for _ in range(max(0, study.trials - done)):
        trial = optuna_study.ask(study.space)
        values = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in trial.params.items())
        try:
            value = _objective(study, trial)
        except Stop:
            optuna_study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            say(f"  trial #{trial.number}: {values}: pruned")
            continue
        except Failed as exc:
            optuna_study.tell(trial, state=optuna.trial.TrialState.FAIL)
            say(f"  trial #{trial.number}: {values}: failed ({exc})")
            continue
        except BaseException:  # Ctrl-C: the trial is not left running (it counted as done, unscored, forever)
            optuna_study.tell(trial, state=optuna.trial.TrialState.FAIL)
            raise
        optuna_study.tell(trial, value)
        say(f"  trial #{trial.number}: {values}: {value:.6g}")
    states = [t.state.name for t in optuna_study.trials if t.state.name in ended]  # not those a dead process left
    if "COMPLETE" not in states:
        raise ConfigError(
            f"no trial of study {study.study_name} was scored ({len(states)} failed or pruned, their reasons above): "
            "narrow the ranges to values the learner takes"
        )
    best = optuna_study.best_params
    say(f"best of {len(states)} trials ({states.count('PRUNED')} pruned): {best} -> {optuna_study.best_value:.6g}")
    report = [_play(study, best, seed, report=True) for seed in range(study.seeds)]
    mean = sum(report) / len(report)
    skip, length = study.window
    rest = "" if length is None else f", dataset.length={length - study.prefix}"
    where = f"dataset.skip={skip + study.prefix}{rest}"
    say(f"report on the rest of the stream ({where}), {study.seeds} seed(s): {mean:.6g}")
    return {
        "best": best,
        "trials": len(states),
        "pruned": states.count("PRUNED"),
        "report": mean,
        "seconds": time.perf_counter() - start,
    }


def _inside(distribution) -> object:
    """A value inside a distribution, for the check before the study: the first choice, else the middle of the range
    (geometric for a log range), never a bound (uniform(0,2) for sigma: 0 is not a bandwidth, the trials never draw
    it)."""
    if hasattr(distribution, "choices"):
        return distribution.choices[0]
    low, high = distribution.low, distribution.high
    if isinstance(low, int) and isinstance(high, int):
        return (low + high + 1) // 2
    return (low * high) ** 0.5 if distribution.log else (low + high) / 2


def _exists(study: Study, storage: str) -> bool:
    import optuna

    return study.study_name in {s.study_name for s in optuna.get_all_study_summaries(storage=storage)}


def _objective(study: Study, trial) -> float:
    losses = []
    for seed in range(study.seeds):

        def observe(t: int, loss: float, seed=seed, n=[0]) -> None:  # noqa: B006 (the run's checkpoint counter)
            while n[0] < CHECKPOINTS and t >= (n[0] + 1) * study.prefix // CHECKPOINTS:
                trial.report(loss, seed * CHECKPOINTS + n[0])
                n[0] += 1
                if trial.should_prune():
                    raise Stop

        losses.append(_play(study, trial.params, seed, observe=observe))
    return sum(losses) / len(losses)


class Failed(Exception):
    """A trial with no score: a run that failed or stopped before its last round, or values its learner refuses."""


def _play(study: Study, values: dict, seed: int, report: bool = False, observe=None) -> float:
    """One run of the study: the fixed overrides, ``values``, the seed; on the prefix, or on the rest (report). Only a
    complete run scores: an interrupted one (Ctrl-C) stops the study (KeyboardInterrupt), and a failed one, or one
    stopped early, fails its trial (:class:`Failed`): its loss over the rounds it played was scored as the trial's,
    beside trials scored over the whole prefix."""
    try:
        plan = config.plan(_composed(study, values, seed, report))
    except ConfigError as exc:  # values inside the range that the learner refuses (uniform(-5, 6) for sigma)
        raise Failed(str(exc)) from None
    outcome = runner.execute(plan, progress=False, observe=observe)
    if outcome.status == "pruned":
        raise Stop
    if outcome.status == "interrupted":
        raise KeyboardInterrupt
    if outcome.status != "complete" or outcome.average_loss is None:
        raise Failed(
            f"its run is {outcome.status} at round {outcome.rounds:,}" + (f": {outcome.error}" if outcome.error else "")
        )
    return outcome.average_loss


def _composed(study: Study, values: dict, seed: int, report: bool) -> DictConfig:
    """The configuration of one run of the study (:func:`_play`): the trials play the ``prefix`` rounds from where the
    user's stream starts (``dataset.skip``, 0 by default), the report the rest of the user's stream (to its
    ``dataset.length``, if set), so that no round of the report was seen by a trial (a report that skipped ``prefix``
    rows from the file's start replayed rounds the trials had tuned on when the user set ``dataset.skip``)."""
    skip, length = study.window
    if report:
        rest = "null" if length is None else length - study.prefix
        protocol = [f"dataset.skip={skip + study.prefix}", f"dataset.length={rest}"]
    else:
        protocol = [f"dataset.skip={skip}", f"dataset.length={study.prefix}"]
    overrides = [
        *study.overrides,
        *(f"{k}={v}" for k, v in values.items()),
        f"seed={seed}",
        *protocol,
        "progress=false",
    ]
    return compose_config(overrides)
