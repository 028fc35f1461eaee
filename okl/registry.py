"""Plugin registries: a learner or dataset joins with one decorator and one YAML file.

A registered class carries a ``Params`` dataclass (its typed schema, with range checks in
``__post_init__``); the YAML file ``conf/<group>/<key>.yaml`` holds ``name: <key>`` and the
defaults, usually interpolating the run's top-level keys (``sigma: ${sigma}``).
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from okl.errors import ConfigError


class Registry:
    """Maps registry keys to classes of one kind (``learner``, ``dataset``)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._classes: dict[str, type] = {}

    def register(self, key: str) -> Callable[[type], type]:
        """Class decorator: ``@LEARNERS.register("pkawv_taylor")``."""

        def add(cls: type) -> type:
            if key in self._classes:
                raise RuntimeError(f"{self.kind} {key!r} is registered twice")
            if not dataclasses.is_dataclass(getattr(cls, "Params", None)):
                raise TypeError(f"{cls.__name__} needs a dataclass attribute 'Params'")
            cls.name = key
            self._classes[key] = cls
            return cls

        return add

    def params(self, key: str, values: dict[str, Any]) -> Any:
        """Validated ``Params`` of ``key`` built from plain values."""
        return build_params(self.kind, key, self.get(key).Params, values)

    def names(self) -> list[str]:
        return sorted(self._classes)

    def get(self, key: str) -> type:
        try:
            return self._classes[key]
        except KeyError:
            raise ConfigError(f"unknown {self.kind} {key!r}; choose one of: {', '.join(self.names())}") from None


LOCAL = {"identity": False}  # metadata of a Params field that does not change the rounds (paths, caches)


def identity(params: Any) -> dict[str, Any]:
    """The fields of a ``Params`` instance that determine a run's rounds (all but the ``LOCAL`` ones; an
    ``ADDED`` field only when it is not at its default, so that adding a key keeps every earlier run's id)."""
    return {
        f.name: getattr(params, f.name)
        for f in dataclasses.fields(params)
        if f.metadata.get("identity", True) and not (f.metadata.get("added") and getattr(params, f.name) == f.default)
    }


def build_params(kind: str, key: str, schema: type, values: dict[str, Any]) -> Any:
    """Instantiate the ``Params`` dataclass ``schema`` of ``kind`` ``key`` with one-line errors."""
    fields = [f.name for f in dataclasses.fields(schema)]
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise ConfigError(
            f"unknown key {kind}.{unknown[0]} for {kind} {key!r}; its keys are: {', '.join(sorted(fields)) or '(none)'}"
        )
    values = coerced(kind, key, schema, values)
    try:
        return schema(**values)
    except ConfigError as exc:
        raise ConfigError(f"{kind} {key!r}: {exc}") from None


def coerced(kind: str, key: str, schema: type, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` in the types of the fields of ``schema`` they name, so that one setting has one run id: an int as a
    float where the field is one (sigma=1 and sigma=1.0), a list of numbers as a tuple of floats, numpy's booleans
    as Python's; a yes/no key must hold a boolean (a one-line error, never a string that reads as true). Keys the
    schema lacks are left as they are (:func:`build_params` refuses them)."""
    for f in dataclasses.fields(schema):
        value = values.get(f.name)
        if f.type in ("bool", "bool | None") and f.name in values and not _boolean(value, f.type != "bool"):
            raise ConfigError(f"{kind} {key!r}: {f.name} takes true or false (got {value!r})")
        if isinstance(value, np.bool_):  # from Python: a run's identity is JSON
            values = {**values, f.name: bool(value)}
        elif f.type in ("float", "float | None") and type(value) is int:
            values = {**values, f.name: float(value)}
        elif f.type == "tuple[float, ...]" and f.name in values:
            if not isinstance(value, Sequence) or isinstance(value, str):
                raise ConfigError(f"{kind} {key!r}: {f.name} takes a list of numbers, e.g. [{value}] (got {value!r})")
            values = {**values, f.name: tuple(float(v) if type(v) is int else v for v in value)}  # [1, 10]: [1.0, 10.0]
    return values


def _boolean(value: Any, none: bool) -> bool:
    return isinstance(value, bool | np.bool_) or (none and value is None)


def import_all(package: str, path: Iterable[str]) -> None:
    """Import every module of a package and of its subpackages, so that their ``@register`` decorators run."""
    for module in pkgutil.walk_packages(path, prefix=f"{package}."):
        importlib.import_module(module.name)
