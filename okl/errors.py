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


class NumericalError(OklError):
    """A learner produced a non-finite prediction (e.g. a step size that diverges)."""
