"""OmegaConf's interpolations parsed once per process (:func:`parsed_once`), for the composition of configs
(:mod:`okl.compose`) and their resolution (:func:`okl.config.plan`), and a config resolved to plain data at a
fraction of OmegaConf's cost (:func:`resolved`)."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from typing import Any

import omegaconf
import omegaconf.base
from omegaconf import AnyNode, Container, DictConfig, Node, ValueNode

TOP_LEVEL = re.compile(r"\$\{([A-Za-z_]\w*)\}")  # ``${sigma}``: an interpolation of a top-level key
ENV = re.compile(r"\$\{oc\.env:([A-Za-z_]\w*)(?:,([A-Za-z_]\w*))?\}")  # ``${oc.env:OKL_RESULTS,results}``
NOT_WORDS = {"null", "true", "false", "inf", "nan"}  # what OmegaConf's grammar reads as None, a bool, a float
OC_ENV = omegaconf.OmegaConf._get_resolver("oc.env")  # OmegaConf's own (a user may register another)
PARSED_AT_MOST = 4096  # interpolation strings kept parsed (:func:`parsed_once`)
_parsed: dict[tuple[str, str, str], Any] = {}


@contextlib.contextmanager
def parsed_once() -> Iterator[None]:
    """Within this context OmegaConf parses each distinct interpolation string (``${sigma}``) once per process:
    resolving a config parses every interpolation it holds with OmegaConf's ANTLR grammar, half the time
    ``okl.config.plan`` spent on a run (planning ``pros_n_kons_table1``'s 220 runs: 0.33 → 0.19 s, measured). A
    parse tree is read only by OmegaConf's resolver, and its tokens keep their own input, so a tree serves
    every later resolution of the same string; what it resolves to is computed each time."""
    original = omegaconf.base.parse

    def parse(value: str, parser_rule: str = "configValue", lexer_mode: str = "DEFAULT_MODE") -> Any:
        key = (value, parser_rule, lexer_mode)
        tree = _parsed.get(key)
        if tree is None:
            tree = original(value, parser_rule, lexer_mode)
            if len(_parsed) >= PARSED_AT_MOST:
                _parsed.clear()
            _parsed[key] = tree
        return tree

    omegaconf.base.parse = parse
    try:
        yield
    finally:
        omegaconf.base.parse = original


def resolved(cfg: DictConfig) -> dict[str, Any]:
    """``OmegaConf.to_container(cfg, resolve=True)``, the same dict at a tenth of the cost (the 300 run configs of
    ``pros_n_kons_table1``: 0.24-0.35 → 0.02 s, measured). OmegaConf's walk validates each key it reads and
    dereferences each node; this one reads the nodes' content and has OmegaConf resolve only the interpolations, but
    for the most common, held by an :class:`~omegaconf.AnyNode` (whose result OmegaConf does not convert): ``${key}``
    of a top-level value node that is no interpolation and not missing, which OmegaConf resolves to that node, whose
    value ``to_container`` takes; and ``${oc.env:NAME,word}`` (:func:`_env`). Errors are OmegaConf's, not formatted
    as ``to_container`` formats them (a full key on later lines): a caller wanting those calls ``to_container`` on
    failure."""
    top = cfg._get_root().__dict__["_content"]
    with parsed_once():
        return _container(cfg, top if isinstance(top, dict) else {})


def _container(node: Container, top: dict[str, Node]) -> Any:
    content = node.__dict__["_content"]  # what OmegaConf's tests of a container read: None, "???", "${...}"
    if content is None or content == "???":
        return content
    if isinstance(content, str):
        node = node._dereference_node()
        content = node.__dict__["_content"]
    if isinstance(content, dict):
        return {key: _value(child, top) for key, child in content.items()}
    return [_value(child, top) for child in content]


def _value(node: Node, top: dict[str, Node]) -> Any:
    if "_content" in node.__dict__:  # a container
        return _container(node, top)
    value = node._value()
    if not (isinstance(value, str) and "${" in value and node._is_interpolation()):  # "${": OmegaConf's own test
        return value
    if type(node) is AnyNode:  # OmegaConf converts no result for it: what ``to_container`` takes is the result
        match = TOP_LEVEL.fullmatch(value)
        target = top.get(match.group(1)) if match else None
        if isinstance(target, ValueNode) and not target._is_interpolation() and not target._is_missing():
            return target._value()
        found = _env(value)
        if found is not None:
            return found
    node = node._dereference_node()
    return _container(node, top) if "_content" in node.__dict__ else node._value()


def _env(text: str) -> str | None:
    """What OmegaConf's own ``oc.env`` gives ``${oc.env:NAME}`` or ``${oc.env:NAME,word}`` (a plain word, which the
    grammar reads as a string): the variable, else the word; None for any other text or outcome."""
    env = ENV.fullmatch(text)
    if env is None or omegaconf.OmegaConf._get_resolver("oc.env") is not OC_ENV:
        return None
    name, default = env.groups()
    if name in os.environ:
        return os.environ[name]
    return default if default and default.lower() not in NOT_WORDS else None
