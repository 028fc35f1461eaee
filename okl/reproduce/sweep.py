"""The runs of a preset's sweep, expanded as ``okl-run -m experiment=<name>`` expands them.

Hydra's basic sweeper takes the preset's ``hydra.sweeper.params`` and the command line's overrides (the
command line wins for a key both give) and runs their Cartesian product; :func:`expand` does the same
with Hydra's public API (``hydra.compose`` and the override parser of ``hydra.core``) and builds each
run's plan, so the runs it names are the run directories ``okl-run -m`` writes.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

from hydra import initialize_config_module
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig

from okl import config
from okl.compose import Composer
from okl.config import Plan
from okl.system import older_objects_frozen

ARM = "arm/"  # the config group of the arms: one learner with its own keys per option


@dataclass(frozen=True)
class Run:
    """One run of an artefact: the ``okl-run`` overrides that make it, its plan and its arm."""

    overrides: tuple[str, ...]
    plan: Plan
    arm: str

    @property
    def dataset(self) -> str:
        return self.plan.dataset.label

    @property
    def seed(self) -> int:
        return self.plan.run.seed

    @property
    def label(self) -> str:
        """How progress lines and failures name the run."""
        return f"{self.arm} on {self.dataset}, seed {self.seed}"

    @property
    def command(self) -> str:
        return "okl-run " + " ".join(self.overrides)


def combinations(preset: str, overrides: list[str]) -> list[list[str]]:
    """The override lists of the runs of ``okl-run -m experiment=<preset> *overrides``."""
    params = dict(_sweep_params(preset))
    given = dict(o.split("=", 1) for o in overrides)
    params.update({k.lstrip("+~"): v for k, v in given.items()})
    parsed = OverridesParser.create().parse_overrides([f"{k}={v}" for k, v in params.items()])
    choices = [
        [f"{o.get_key_element()}={v}" for v in o.sweep_string_iterator()]
        if o.is_sweep_override()
        else [f"{o.get_key_element()}={o.get_value_element_as_str()}"]
        for o in parsed
    ]
    return [[f"experiment={preset}", *combo] for combo in itertools.product(*choices)]


@functools.cache
def _sweep_params(preset: str) -> tuple[tuple[str, str], ...]:
    """The preset's ``hydra.sweeper.params`` (:meth:`~okl.compose.Composer.sweeper_params`, kept across
    processes), read once per process: ``okl-reproduce`` reads them to find an artefact's datasets, then to
    expand its runs."""
    with initialize_config_module(config_module="okl.conf", version_base="1.3"):
        return Composer.current().sweeper_params([f"experiment={preset}"])


def expand(preset: str, overrides: list[str]) -> list[Run]:
    """The distinct runs of the preset's sweep with ``overrides`` (identical plans collapse to one), each
    distinct structure composed once (:class:`okl.compose.Composer`), each config planned before the next is
    drawn (:meth:`~okl.compose.Composer.compose_each`)."""
    runs: dict[str, Run] = {}
    combos = combinations(preset, overrides)
    with older_objects_frozen(), initialize_config_module(config_module="okl.conf", version_base="1.3"):
        composer = Composer.current()
        for combo, cfg in zip(combos, composer.compose_each(combos), strict=True):
            arm = next((o.split("=", 1)[1] for o in combo if o.startswith(ARM)), cfg.learner.name)
            plan = config.plan(cfg)
            runs.setdefault(str(plan.run_dir().path), Run(tuple(combo), plan, arm))
    return list(runs.values())


def replay(run: Run, reference: Run) -> Run:
    """``run``'s arm played on the sequence ``reference`` recorded (``dataset=replay``), with the reference's
    σ, λ and comparator."""
    ref = reference.plan
    overrides = [
        "dataset=replay",
        f"dataset.run='{ref.run_dir().path}'",
        f"sigma={ref.run.sigma}",
        f"lam={ref.run.lam}",
        f"comparator={ref.comparator.name if ref.comparator else 'none'}",
        *(f"+{o}" for o in run.overrides if o.startswith(ARM)),
    ]
    return Run(tuple(overrides), config.plan(compose_config(overrides)), run.arm)


def datasets(preset: str, overrides: list[str]) -> list[str]:
    """The datasets the preset's runs read (composed only, once per ``dataset=`` choice: nothing is loaded)."""
    distinct = {tuple(o for o in c if o.startswith("dataset=")): c for c in combinations(preset, overrides)}
    return sorted({compose_config(combo).dataset.name for combo in distinct.values()})


def compose_config(overrides: list[str]) -> DictConfig:
    with initialize_config_module(config_module="okl.conf", version_base="1.3"):
        return Composer.current().compose(overrides)
