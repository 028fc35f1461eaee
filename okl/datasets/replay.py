"""Replay the sequence an adaptive environment chose in an earlier run.

``dataset=replay dataset.run=<run directory>`` reads the inputs (columns ``x_0 .. x_{d-1}``, which
the runner records for adaptive environments) and labels of that run's rounds, so that any learner
can be played on exactly the sequence another learner faced (pkawv_jezequel2019 Figure 3 compares
learners on one sequence). The task is the recorded run's.
"""

from __future__ import annotations

from dataclasses import dataclass

from okl.datasets.base import InMemory, register
from okl.errors import ConfigError, DataError
from okl.store import RunDir


@dataclass(frozen=True)
class ReplayParams:
    """run: the run directory whose recorded sequence is replayed."""

    run: str = ""


@register("replay")
class Replay(InMemory):
    """The recorded rounds of an earlier run."""

    Params = ReplayParams

    def __init__(self, **params) -> None:
        super().__init__(**params)
        if self.params.run in ("", "???"):
            raise ConfigError("dataset=replay needs the run to replay: dataset.run=\"'<run directory>'\"")
        run = RunDir(self.params.run)
        manifest = run.manifest()
        if manifest is None:
            raise DataError(
                f"no run at {self.params.run!r}: set dataset.run= to a run directory (one holding run.json)"
            )
        recorded = run.inputs() if manifest.rounds else None
        if recorded is None:
            raise DataError(
                f"run {self.params.run!r} has no recorded inputs (only adaptive environments record them): "
                f"replay an adversary run, or rerun its dataset config"
            )
        self.hold(*recorded, manifest.task)
