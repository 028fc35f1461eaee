"""okl's basic sweeper (``hydra/sweeper=basic``, Hydra's default, so the sweeper of ``okl-run -m``): Hydra's
basic sweeper, same keys and same jobs, whose jobs' configs (for the batch check and for any launcher:
basic, joblib, submitit) come from :class:`okl.compose.Composer`, one composition per distinct structure
instead of two per job. A preset that selects another sweeper (``override /hydra/sweeper: ...``) gets it.

Hydra instantiates sweepers only from the ``hydra_plugins`` package, and finds them by scanning it, which
misses an editable install: ``okl-run`` calls :func:`install` in the process that sweeps (not in a
launcher's workers, which only play jobs).
"""

from __future__ import annotations

from typing import Any

from hydra.core.config_store import ConfigStore
from hydra.core.plugins import Plugins
from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext

from okl.compose import Composer

# The basic sweeper's keys (a plain node: Hydra's plugin scan may import this module again, and a config
# typed by a class of the first import would not pickle to a launcher's workers).
CONF = {"_target_": "hydra_plugins.okl_sweeper.OklSweeper", "max_batch_size": None, "params": None}


class OklSweeper(Sweeper):
    """Hydra's basic sweeper composing through :class:`okl.compose.Composer`. It holds one rather than
    subclass it: Hydra's plugin scan re-imports its core plugins, so a class defined before the scan would
    subclass a stale ``BasicSweeper``."""

    def __init__(self, max_batch_size: int | None = None, params: dict[str, str] | None = None) -> None:
        from hydra._internal.core_plugins.basic_sweeper import BasicSweeper

        self.basic = BasicSweeper(max_batch_size=max_batch_size, params=params)

    def setup(self, *, hydra_context: HydraContext, task_function: Any, config: Any) -> None:
        fast = HydraContext(config_loader=Composer(hydra_context.config_loader), callbacks=hydra_context.callbacks)
        self.basic.setup(hydra_context=fast, task_function=task_function, config=config)

    def sweep(self, arguments: list[str]) -> Any:
        return self.basic.sweep(arguments)


def install() -> None:
    """Make :class:`OklSweeper` this process's ``hydra/sweeper=basic``. Hydra's plugin scan (the first
    ``Plugins.instance()``) re-executes its plugins' modules, which store their configs again: ours is stored
    after it."""
    Plugins.instance().register(OklSweeper)
    ConfigStore.instance().store(group="hydra/sweeper", name="basic", node=CONF, provider="okl")
