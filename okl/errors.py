"""Errors a user can act on. The command line prints their message as one line, without traceback."""


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
