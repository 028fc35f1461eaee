"""``okl-run``: run one experiment, or a sweep with ``-m`` (Hydra, ``version_base="1.3"``).

Examples::

    okl-run                                          # pkawv_taylor on the built-in synthetic stream
    okl-run learner=pkawv_taylor dataset=susy M=2
    okl-run -m learner=pkrr_taylor,fogd seed=0,1,2 hydra/launcher=joblib

Every error a user can fix ends in one line on stderr (exit status 2), never a traceback; set
``OKL_DEBUG=1`` to see the traceback anyway. Ctrl-C exits with status 130, SIGTERM with 143, after
saving the rounds already played. A run that another live process holds is skipped with status 75 (in a
sweep, with a line on stdout: identical runs of one sweep share a directory).
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from okl.cli import command
from okl.system import blas_threads, pin_blas_threads

PROG = "okl-run"
BUSY = 75  # the run is held by another live process (EX_TEMPFAIL: try again later)


@command
def main() -> None:
    pin_blas_threads()  # before any numerical import
    os.environ["HYDRA_FULL_ERROR"] = "1"  # let errors reach describe() instead of Hydra's printer
    debug = bool(os.environ.get("OKL_DEBUG"))
    try:
        blas_threads()  # refused before a run directory is made (a failed run was left behind)
        import hydra

        import okl.config  # noqa: F401  (registers the root schema and the plugins)
        from hydra_plugins import okl_sweeper
        from okl.compose import main_reads_files_once

        okl_sweeper.install()  # -m composes each distinct structure once (okl.compose)
        _multirun_first()
        if "hydra.launcher.n_jobs=0" in sys.argv[1:]:  # before Hydra makes the sweep's folder
            _fail(NO_JOBS)

        with main_reads_files_once():
            hydra.main(version_base="1.3", config_path="pkg://okl.conf", config_name="config")(_task)()
    except KeyboardInterrupt as exc:
        print(f"{PROG}: interrupted; {_kept(sys.argv[1:])} (the same command resumes)", file=sys.stderr)
        sys.exit(128 + getattr(exc, "signum", signal.SIGINT))
    except BrokenPipeError:  # the reader is gone (okl-run ... | head): okl.cli.command ends quietly
        raise
    except Exception as exc:
        if debug:
            raise
        _fail(describe(exc))


def _kept(args: list[str]) -> str:
    """What a Ctrl-C keeps: a run played in this process closes its part; a launcher's workers (joblib's, SLURM's)
    are stopped at once, so their runs keep the rounds up to their last closed part (measured with joblib: 23,552 of
    25,000 rounds played, and the line said all were saved)."""
    if any(a.startswith("hydra/launcher=") and a.split("=", 1)[1] != "basic" for a in args):
        return "each run keeps its rounds up to its last saved part (the launcher's workers stop at once)"
    return "the rounds played so far are saved"


NO_JOBS = "hydra.launcher.n_jobs=0 runs no job: set the jobs to run at once (1 or more), or -1 for one per core"


def _multirun_first() -> None:
    """``okl-run progress=false -m seed=0,1``: Hydra's parser takes -m before the overrides only, and said
    "unrecognized arguments: seed=0,1"; -m means the same wherever it is written, so it is moved first."""
    flags = [a for a in sys.argv[1:] if a in ("-m", "--multirun")]
    if flags:
        sys.argv[1:] = [*flags, *(a for a in sys.argv[1:] if a not in flags)]


def _fail(message: str, code: int = 2) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    sys.exit(code)


def _task(cfg) -> float:
    """Play the run; return its average loss (what a Hydra sweeper that optimises would read)."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from okl import config, runner
    from okl.errors import Interrupted, OklError

    multirun = HydraConfig.get().mode == RunMode.MULTIRUN
    try:
        given = {o.split("=", 1)[0].lstrip("+~") for o in HydraConfig.get().overrides.task}
        if multirun:  # a sweep may pair a key with learners that do not all read it: say so, run the rest
            for key, problem in config.unused_keys(cfg, given).items():
                print(f"{PROG}: note: {problem}; its runs are the same for every {key}", file=sys.stderr)
        plan = config.plan(cfg, () if multirun else given)
        outcome = runner.execute(plan, progress=plan.run.progress and not multirun)
        if outcome.skipped and outcome.status == "running" and not multirun:
            _fail(f"{outcome.summary(plan)}; run the command again once it has finished", BUSY)
        print(outcome.summary(plan), flush=True)
        if outcome.status == "failed":
            raise OklError(outcome.failure())
    except (OklError, OSError) as exc:
        if multirun or os.environ.get("OKL_DEBUG"):  # Hydra names the failing job's overrides, then main() prints
            raise  # the message (or, under OKL_DEBUG, the traceback: a user's error too, as the module says)
        _fail(describe(exc))  # SystemExit passes through Hydra's job wrapper without its extra line
    if outcome.status == "interrupted" or outcome.unfinished:
        raise Interrupted(outcome.signum)
    return outcome.average_loss


def describe(exc: BaseException) -> str:
    """One line saying what went wrong and what to change."""
    import yaml
    from hydra.errors import ConfigCompositionException, MissingConfigException, OverrideParseException
    from omegaconf.errors import OmegaConfBaseException

    from okl.errors import OklError

    if isinstance(exc, OklError):
        return str(exc)
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        return (
            f"cannot read {mark.name}, line {mark.line + 1}, column {mark.column + 1}: {exc.problem} "
            f"({exc.context or 'YAML syntax'}); fix the file (quote a value holding '{{', '}}', ':' or '${{...}}')"
        )
    cause = exc.__cause__
    if isinstance(exc, MissingConfigException) and exc.options is not None and exc.missing_cfg_file:
        group, _, name = exc.missing_cfg_file.rpartition("/")
        return f"unknown {group or 'config'} {name!r}; choose one of: {', '.join(sorted(exc.options))}"
    if isinstance(exc, ConfigCompositionException) and isinstance(cause, OmegaConfBaseException):
        key = getattr(cause, "full_key", None) or getattr(cause, "key", None)
        if str(exc).startswith("Could not override"):
            parent = getattr(cause, "parent_node", None)
            keys = sorted(str(k) for k in parent if k != "hydra") if parent is not None else []
            where = f" (valid keys here: {', '.join(keys)})" if keys else ""
            return f"unknown key {key!r}{where}{_swept_hint(str(key))}"
        override = str(exc).removeprefix("Error merging override ")
        return f"bad value in {override!r}: {_first_line(cause)}"
    if isinstance(exc, OverrideParseException):
        hint = ""
        if any(arg.count("=") > 1 and "'" not in arg and '"' not in arg for arg in sys.argv[1:]):
            hint = "; quote a value that contains '=' (a run directory): key='\"value\"'"
        elif path := _unquoted_path(","):
            hint = f"; quote a path with spaces, '~', brackets or other special characters: '{path}=\"...\"'"
        elif unicode := next((a for a in sys.argv[1:] if "=" in a and not a.isascii() and "'" not in a), ""):
            key, _, value = unicode.partition("=")
            hint = f"; quote a value that holds letters other than a-z: {key}='\"{value}\"'"
        return f"cannot parse the command line: {_first_line(exc)}{hint}"
    if isinstance(exc, ConfigCompositionException) and str(exc).startswith("Ambiguous value for argument"):
        argument = str(exc).split("'")[1] if str(exc).count("'") >= 2 else "..."
        sweep = f"a comma list is a sweep, add -m to run one job per value (okl-run -m {argument})"
        key = argument.partition("=")[0]
        if key.endswith(("path", "root")):
            return f"{_first_line(exc)}: {sweep}; or quote a path that holds a comma: '{key}=\"my,file.csv\"'"
        return f"{_first_line(exc)}: {sweep}"
    if isinstance(exc, ValueError) and str(exc).startswith("Config group override must be a string or a list"):
        group = next((a.partition("=")[0] for a in sys.argv[1:] if a.endswith("=null")), "a config group")
        return f"{group}=null: a config group takes one of its names, not null (okl-run --help lists them)"
    if isinstance(exc, ValueError) and str(exc).startswith("n_jobs == 0 in Parallel"):  # joblib's (a config file's 0)
        return NO_JOBS
    if isinstance(exc, ValueError) and str(exc).startswith("Only one of --run, --multirun, --cfg"):
        return f"{_first_line(exc)}: drop -m to print one run's configuration (okl-run ... --cfg job)"
    if isinstance(exc, (ConfigCompositionException, OmegaConfBaseException)):
        return _first_line(exc) + (f": {_first_line(cause)}" if cause else "")
    if isinstance(exc, OSError) and _under_results(exc.filename):  # Hydra making a sweep's folder there (a run's
        # own writes say so in the runner: okl.runner.lifecycle.unwritable)
        return (
            f"cannot write {exc.filename}: {exc.strerror or exc}; set OKL_RESULTS (or sink.root) to a writable folder "
            "with free space"
        )
    if isinstance(exc, OSError) and exc.filename:  # a file of the user's, named with what the system said
        return f"{exc.filename}: {exc.strerror or exc}"
    return f"internal error: {type(exc).__name__}: {_first_line(exc)} (set OKL_DEBUG=1 for the traceback)"


def _under_results(filename: object) -> bool:
    """Whether ``filename`` is the results root (``sink.root=`` on the command line, else $OKL_RESULTS, else
    results/) or lies under it."""
    if not filename:
        return False
    from okl.results import default_root  # (an error's path: pandas is not imported for a run)

    given = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("sink.root=")]
    root = (Path(given[-1]) if given else default_root()).expanduser().absolute()
    path = Path(os.fsdecode(filename)).expanduser().absolute()
    return path == root or root in path.parents


def _unquoted_path(allowed: str) -> str:
    """The first path key of the command line (``dataset.path=``, ``dataset.test_path=``, ``sink.root=``...) whose
    unquoted value holds a character that Hydra's override grammar reads as syntax (not in ``allowed``); else ""."""
    for arg in sys.argv[1:]:
        key, _, value = arg.partition("=")
        special = set(" ~()[]{},'\"") - set(allowed)
        if (key.endswith("path") or key.endswith("root")) and value[:1] not in "'\"" and special & set(value):
            return key
    return ""


def _swept_hint(key: str) -> str:
    """With -m, Hydra applies a plain override to the default choices before the sweep, so a key that only the
    swept choices (learners, arms) have is refused there: then, and only then (the default lacks the key and a
    swept choice has it), the error names ``++key=value``, which adds it where it is missing."""
    args = sys.argv[1:]
    if not any(a == "-m" or (a.startswith("--m") and "--multirun".startswith(a)) for a in args):
        return ""
    pairs = [a.split("=", 1) for a in args if "=" in a and not a.startswith(("-", "hydra"))]
    value = next((v for k, v in pairs if k == key), "...")
    plain = [f"{k}={v}" for k, v in pairs if "," not in v and k != key]
    swept = [(k, v.split(",")) for k, v in pairs if "," in v and "." not in k and not k.startswith(("+", "~"))]
    choices = [[*plain, f"{group}={choice}"] for group, values in swept for choice in values]
    if _has(plain, key) or not any(_has(c, key) for c in choices):
        return ""
    return (
        "; with -m it is checked against the default choices before the sweep: the swept ones take it, "
        f"write ++{key}={value}"
    )


def _has(overrides: list[str], key: str) -> bool:
    """Whether the config composed with ``overrides`` has ``key`` (False when it does not compose)."""
    from hydra import compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    GlobalHydra.instance().clear()
    try:
        with initialize_config_module(config_module="okl.conf", version_base="1.3"):
            cfg = compose(config_name="config", overrides=overrides)
    except Exception:  # a choice that does not compose does not take the key
        return False
    return OmegaConf.select(cfg, key, default=_ABSENT) is not _ABSENT


_ABSENT = object()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
