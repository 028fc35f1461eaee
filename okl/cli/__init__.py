"""The console scripts: ``okl-run`` (:mod:`okl.cli.run`), ``okl-data`` (:mod:`okl.cli.data`), ``okl-regret``
(:mod:`okl.cli.regret`), ``okl-results`` (:mod:`okl.cli.results`), ``okl-reproduce`` (:mod:`okl.cli.reproduce`),
``okl-tune`` (:mod:`okl.cli.tune`) and ``okl-bench`` (:mod:`okl.cli.bench`). Each ``main`` is wrapped by
:func:`command`."""

from __future__ import annotations

import functools
import os
import signal
import sys
from collections.abc import Callable
from typing import Any


def command(main: Callable[..., Any]) -> Callable[..., Any]:
    """A console script's ``main``, ending quietly when its reader goes away (``okl-data list | head``): the
    closed pipe ends the command with the status of a process killed by SIGPIPE (141), without Python's
    BrokenPipeError traceback, here or when the interpreter flushes stdout at exit. Ctrl-C that the script does not
    handle itself ends it in one line with status 130 (``okl-results export --mlflow`` printed a traceback)."""

    @functools.wraps(main)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        try:
            try:
                return main(*args, **kwargs)
            finally:  # also after --help's SystemExit: its text may still wait in the buffer
                sys.stdout.flush()
        except BrokenPipeError:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
            sys.exit(128 + signal.SIGPIPE)
        except KeyboardInterrupt:
            print(f"{main.__globals__.get('PROG', 'okl')}: interrupted", file=sys.stderr)
            sys.exit(128 + signal.SIGINT)

    return wrapped
