"""Facts about this process and machine: available memory, peak RSS, versions, git commit."""

from __future__ import annotations

import ctypes
import functools
import gc
import hashlib
import importlib.metadata
import os
import platform
import resource
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from threadpoolctl import ThreadpoolController

from okl.errors import ConfigError, ResourceError

GIB = 1024**3
STATE_SHARE = 0.5  # of the available memory a learner's state may take before round 1 (state_budget)
SMALL_STATE = 64 << 20  # bytes of a learner's state that need no check against the available memory


def pin_blas_threads() -> None:
    """One BLAS thread per process unless ``OKL_BLAS_THREADS`` says otherwise (the variables are
    read when numpy loads: call this before any numerical import)."""
    threads = os.environ.get("OKL_BLAS_THREADS", "1")
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, threads)


def blas_threads() -> int:
    """The BLAS threads of okl's numerical work: ``OKL_BLAS_THREADS``, else 1 (ConfigError for what is no count of
    threads: it was int()'s ValueError, a traceback in okl-regret and an 'internal error' in okl-run)."""
    value = os.environ.get("OKL_BLAS_THREADS", "1")
    if not value.strip().isdigit() or int(value) < 1:
        raise ConfigError(f"OKL_BLAS_THREADS={value!r}: give the number of BLAS threads, a whole number from 1")
    return int(value)


def blas_limited():
    """A context in which the BLAS pools run :func:`blas_threads` threads, whatever the environment's
    ``OPENBLAS_NUM_THREADS`` (which :func:`pin_blas_threads` leaves as the user set it): a run's rounds, its post-run
    analyses and okl-regret's scores, whose bits depend on the threads (a regret column of a shell with
    OPENBLAS_NUM_THREADS=2 differed from one's of 1 in its last bits)."""
    return blas().limit(limits=blas_threads())


@functools.cache
def blas() -> ThreadpoolController:
    """The BLAS/OpenMP thread pools of this process (threadpoolctl), inspected once: a run limits them with
    ``blas().limit(limits=...)`` instead of loading every library's description again (3 ms a run)."""
    return ThreadpoolController()


def available_memory() -> int:
    """Bytes of memory available to a new allocation (``MemAvailable``; physical memory otherwise)."""
    available = _proc_bytes("/proc/meminfo", "MemAvailable")
    return available if available is not None else os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def require_memory(nbytes: int, what: str, advice: str | Callable[[int], str], share: float = 1.0) -> None:
    """Raise :class:`ResourceError` if ``nbytes`` exceed ``share`` of the available memory: the one memory
    check. ``what`` describes the state (``"kernel_awv: the exact 200,000×200,000 kernel factor after
    n=200,000 rounds"``), ``advice`` says what to change (a function of the budget in bytes when the advice
    depends on it). A learner's state before round 1 takes ``share=STATE_SHARE`` (:func:`state_budget`); a
    state growing mid-run the whole. A state below ``SMALL_STATE`` passes without reading /proc (the
    interval ensembles build an instance every other round)."""
    if nbytes < SMALL_STATE:
        return
    available = available_memory()
    budget = int(available * share)
    if nbytes > budget:
        text = advice(budget) if callable(advice) else advice
        portion = "half the " if share == STATE_SHARE else "the "
        raise ResourceError(
            f"{what}: {nbytes / GIB:,.1f} GiB, more than {portion}{available / GIB:,.1f} GiB available: {text}"
        )


def state_budget() -> int:
    """Bytes a learner's state may take before its first round: half the available memory, the other half
    left for a block's inputs, features and temporaries."""
    return int(available_memory() * STATE_SHARE)


def process_alive(pid: int) -> bool:
    """Whether a process with this pid runs (one of another user's counts); False for no pid (0) and for a zombie,
    which has exited and waits for its parent to reap it (a run killed by ``timeout -s KILL`` is handed to pid 1,
    which a container may never reap: its lock held the run forever)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return process_state(pid) not in ("Z", "X")


def process_state(pid: int) -> str | None:
    """The state letter of process ``pid`` (field 3 of ``/proc/<pid>/stat``: R, S, D, Z for a zombie...); None where
    it cannot be read."""
    fields = _stat(pid)
    return fields[0] if fields else None


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` from the third on (after the command name, which may hold spaces and
    parentheses); None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def die_with_parent(parent: int) -> None:
    """Have the kernel kill this forked process when its parent dies (Linux's ``PR_SET_PDEATHSIG``), and exit now if
    ``parent`` is already gone; elsewhere a no-op. (An analysis child outlived a ``kill -9`` of its okl-run, computing
    on for minutes with GBs, and a rerun started a second one.)"""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:
        os._exit(1)


STOPPING = (signal.SIGINT, signal.SIGTERM)
_DEFERRING: list[list[int]] = []  # the signals the outermost signals_deferred block has received (one list while open)


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold back SIGINT and SIGTERM while the body runs, and deliver them (to the handlers there were) when the
    outermost such block ends: for bookkeeping that must not stop half done. The handlers are swapped, not the
    thread's mask: a signal sent to the process (a terminal's Ctrl-C, ``kill``) may be received by any thread whose
    mask lets it in (okl's pools, Arrow's), and Python then runs its handler in the main thread, mask or not; and a
    nested block unblocked the outer one's signals as it ended. Off the main thread (which never runs handlers) a
    no-op."""
    if threading.current_thread() is not threading.main_thread() or _DEFERRING:
        yield
        return
    caught: list[int] = []
    previous = {signum: signal.signal(signum, lambda signum, frame: caught.append(signum)) for signum in STOPPING}
    _DEFERRING.append(caught)
    try:
        yield
    finally:
        _DEFERRING.clear()
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)  # None: one set outside Python
        for signum in dict.fromkeys(caught):
            signal.raise_signal(signum)


@contextmanager
def older_objects_frozen() -> Iterator[None]:
    """The objects this process holds as the body starts (its imports: about 200,000 modules, classes, functions,
    Hydra's and OmegaConf's state; a run's learner and stream) out of the cyclic garbage collector's sight while it
    runs (:func:`gc.freeze`, then :func:`gc.unfreeze`, unless the process froze objects itself): a full collection,
    which the body's own short-lived objects set off, otherwise went through every one of them. Planning
    ``pros_n_kons_table1`` on a new machine: 0.2 → 0.03 s in collections; a run of rounds played one by one
    (``block=1``), which makes a few tuples a round: pkrr_nystrom on casp's last 15,703 rounds 0.39-0.42 → 0.32 s.
    Afterwards they are the collector's again (a library call does not keep a caller's objects from it for good)."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def reset_peak_rss() -> bool:
    """Start the peak resident set size (``VmHWM``) afresh from the current RSS, so that :func:`peak_rss` measures
    what comes next (a run in a worker process that played others before it: FOGD was recorded at 5.2 GB after a
    KRR run in the same worker). Linux's ``clear_refs`` takes ``5`` for that; False where it cannot."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def process_start(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks after boot, field 22 of ``/proc/<pid>/stat``): with the pid
    it names one process, even after the pid is reused; None where it cannot be read."""
    fields = _stat(pid)
    try:
        return int(fields[19]) if fields else None
    except (IndexError, ValueError):
        return None


def boot_id() -> str | None:
    """This machine's boot id (two processes with the same one run on the same kernel); None off Linux."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


def peak_rss() -> int:
    """Peak resident set size of this process in bytes since exec or :func:`reset_peak_rss`: ``VmHWM``. (The
    rusage maximum survives exec on Linux: a run in a process spawned by a 1.6 GB parent reported 1.6 GB.)"""
    peak = _proc_bytes("/proc/self/status", "VmHWM")
    return peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _proc_bytes(path: str, key: str) -> int | None:
    """The ``key:  <n> kB`` entry of a /proc file in bytes; None where there is no such file or entry."""
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith(f"{key}:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


PACKAGES = ("okl", "numpy", "scipy", "numba", "hydra-core", "omegaconf", "pyarrow", "pandas", "threadpoolctl")


@functools.cache
def versions() -> dict[str, str | None]:
    """The versions of Python and the packages a run's numbers depend on (read once per process: do not
    change the dict)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


@functools.cache
def source_digest() -> str:
    """sha256 of the package's Python sources (their paths and contents, in path order), read once per process: what
    a snapshot's code must equal to be resumed. The commit alone let a checkout with uncommitted edits (an editable
    install) resume a run stopped under other code and report it complete."""
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def git_state() -> dict[str, object] | None:
    """Commit and dirty flag of the checkout holding this package, or ``None`` outside git (read once per
    process: a sweep of a thousand runs does not start two thousand ``git`` processes)."""
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        if commit.returncode != 0:
            return None
        status = subprocess.run(
            ["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return {"commit": commit.stdout.strip(), "dirty": bool(status.stdout.strip())}


def tune_allocator() -> bool:
    """Stop glibc from trimming and re-growing the heap around every large temporary.

    With glibc's dynamic thresholds, a block that allocates and frees a few MB of temporaries gives
    the pages back to the system and page-faults them in again at the next block: measured here,
    FOGD with D = 1000 ran at 21 µs/round instead of 5 µs. Fixing the mmap threshold at 32 MiB and
    the trim threshold at 256 MiB keeps those pages in the process. Returns False where the C
    library is not glibc (nothing is changed there).
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3
    return bool(libc.mallopt(m_trim_threshold, 256 << 20)) and bool(libc.mallopt(m_mmap_threshold, 32 << 20))
