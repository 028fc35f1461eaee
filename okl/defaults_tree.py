"""okl's own composition of an app config (no ``hydra`` node), for the plain structures a sweep composes.

Hydra composes a structure (``experiment=pros_n_kons_table1 dataset=cadata arm/pros_n_kons=fogd``) by
building its defaults tree from deep copies, Hydra's own ``hydra/*`` configs included, then merging its
configs one after the other with OmegaConf (2-3 ms per merge): about 35 ms per structure, 1.8 s of the 2.9 s
a new machine took to plan ``pros_n_kons_table1`` (52 structures), measured. :class:`OwnComposer` walks the
same tree with Hydra's own pieces (its parse of each defaults list, its ``Overrides``, its package rules),
without the ``hydra/*`` branch; it merges the configs' YAML as plain data, by OmegaConf's rules, then merges
that once onto the structured schema they start from: 4 ms per structure, measured.

It leaves to Hydra (returns None; the caller composes with Hydra, so errors and warnings stay Hydra's) anything
outside the plain case: ``hydra.*`` overrides, deletions, option lists and interpolations in a defaults list,
``???`` choices and values, optional or absent configs, a config its schema validates by name, a structured config
after a YAML one, a list merged with a mapping, a mapping merged onto an interpolation that may point at a node, a
``hydra`` node outside the primary config other than a preset's sweeper parameters, and any error. It also reads a
preset's sweeper parameters from the same merge, for Hydra's ``basic`` sweeper. What it returns is Hydra's config
node for node (``tests/test_compose.py`` compares node classes, types, flags and values for every structure of every
preset); the one difference is that a value a later config replaces is not validated against the schema (``M: abc``
then ``M: 3`` composes here, fails in Hydra). It relies on internals of hydra-core 1.3 (``defaults_list.Overrides``,
``_validate_self``, ``_update_overrides``, ``_has_config_content``), which that comparison pins.
"""

from __future__ import annotations

import copy
import pickle
import re
from typing import Any

from hydra._internal.config_repository import IConfigRepository
from hydra._internal.defaults_list import Overrides, _has_config_content, _update_overrides, _validate_self
from hydra.core.default_element import ConfigDefault, GroupDefault, InputDefault
from hydra.core.override_parser.types import Override
from omegaconf import AnyNode, DictConfig, Node, OmegaConf, flag_override

MISSING = "???"
NODE = re.compile(r"\$\{oc\.env:[^${}]*\}|\$\{[A-Za-z_][\w.]*\}")  # interpolations that never resolve to a node


class Unhandled(Exception):
    """A structure this module leaves to Hydra."""


class OwnComposer:
    """Composes app configs from ``repo`` (a caching repository shared by the compositions, see the module)."""

    def __init__(self, repo: IConfigRepository) -> None:
        self.repo = repo
        self._plain: dict[str, Any] = {}  # config path -> its content as plain data
        self._typed: dict[tuple[tuple[str, str], ...], tuple[bytes, Any]] = {}  # structured configs -> their merge
        self._nodes: dict[str, Node] = {}  # a top-level value's repr -> its node (:meth:`_node`)

    def compose(self, config_name: str, structure: list[Override]) -> bytes | None:
        """Hydra's app config for the config-group overrides ``structure`` (no value overrides), pickled, or
        None."""
        try:
            return self._merge(self._defaults(config_name, structure)[0])
        except Exception:  # noqa: BLE001  (whatever it is, Hydra composes it and raises its own error)
            return None

    def sweeper_params(self, config_name: str, structure: list[Override]) -> tuple[tuple[str, str], ...] | None:
        """The ``hydra.sweeper.params`` Hydra composes for ``structure`` as (key, value) strings, or None: read
        from the plain merge when the sweeper is Hydra's default, ``basic``, which sets none itself, and each
        parameter a scalar (which Hydra's basic sweeper turns into a string, as ``str`` does)."""
        try:
            defaults, overrides = self._defaults(config_name, structure)
            if "hydra/sweeper" in overrides.override_metadata or not self._basic_sweeper():
                raise Unhandled
            node: Any = self._plain_merge(defaults[len(self._typed_prefix(defaults)) :], {})
            for key in ("hydra", "sweeper", "params"):
                node = node.get(key) if isinstance(node, dict) else None
            params = node or {}
            if not isinstance(params, dict) or not all(_scalar(k) and _scalar(v) for k, v in params.items()):
                raise Unhandled
            return tuple((str(k), str(v)) for k, v in params.items())
        except Exception:  # noqa: BLE001  (as in compose)
            return None

    def _basic_sweeper(self) -> bool:
        """Whether Hydra's config picks the ``basic`` sweeper, and that sweeper's config holds no parameters."""
        choices = [d.value for d in self.repo.load_config("hydra/config").defaults_list if d.group == "sweeper"]
        sweeper = self.repo.load_config("hydra/sweeper/basic")
        return choices == ["basic"] and sweeper is not None and sweeper.config.get("params") is None

    def _defaults(self, config_name: str, structure: list[Override]) -> tuple[list[tuple[str, str, bool]], Overrides]:
        """The app part of Hydra's defaults list: (config path, package, primary) in merge order, and the
        overrides met on the way."""
        if any(o.is_hydra_override() for o in structure):
            raise Unhandled
        overrides = Overrides(repo=self.repo, overrides_list=structure)
        if overrides.deletions or overrides.config_overrides:
            raise Unhandled
        root = ConfigDefault(path=config_name, primary=True)
        root.update_parent("", "")
        found = self._expand(root, overrides, is_root=True)
        if any(not m.used and not k.startswith("hydra/") for k, m in overrides.override_metadata.items()):
            raise Unhandled  # Hydra's "Could not override"
        keys = [key for *_, key in found if key is not None]
        if len(keys) != len(set(keys)):
            raise Unhandled  # Hydra's "appears more than once"
        return [entry for *entry, _ in found], overrides

    def _expand(self, node: InputDefault, overrides: Overrides, is_root: bool = False) -> list[tuple]:
        """``_create_defaults_tree_impl`` and ``_tree_to_list`` of Hydra's defaults_list for one node, in the
        plain case: the node's defaults in reverse order (so that a later config's ``override`` reaches an
        earlier group), each expanded, then the list in order."""
        loaded = self.repo.load_config(config_path=node.get_config_path()) if not node.is_missing() else None
        if loaded is not None:
            node.set_package_header(loaded.header["package"])
        overrides.set_known_choice(node)
        if node.get_name() is None:
            return []
        if loaded is None or node.is_missing():
            raise Unhandled
        defaults = [copy.copy(d) for d in loaded.defaults_list or []]
        if defaults or is_root and overrides.append_group_defaults:
            content = isinstance(loaded.config, DictConfig) and _has_config_content(loaded.config)
            _validate_self(containing_node=node, defaults=defaults, has_config_content=content)
        if is_root:
            defaults.extend(overrides.append_group_defaults)
        _update_overrides(defaults, overrides, node, interpolated_subtree=False)
        this = (node.get_config_path(), node.get_final_package(), node.primary)
        found: list[tuple] = []
        children = 0  # Hydra's tree nodes under this one (a child with no config is one)
        for d in reversed(defaults):
            if d.is_self():
                found[:0] = [(*this, None)]
            elif d.is_override():
                continue
            else:
                d.update_parent(node.get_group_path(), node.get_final_package())
                if overrides.is_overridden(d):
                    overrides.override_default_option(d)
                if d.is_interpolation() or isinstance(d, GroupDefault) and d.is_options():
                    raise Unhandled
                found[:0] = self._expand(d, overrides)
            children += 1
        if children:
            return found
        return [(*this, node.get_override_key() if isinstance(node, GroupDefault) else None)]  # a leaf

    def _merge(self, defaults: list[tuple[str, str, bool]]) -> bytes:
        """Hydra's merge of the configs (``_compose_config_from_defaults_list``), pickled: the structured ones,
        which come first, with OmegaConf; the YAML ones as plain data, then onto them in one merge."""
        typed = self._typed_prefix(defaults)
        cfg, lookup = self._typed_merge(typed)
        plain = self._plain_merge(defaults[len(typed) :], lookup)
        plain.pop("hydra", None)  # the hydra node, which the app config leaves out
        merged = OmegaConf.create()
        with flag_override(merged, "no_deepcopy_set_nodes", True), flag_override(cfg, "no_deepcopy_set_nodes", True):
            for key, value in plain.items():
                merged[key] = value if isinstance(lookup.get(key), dict) else self._node(value)
            cfg.merge_with(merged)
        OmegaConf.set_struct(cfg, True)
        return pickle.dumps(cfg)

    def _typed_prefix(self, defaults: list[tuple[str, str, bool]]) -> tuple[tuple[str, str], ...]:
        typed = []
        while len(typed) < len(defaults) and self._is_typed(*defaults[len(typed)][:2]):
            typed.append(tuple(defaults[len(typed)][:2]))
        return tuple(typed)

    def _plain_merge(self, defaults: list[tuple[str, str, bool]], lookup: dict[str, Any]) -> dict[str, Any]:
        """The YAML configs merged as plain data, each under its package (``lookup``: the structured configs'
        content, where an interpolation may point)."""
        plain: dict[str, Any] = {}
        for path, package, primary in defaults:
            content = self._content(path, package, primary)
            for key in reversed(package.split(".") if package else []):
                content = {key: content}
            _merge_plain(plain, content, plain, lookup)
        return plain

    def _node(self, value: Any) -> Node:
        """The node of a top-level value (a dataset's mapping, a learner's, a scalar), made once for all the
        compositions that hold it: merged without a copy where the structured configs hold no mapping (so that
        OmegaConf takes the node rather than merging into one), it becomes the node of each composition in turn,
        which is pickled before the next takes it, and nothing writes into it (planning ``pros_n_kons_table1``:
        7 → 4 ms per structure, measured)."""
        key = repr(value)
        if key not in self._nodes:
            self._nodes[key] = OmegaConf.create(value) if isinstance(value, dict | list) else AnyNode(value)
        return self._nodes[key]

    def _is_typed(self, path: str, package: str) -> bool:
        loaded = self.repo.load_config(config_path=path)
        if not isinstance(loaded.config, DictConfig) or loaded.config._is_typed() and package != "":
            raise Unhandled
        if loaded.config._is_typed() and not loaded.is_schema_source:
            raise Unhandled  # Hydra would look for its schema
        return loaded.config._is_typed()

    def _typed_merge(self, typed: tuple[tuple[str, str], ...]) -> tuple[DictConfig, dict[str, Any]]:
        """The merge of the structured configs (a copy), and its content as plain data. Their ``defaults`` leave
        it here rather than after the YAML configs: those keep none (Hydra takes it out as it reads them)."""
        if typed not in self._typed:
            cfg = OmegaConf.create()
            for path, _ in typed:
                cfg.merge_with(self.repo.load_config(config_path=path).config)
            strip_defaults(cfg)
            self._typed[typed] = pickle.dumps(cfg), OmegaConf.to_container(cfg, resolve=False)
        kept, plain = self._typed[typed]
        return pickle.loads(kept), plain

    def _content(self, path: str, package: str, primary: bool) -> Any:
        """A YAML config's content as plain data (a copy), checked as Hydra's ``_load_single_config`` checks it."""
        if path not in self._plain:
            loaded = self.repo.load_config(config_path=path)
            if loaded.config._is_typed() or self.repo.get_schema_source().is_config(path):
                raise Unhandled  # a structured config after a YAML one, or one a schema of its name validates
            self._plain[path] = OmegaConf.to_container(loaded.config, resolve=False)
        content = self._plain[path]
        if package.split(".")[0] == "hydra" or not primary and package == "" and not _sweeper_params_only(content):
            raise Unhandled  # Hydra's node, which Hydra checks against its schema (and its search path)
        return copy.deepcopy(content)


def _sweeper_params_only(content: dict[str, Any]) -> bool:
    """Whether a config's ``hydra`` node, if any, holds the sweeper's parameters only (as a preset's does): read
    here only when each is a scalar (:meth:`OwnComposer.sweeper_params`), by Hydra otherwise, which checks them;
    any other key would go unchecked here."""
    node = content.get("hydra", {})
    return (
        node == {}
        or node.keys() == {"sweeper"}
        and isinstance(node["sweeper"], dict)
        and node["sweeper"].keys() == {"params"}
    )


def _merge_plain(dest: dict[str, Any], src: dict[str, Any], root: dict[str, Any], schema: Any) -> None:
    """OmegaConf's merge of ``src`` into ``dest`` (plain mappings), in the cases where it is a plain merge:
    mappings merge key by key, anything else replaces (a list too) and a new key comes last."""
    for key, value in src.items():
        old = dest.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            _merge_plain(old, value, root, schema)
            continue
        _check_missing(value)
        if isinstance(old, dict | list) and isinstance(value, dict | list) and type(old) is not type(value):
            raise Unhandled  # a list merged with a mapping: an OmegaConf error
        if isinstance(old, str) and _may_be_node(old, root, schema):
            raise Unhandled  # OmegaConf merges onto the node an interpolation points at
        dest[key] = value


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float) and "${" not in str(value)


def _check_missing(value: Any) -> None:
    if value == MISSING:
        raise Unhandled
    for item in value.values() if isinstance(value, dict) else value if isinstance(value, list) else ():
        _check_missing(item)


def _may_be_node(text: str, root: dict[str, Any], schema: Any) -> bool:
    """Whether ``text``, an interpolation, may resolve to a mapping or a list (OmegaConf then merges into it):
    a node's path that leads to one, or any interpolation but ``oc.env`` making the whole value."""
    if "${" not in text or not (text.startswith("${") and text.endswith("}")):
        return False  # a plain string, or one an interpolation makes part of
    if NODE.fullmatch(text) is None:
        return True
    if text.startswith("${oc.env:"):
        return False
    for where in (root, schema):
        node = where
        for part in text[2:-1].split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict | list):
            return True
    return False


def strip_defaults(cfg: Any) -> None:
    """Hydra's last step of a merge: the ``defaults`` lists it consumed leave the configs."""
    if isinstance(cfg, DictConfig):
        if cfg._is_missing() or cfg._is_none():
            return
        with flag_override(cfg, ["readonly", "struct"], False):
            if cfg._get_flag("HYDRA_REMOVE_TOP_LEVEL_DEFAULTS"):
                cfg._set_flag("HYDRA_REMOVE_TOP_LEVEL_DEFAULTS", None)
                cfg.pop("defaults", None)
        for _key, value in cfg.items_ex(resolve=False):
            strip_defaults(value)
