"""Errors a user can act on. The command line prints their message as one line, without traceback."""

import re


class OklError(Exception):
    """Base class: the message says what to change."""

    exit_code = 2


class ConfigError(OklError):
    """A configuration value, key or option is invalid."""


class DataError(OklError):
    """A dataset is unavailable or holds values the learners cannot use (NaN, inf)."""


class ResourceError(OklError):
    """A learner's state would not fit in the memory of this machine."""


class Interrupted(KeyboardInterrupt):
    """A run stopped by a signal (SIGINT: Ctrl-C, SIGTERM: a scheduler); the process exits with 128 + signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum


class NumericalError(OklError):
    """A learner produced a non-finite prediction (e.g. a step size that diverges)."""


def in_python_words(exc: Exception, group: str) -> Exception:
    """``exc`` with the command line's ``group.key`` words as a Python call's keywords ``key=`` (``set learner.eta``
    becomes ``set eta=``), for the errors of okl's Python entry points (okl.river, okl.datasets.from_file)."""
    words = re.sub(rf"\b{group}\.(\w+): ", r"\1: ", str(exc))  # "dataset.target: no column" names the keyword
    return type(exc)(re.sub(rf"\b{group}\.(\w+)=?", r"\1=", words))
