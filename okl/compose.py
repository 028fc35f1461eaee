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

Two more savings: configs composed by :meth:`Composer.compose` (the app's config, no ``hydra`` node), and a
preset's sweeper parameters (:meth:`Composer.sweeper_params`), are kept on disk for the next process, under a
fingerprint of every config source (:class:`_DiskBases`), and
the merge of a defaults list starts from the longest beginning already merged (Hydra's ``hydra/*``
configs and the schema come first in every list). BENCHMARKS.md gives the time a new process takes to expand
the largest preset, on a new machine and once its compositions are kept (``okl-bench``'s planning line).

The app's config of a plain structure, and a preset's sweeper parameters, are composed by okl itself
(:class:`okl.defaults_tree.OwnComposer`: Hydra's defaults tree without its ``hydra/*`` branch, the YAML merged as
plain data then once onto the schema: 4 ms per structure against 35 ms for Hydra's loader, measured), any other by
Hydra (so errors stay Hydra's). :meth:`Composer.compose_each` copies a structure's config once for the jobs that set
the same value nodes (a preset's seeds). Planning ``pros_n_kons_table1`` (then 260 runs, ``okl-bench``'s planning line,
medians of 3 runs interleaved with the code before these two changes, on a machine another process kept busy): on a
new machine 3.06 → 1.13 s, once its compositions are kept 0.82 → 0.58 s. With its 300 runs and 60 structures, on an
idle machine: 1.07-1.28 s and 0.47-0.70 s, then about a third in OmegaConf's resolution of each run's config and a
sixth in the first full garbage collection, which went through the ~200,000 objects of the imports. Since, a run's
config is resolved by :func:`okl.interpolation.resolved` (0.3 → 0.02 s for the 300) and planning freezes the objects
of the imports while it runs (:func:`okl.reproduce.sweep.expand`; collections 0.2 → 0.03 s): ``okl-bench``'s planning
line, medians of 7 runs interleaved with the code before (a09b7d6), wall (CPU) time, at a load of 3-5.6 on 2 cores: on
a new machine
2.19 (1.40) → 1.33 (0.91) s, once its compositions are kept 0.99 (0.66) → 0.48 (0.33) s. What a new machine spends
now is mostly composing the 60 structures (0.4 s of CPU: okl's defaults tree and merge, half of it OmegaConf's merge
onto the schema, a fifth reading the YAML), then planning each run (0.15-0.2 s: building its dataset and learner)
and, as when kept, reading the preset's sweeper parameters and entering Hydra's context twice (0.1 s).

And the defaults tree's map of known choices, which resolves interpolations in defaults lists, is built only for
the lists that hold one (:func:`_lazy_interpolation_map`; planning ``pros_n_kons_table1``'s 220 runs: compositions
1.28 → 0.92 s, measured).

The result is the config Hydra composes, node for node (``tests/test_compose.py`` compares every node of both,
class, flags, types and value, ``hydra`` node included, over group, value, add, delete and error overrides, and
defaults lists with interpolations). It relies on three internals of hydra-core 1.3
(``ConfigLoaderImpl._apply_overrides_to_config``, the file cache of one composition and
``defaults_list._create_interpolation_map``), which that comparison pins.

Users: the ``okl`` sweeper (``hydra_plugins.okl_sweeper``, the default of ``okl-run -m``, so every
launcher gets its jobs' configs from here), ``okl-reproduce``'s expansion of a preset, and ``okl-run``'s own
compositions (:func:`main_reads_files_once`).

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

import contextlib
import copy
import hashlib
import importlib.resources
import os
import pickle
import shutil
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import hydra
import omegaconf
from hydra._internal import defaults_list
from hydra._internal import hydra as hydra_main
from hydra._internal.config_loader_impl import ConfigLoaderImpl, get_overrides_dirname
from hydra._internal.config_repository import CachingConfigRepository, IConfigRepository
from hydra.core.config_search_path import ConfigSearchPath
from hydra.core.config_store import ConfigStore
from hydra.core.default_element import ResultDefault
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override, OverrideType
from hydra.errors import ConfigCompositionException
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf, ValueNode, flag_override, open_dict
from omegaconf.errors import OmegaConfBaseException

from okl.defaults_tree import OwnComposer, strip_defaults
from okl.interpolation import parsed_once

CONFIG_NAME = "config"
SEARCHPATH = "hydra.searchpath"  # an override of the search path changes which files exist: never shared
UNREADABLE = (pickle.UnpicklingError, EOFError, AttributeError, ImportError)  # a kept file that does not unpickle


class _SharedFilesLoader(ConfigLoaderImpl):
    """Hydra's loader, reading each config file once for all its compositions (Hydra reads them once per
    composition), and merging each shared beginning of their defaults lists once. Files are not expected to
    change while one process sweeps."""

    def __init__(self, config_search_path: ConfigSearchPath) -> None:
        super().__init__(config_search_path=config_search_path)
        self._files: CachingConfigRepository | None = None
        self._merged: dict[tuple[Any, ...], bytes] = {}  # a defaults list's beginning -> its merge, pickled

    def __getstate__(self) -> dict[str, Any]:
        """A launcher that ships it to its workers (okl-run -m's loader) ships it without this process's files."""
        return {**vars(self), "_files": None, "_merged": {}}

    def _load_configuration_impl(self, *args: Any, **kwargs: Any) -> DictConfig:
        with _lazy_interpolation_map(), parsed_once():
            return super()._load_configuration_impl(*args, **kwargs)

    def _parse_overrides_and_create_caching_repo(self, config_name, overrides):
        parsed = OverridesParser.create().parse_overrides(overrides=overrides)
        if any(o.get_key_element() == SEARCHPATH for o in parsed):
            return super()._parse_overrides_and_create_caching_repo(config_name, overrides)
        return parsed, self.shared_repo(config_name)

    def shared_repo(self, config_name: str) -> CachingConfigRepository:
        """The file cache of every composition (made at the first, with the primary config's search path)."""
        if self._files is None:  # kept once the search path is read (a composition that fails there fails again)
            files = CachingConfigRepository(self.repository)
            self._process_config_searchpath(config_name, [], files)
            self._files = files
        return self._files

    def _compose_config_from_defaults_list(self, defaults: list[ResultDefault], repo: IConfigRepository) -> DictConfig:
        """Hydra's merge of the defaults list, one config after the other, started from the merge of the longest
        beginning of the list already merged. Hydra's own lists begin with its ``hydra/*`` configs and the
        schema, then the groups a sweep varies: the merge is kept before each config outside ``hydra/``."""
        keys = [(d.config_path, d.package, d.primary, d.is_self) for d in defaults]
        start = next((i for i in range(len(keys), 0, -1) if tuple(keys[:i]) in self._merged), 0)
        cfg = pickle.loads(self._merged[tuple(keys[:start])]) if start else OmegaConf.create()
        for i in range(start, len(defaults)):
            if i and not str(defaults[i].config_path).startswith("hydra/"):
                self._merged[tuple(keys[:i])] = pickle.dumps(cfg)
            loaded = self._load_single_config(default=defaults[i], repo=repo)
            try:
                with flag_override(cfg, "no_deepcopy_set_nodes", True):
                    cfg.merge_with(loaded.config)
            except OmegaConfBaseException as e:
                raise ConfigCompositionException(
                    f"In '{defaults[i].config_path}': {type(e).__name__} raised while composing config:\n{e}"
                ).with_traceback(sys.exc_info()[2]) from e
        strip_defaults(cfg)
        return cfg


@contextlib.contextmanager
def _lazy_interpolation_map() -> Iterator[None]:
    """Hydra's defaults tree builds, for every config it expands, the map that resolves interpolations in a defaults
    list (``${group}`` choices): an OmegaConf config of every known choice, a third of a composition's time, used
    only when that list holds an interpolation. Within this context it is built only then (the same value
    wherever it is used)."""
    original = defaults_list._create_interpolation_map

    def built_when_used(overrides: Any, defaults: list[Any], self_added: bool) -> DictConfig | None:
        if any(d.is_interpolation() for d in defaults if not d.is_self()):
            return original(overrides, defaults, self_added)
        return None  # read only for the list's interpolations: there are none

    defaults_list._create_interpolation_map = built_when_used
    try:
        yield
    finally:
        defaults_list._create_interpolation_map = original


@contextlib.contextmanager
def main_reads_files_once() -> Iterator[None]:
    """Hydra's ``main`` composes a command's config twice, once to read ``hydra.mode`` and once to run (or sweep), each
    time reading and parsing every config file and merging its defaults list from the start. Within this context the
    loader it makes is a :class:`_SharedFilesLoader`, which does both once for the two (``okl-run`` of a short run:
    0.26-0.31 -> 0.11-0.13 s of CPU composing, measured)."""
    original = hydra_main.ConfigLoaderImpl
    hydra_main.ConfigLoaderImpl = _SharedFilesLoader
    try:
        yield
    finally:
        hydra_main.ConfigLoaderImpl = original


class Composer:
    """Composes configs as ``loader`` (Hydra's) does, each distinct structure once (see the module)."""

    # this process's composers by search path (:meth:`of`); a class attribute, so that a launcher that pickles
    # the class by value (cloudpickle, when the class is not the module's) still finds it in its workers
    _of: ClassVar[dict[str, Composer]] = {}

    def __init__(self, loader: ConfigLoaderImpl) -> None:
        self.loader = loader
        self._shared: _SharedFilesLoader | None = None  # made at the first composition (not in a worker)
        self._owned: OwnComposer | None = None
        self._parser = OverridesParser.create()
        self._parsed: dict[str, Override] = {}  # an override line -> Hydra's parse of it
        self._groups: dict[str, bool] = {}
        self._bases: dict[tuple[Any, ...], bytes | DictConfig] = {}  # pickled: unpickling copies 4x faster
        self._disk = _DiskBases(loader)

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
        parsed = self._parse(sweep_overrides)
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
        parsed = self._parse(overrides)
        if not self._splittable(parsed):
            return _without_hydra(self.loader.load_configuration(config_name, overrides, RunMode.RUN, from_shell=False))
        structure = [o.input_line for o in parsed if not self._is_value(o)]
        key = ("compose", config_name, tuple(structure))
        if key not in self._bases:
            kept = self._disk.get(key)
            if kept is not None:
                try:  # its first copy is the check that the kept file is whole
                    cfg = self._finish(kept, parsed)
                except UNREADABLE:
                    pass  # damaged, or an older okl's classes: composed again below
                else:
                    self._bases[key] = kept
                    return cfg
            composed = self._own(config_name).compose(config_name, [o for o in parsed if not self._is_value(o)])
            if composed is None:  # not a plain structure: Hydra's (and its errors)
                hydras = self._files().load_configuration(config_name, structure, RunMode.RUN, from_shell=False)
                composed = _stored(_without_hydra(hydras))
            self._bases[key] = self._disk.put(key, composed)
        return self._finish(self._bases[key], parsed)

    def compose_each(self, jobs: Iterable[list[str]], config_name: str = CONFIG_NAME) -> Iterator[DictConfig]:
        """The configs of ``jobs`` in turn, each as :meth:`compose` makes it, and each valid until the next is
        drawn: a job whose value overrides change the same keys as an earlier job of its structure, each a value
        node of that structure's config changed to a scalar (``seed=0``, then ``seed=1``), gets the earlier
        job's config with the values set again by Hydra's function, which then sets each node's value and
        nothing else. The copy of a config (0.8 ms, as long as resolving it for a plan) is made once per
        structure and keys (planning ``pros_n_kons_table1``: 260 copies -> 52, 0.2 s less, measured)."""
        live: dict[tuple[Any, ...], DictConfig] = {}
        for overrides in jobs:
            parsed = self._parse(overrides)
            if not self._splittable(parsed):
                yield self.compose(overrides, config_name)
                continue
            values = [o for o in parsed if self._is_value(o)]
            structure = [o.input_line for o in parsed if not self._is_value(o)]
            key = (config_name, *structure, None, *(o.get_key_element() for o in values))
            cfg = live.get(key)
            if cfg is None:
                cfg = self.compose(structure, config_name)  # a copy of the structure's config, no value set
                if all(_value_node(cfg, o) for o in values):
                    live[key] = cfg
            ConfigLoaderImpl._apply_overrides_to_config(values, cfg)
            yield cfg

    def sweeper_params(self, overrides: list[str], config_name: str = CONFIG_NAME) -> tuple[tuple[str, str], ...]:
        """The ``hydra.sweeper.params`` of the config ``overrides`` select (what ``okl-run -m`` sweeps over), as
        (key, value) strings: okl's own reading of the plain merge where it applies
        (:meth:`okl.defaults_tree.OwnComposer.sweeper_params`), else Hydra's composition with the ``hydra`` node
        (0.2 s). They hold no path or environment, so they are kept on disk like the app's configs."""
        key = ("sweeper", config_name, tuple(overrides))
        kept = self._disk.get(key)
        if kept is not None:
            with contextlib.suppress(*UNREADABLE):
                return pickle.loads(kept)
        parsed = self._parse(overrides)
        params = None
        if self._splittable(parsed) and not any(self._is_value(o) for o in parsed):
            params = self._own(config_name).sweeper_params(config_name, parsed)
        if params is None:  # Hydra's (and its errors)
            cfg = self._files().load_configuration(config_name, overrides, RunMode.RUN, from_shell=False)
            params = tuple((str(k), str(v)) for k, v in (cfg.hydra.sweeper.params or {}).items())
        self._disk.put(key, pickle.dumps(params))
        return params

    def _parse(self, overrides: list[str]) -> list[Override]:
        """Hydra's parse of ``overrides``, each distinct line parsed once (the parser's errors are Hydra's)."""
        new = [o for o in dict.fromkeys(overrides) if o not in self._parsed]
        self._parsed.update(zip(new, self._parser.parse_overrides(new), strict=True))
        return [self._parsed[o] for o in overrides]

    def _files(self) -> _SharedFilesLoader:
        if self._shared is None:
            self._shared = _SharedFilesLoader(self.loader.get_search_path())
        return self._shared

    def _own(self, config_name: str) -> OwnComposer:
        if self._owned is None:
            self._owned = OwnComposer(self._files().shared_repo(config_name))
        return self._owned

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


class _DiskBases:
    """The app configs :meth:`Composer.compose` composed, kept across processes in
    ``<user cache>/okl-compose/<sources' fingerprint>/<structure>.pkl`` (:func:`kept_folder`). The
    fingerprint hashes Hydra's and OmegaConf's versions and every source of the search path: each file of a
    ``pkg://`` or ``file://`` source, byte for byte, and each node of Hydra's ConfigStore pickled (its
    values, node types and classes), so that a changed file, schema or version selects another folder (the
    three newest are kept). A search path with another kind of source is not kept on disk. Only the app's
    config and the sweeper's parameters are kept: the rest of the ``hydra`` node of a sweep's job holds the
    process's working directory and environment."""

    KEPT = 3

    def __init__(self, loader: ConfigLoaderImpl) -> None:
        self.loader = loader
        self._fingerprint: str | None = None

    def get(self, key: tuple[Any, ...]) -> bytes | None:
        """The kept composition (pickled, unchecked: :meth:`Composer.compose` unpickles it), or None."""
        path = self._path(key)
        try:
            return path.read_bytes() if path is not None else None
        except OSError:
            return None  # absent: composed again

    def put(self, key: tuple[Any, ...], stored: bytes | DictConfig) -> bytes | DictConfig:
        path = self._path(key)
        if path is not None and isinstance(stored, bytes):
            with contextlib.suppress(OSError):  # a read-only or full disk: the next process composes again
                path.parent.mkdir(parents=True, exist_ok=True)
                part = path.with_suffix(f".{os.getpid()}.part")
                part.write_bytes(stored)
                os.replace(part, path)
                self._prune(kept_folder())
        return stored

    def _path(self, key: tuple[Any, ...]) -> Path | None:
        if self._fingerprint is None:
            self._fingerprint = _fingerprint(self.loader) or ""
        if not self._fingerprint:
            return None
        name = hashlib.sha256(repr(key).encode()).hexdigest()[:24]
        try:
            return kept_folder() / self._fingerprint / f"{name}.pkl"
        except RuntimeError:  # no home directory to keep them in: compositions are not kept
            return None

    def _prune(self, root: Path) -> None:
        folders = sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in folders[self.KEPT :]:
            shutil.rmtree(old, ignore_errors=True)


def kept_folder() -> Path:
    """Where compositions are kept: ``$XDG_CACHE_HOME/okl-compose``, else ``~/.cache/okl-compose`` (not the data
    directory: planning writes no data)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "okl-compose"


def _fingerprint(loader: ConfigLoaderImpl) -> str | None:
    """The hash of everything a composition reads (see :class:`_DiskBases`), None when a source cannot be read."""
    digest = hashlib.sha256(f"hydra {hydra.__version__} omegaconf {omegaconf.__version__}".encode())
    for source in loader.get_sources():
        digest.update(f"{source.scheme()}://{source.path}\n".encode())
        if source.scheme() == "structured":
            entries = _store_entries(ConfigStore.instance().repo, "")
        elif source.scheme() == "file":
            entries = _files(Path(source.path), "")
        elif source.scheme() == "pkg":
            module, _, folder = source.path.partition("/")
            try:
                entries = _files(importlib.resources.files(module).joinpath(folder), "")
            except (ModuleNotFoundError, OSError):
                return None
        else:
            return None
        try:
            for name, content in entries:
                digest.update(f"{name}\n{len(content)}\n".encode())
                digest.update(content)
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            return None
    return digest.hexdigest()[:24]


def _files(folder: Any, prefix: str) -> Iterator[tuple[str, bytes]]:
    """The files under ``folder`` (a path or an importlib Traversable), with their contents, in name order."""
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.is_dir():
            if entry.name != "__pycache__":
                yield from _files(entry, f"{prefix}{entry.name}/")
        else:
            yield f"{prefix}{entry.name}", entry.read_bytes()


def _store_entries(repo: dict[str, Any], prefix: str) -> Iterator[tuple[str, bytes]]:
    """ConfigStore's nodes, each pickled with its package and provider, in name order."""
    for name in sorted(repo):
        entry = repo[name]
        if isinstance(entry, dict):
            yield from _store_entries(entry, f"{prefix}{name}/")
        else:
            yield f"{prefix}{name} {entry.package} {entry.provider}", pickle.dumps(entry.node)


def _stored(cfg: DictConfig) -> bytes | DictConfig:
    """A composed config kept for copies: pickled, or as it is when a node's class does not pickle (a class
    Hydra's plugin scan imported again: the config holds the first import's, the module the second's)."""
    try:
        return pickle.dumps(cfg)
    except pickle.PicklingError:
        return cfg


def _value_node(cfg: DictConfig, override: Override) -> bool:
    """Whether ``override`` changes a value node of ``cfg`` to a scalar (which changes the node's value only)."""
    if override.type != OverrideType.CHANGE or isinstance(override.value(), dict | list):
        return False
    node: Any = cfg
    for part in override.get_key_element().split("."):
        node = node._get_node(part, validate_access=False) if isinstance(node, DictConfig) else None
    return isinstance(node, ValueNode)


def _without_hydra(cfg: DictConfig) -> DictConfig:
    """What ``hydra.compose`` returns by default: the config without its ``hydra`` node."""
    with open_dict(cfg):
        cfg.pop("hydra", None)
    return cfg
