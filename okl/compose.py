"""Hydra's composition of a run's config, at the cost of one composition per distinct structure.

Hydra composes every job of a sweep from scratch: it re-reads and re-parses each YAML file, rebuilds the
defaults tree and merges it, about 0.1 s per job (twice per job under the basic sweeper, which composes the
whole batch once to validate it). A sweep mostly varies *values* (``seed=0..999``, ``lam=1,0.1``) over a
few *structures* (``learner=``, ``dataset=``, ``experiment=``). :class:`Composer` splits each job's
overrides as Hydra itself does (:class:`hydra._internal.defaults_list.Overrides`: an override is a value
when its key is not a config group or its value is a dict; ``hydra.*`` overrides count as structure),
composes each distinct structure once, with one file cache shared by all compositions, and applies a job's
value overrides to a copy with Hydra's own function, then fills the fields Hydra derives from the whole
override list (``hydra.overrides.task``, ``hydra.job.override_dirname``).

The result is the config Hydra composes, node for node (``tests/test_compose.py`` compares the YAML of
both, ``hydra`` node included, over group, value, add, delete and error overrides). It relies on two
internals of hydra-core 1.3 (``ConfigLoaderImpl._apply_overrides_to_config`` and the file cache of one
composition), which that comparison pins.

Users: the ``okl`` sweeper (``hydra_plugins.okl_sweeper``, the default of ``okl-run -m``, so every
launcher gets its jobs' configs from here) and ``okl-reproduce``'s expansion of a preset.

Example::

    >>> from hydra import initialize_config_module
    >>> import okl.config  # registers the root schema
    >>> with initialize_config_module(config_module="okl.conf", version_base="1.3"):
    ...     composer = Composer.current()
    ...     cfgs = [composer.compose([f"seed={s}", "n=200"]) for s in range(3)]  # one composition
    >>> [c.seed for c in cfgs]
    [0, 1, 2]
"""

from __future__ import annotations

import copy
import pickle
from typing import Any, ClassVar

from hydra._internal.config_loader_impl import ConfigLoaderImpl, get_overrides_dirname
from hydra._internal.config_repository import CachingConfigRepository
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf, open_dict

CONFIG_NAME = "config"
SEARCHPATH = "hydra.searchpath"  # an override of the search path changes which files exist: never shared


class _SharedFilesLoader(ConfigLoaderImpl):
    """Hydra's loader, reading each config file once for all its compositions (Hydra reads them once per
    composition). Files are not expected to change while one process sweeps."""

    def __init__(self, loader: ConfigLoaderImpl) -> None:
        super().__init__(config_search_path=loader.get_search_path())
        self._files: CachingConfigRepository | None = None

    def _parse_overrides_and_create_caching_repo(self, config_name, overrides):
        parsed = OverridesParser.create().parse_overrides(overrides=overrides)
        if any(o.get_key_element() == SEARCHPATH for o in parsed):
            return super()._parse_overrides_and_create_caching_repo(config_name, overrides)
        if self._files is None:
            self._files = CachingConfigRepository(self.repository)
            self._process_config_searchpath(config_name, parsed, self._files)
        return parsed, self._files


class Composer:
    """Composes configs as ``loader`` (Hydra's) does, each distinct structure once (see the module)."""

    # this process's composers by search path (:meth:`of`); a class attribute, so that a launcher that pickles
    # the class by value (cloudpickle, when the class is not the module's) still finds it in its workers
    _of: ClassVar[dict[str, Composer]] = {}

    def __init__(self, loader: ConfigLoaderImpl) -> None:
        self.loader = loader
        self._shared: _SharedFilesLoader | None = None  # made at the first composition (not in a worker)
        self._parser = OverridesParser.create()
        self._groups: dict[str, bool] = {}
        self._bases: dict[tuple[Any, ...], bytes | DictConfig] = {}  # pickled: unpickling copies 4x faster

    @classmethod
    def current(cls) -> Composer:
        """The composer of the Hydra context initialised in this process (``initialize_config_module``)."""
        return cls.of(GlobalHydra.instance().config_loader())

    @classmethod
    def of(cls, loader: ConfigLoaderImpl) -> Composer:
        """This process's composer for ``loader``'s search path, kept across Hydra contexts and jobs, so that a
        process composing run after run (a pool worker, a joblib worker) reuses its work."""
        key = str(loader.get_search_path())
        if key not in cls._of:
            cls._of[key] = cls(loader)
        return cls._of[key]

    def __getattr__(self, name: str) -> Any:
        """Everything else a launcher may ask of Hydra's config loader (its search path, its sources)."""
        if name.startswith("_") or "loader" not in vars(self):
            raise AttributeError(name)
        return getattr(self.loader, name)

    def __reduce__(self) -> tuple[Any, ...]:
        """A launcher that ships the loader to its workers (joblib composes each job in its worker) ships
        Hydra's: each worker then composes through its own process's composer, whose cache outlives the job."""
        return (Composer.of, (self.loader,))

    def load_sweep_config(self, master_config: DictConfig, sweep_overrides: list[str]) -> DictConfig:
        """One job's config, as ``ConfigLoaderImpl.load_sweep_config`` makes it (what launchers call)."""
        parsed = self._parser.parse_overrides(sweep_overrides)
        if not self._splittable(parsed):
            return self.loader.load_sweep_config(master_config, sweep_overrides)
        structure = [o.input_line for o in parsed if not self._is_value(o)]
        key = ("sweep", master_config.hydra.job.config_name, *master_config.hydra.overrides.hydra, tuple(structure))
        if key not in self._bases:
            self._bases[key] = _stored(self._files().load_sweep_config(master_config, structure))
        cfg = self._finish(self._bases[key], parsed)
        OmegaConf.copy_cache(from_config=master_config, to_config=cfg)
        return cfg

    def compose(self, overrides: list[str], config_name: str = CONFIG_NAME) -> DictConfig:
        """The app's config (no ``hydra`` node), as ``hydra.compose(config_name, overrides)`` makes it."""
        parsed = self._parser.parse_overrides(overrides)
        if not self._splittable(parsed):
            return _without_hydra(self.loader.load_configuration(config_name, overrides, RunMode.RUN, from_shell=False))
        structure = [o.input_line for o in parsed if not self._is_value(o)]
        key = ("compose", config_name, tuple(structure))
        if key not in self._bases:
            composed = self._files().load_configuration(config_name, structure, RunMode.RUN, from_shell=False)
            self._bases[key] = _stored(_without_hydra(composed))
        return self._finish(self._bases[key], parsed)

    def _files(self) -> _SharedFilesLoader:
        if self._shared is None:
            self._shared = _SharedFilesLoader(self.loader)
        return self._shared

    def _finish(self, base: bytes | DictConfig, parsed: list[Override]) -> DictConfig:
        cfg = pickle.loads(base) if isinstance(base, bytes) else copy.deepcopy(base)
        ConfigLoaderImpl._apply_overrides_to_config([o for o in parsed if self._is_value(o)], cfg)
        if "hydra" in cfg:
            task = [o for o in parsed if not o.is_hydra_override()]
            cfg.hydra.overrides.task = [o.input_line for o in task]
            dirname = cfg.hydra.job.config.override_dirname
            cfg.hydra.job.override_dirname = get_overrides_dirname(
                overrides=task, kv_sep=dirname.kv_sep, item_sep=dirname.item_sep, exclude_keys=dirname.exclude_keys
            )
        return cfg

    def _splittable(self, parsed: list[Override]) -> bool:
        return not any(o.is_sweep_override() or o.get_key_element() == SEARCHPATH for o in parsed)

    def _is_value(self, override: Override) -> bool:
        """Hydra's split (``defaults_list.Overrides``): a config override, not a choice of config group."""
        if override.is_hydra_override():
            return False
        group = override.key_or_group
        if group not in self._groups:
            self._groups[group] = self.loader.repository.group_exists(group)
        return isinstance(override.value(), dict) or not self._groups[group]


def _stored(cfg: DictConfig) -> bytes | DictConfig:
    """A composed config kept for copies: pickled, or as it is when a node's class does not pickle (a class
    Hydra's plugin scan imported again: the config holds the first import's, the module the second's)."""
    try:
        return pickle.dumps(cfg)
    except pickle.PicklingError:
        return cfg


def _without_hydra(cfg: DictConfig) -> DictConfig:
    """What ``hydra.compose`` returns by default: the config without its ``hydra`` node."""
    with open_dict(cfg):
        cfg.pop("hydra", None)
    return cfg
