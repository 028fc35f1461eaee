"""The run lock: one owner per run directory, even with many processes claiming it at once.

The lock file holds its owner's identity as JSON: host, boot id, pid, the process's start time (with the
pid it names one process, even once the pid is reused) and a random token. It is created in one step:
the identity is written to a temporary file, which is then hard-linked to the lock's name (``os.link``
never replaces a file), so no process ever reads a lock without its owner.

A lock is broken only when its owner is provably gone:

- on the same machine (same host and boot id): its pid is not alive, or belongs to a process that started
  at another time;
- on another machine (a results root shared by the jobs of a cluster): its lease expired. The owner
  touches the lock every ``HEARTBEAT_S`` seconds; a lock untouched for ``LEASE_S`` is stale.

Of the processes that find one stale lock, only the one that creates its marker ``<lock>.<token>.broken``
(exclusively) removes it; the others look again. Without the marker a slow process could remove the lock
the first one had just taken. Markers older than the lease are swept by the next owner.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any

from okl.system import boot_id, process_alive, process_start

HEARTBEAT_S = 30.0
LEASE_S = 300.0


def identity() -> dict[str, Any]:
    """This process's identity, with a fresh token."""
    pid = os.getpid()
    return {
        "host": socket.gethostname(),
        "boot": boot_id(),
        "pid": pid,
        "start": process_start(pid),
        "token": secrets.token_hex(8),
    }


def describe(owner: dict[str, Any]) -> str:
    """``process <pid> on <host>``, for messages."""
    return f"process {owner.get('pid', '?')} on {owner.get('host', 'an unknown host')}"


class RunLock:
    """The lock file at ``path``: :meth:`acquire` it, :meth:`release` it."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._fd: int | None = None  # our lock's inode, kept open for the heartbeat
        self._token: str | None = None
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    def owner(self) -> tuple[dict[str, Any], float] | None:
        """The identity in the lock file and when it was last touched (read from one open file, so both
        belong to the same lock), or None when there is no lock. A lock that is not okl's JSON (an older
        okl's bare pid) has an identity without host."""
        try:
            with open(self.path, "rb") as fh:
                touched, text = os.fstat(fh.fileno()).st_mtime, fh.read()
        except FileNotFoundError:
            return None
        try:
            found = json.loads(text)
            if not isinstance(found, dict):
                raise ValueError
        except ValueError:
            found = {"token": hashlib.sha256(text).hexdigest()[:16]}
        return found, touched

    def acquire(self) -> dict[str, Any] | None:
        """Take the lock; None when taken, else the identity of the live owner holding it."""
        me = identity()
        tmp = self.path.with_name(f"{self.path.name}.{me['token']}.tmp")
        tmp.write_text(json.dumps(me))
        try:
            while True:
                try:
                    os.link(tmp, self.path)
                except FileExistsError:
                    found = self.owner()
                    if found is None:  # released meanwhile
                        continue
                    owner, touched = found
                    if not gone(owner, touched):
                        return owner
                    self._break(owner)
                    continue
                self._fd, self._token = os.open(tmp, os.O_RDONLY), me["token"]
                break
        finally:
            tmp.unlink(missing_ok=True)
        self._sweep()
        self._stop.clear()
        self._beat = threading.Thread(target=self._heartbeat, args=(self._fd,), name="okl-run-lock", daemon=True)
        self._beat.start()
        return None

    def release(self) -> None:
        """Give the lock up (if it is still ours)."""
        if self._fd is None:
            return
        self._stop.set()
        self._beat.join()
        found = self.owner()
        if found is not None and found[0].get("token") == self._token:
            self.path.unlink(missing_ok=True)
        os.close(self._fd)
        self._fd = self._token = None

    def _break(self, owner: dict[str, Any]) -> None:
        """Remove the stale lock of ``owner`` if this process is the one that breaks it."""
        marker = self.path.with_name(f"{self.path.name}.{owner.get('token')}.broken")
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:  # another process breaks it: look again, unless that breaker died a lease ago
            with contextlib.suppress(OSError):
                if time.time() - marker.stat().st_mtime > LEASE_S:
                    marker.unlink()
            time.sleep(0.001)
            return
        self.path.unlink(missing_ok=True)

    def _sweep(self) -> None:
        """Remove the markers of locks broken longer than a lease ago."""
        for marker in self.path.parent.glob(f"{self.path.name}.*.broken"):
            with contextlib.suppress(OSError):
                if time.time() - marker.stat().st_mtime > LEASE_S:
                    marker.unlink()

    def _heartbeat(self, fd: int) -> None:
        """Touch the lock every HEARTBEAT_S seconds (through our own inode ``fd``: a lock broken and taken by
        another process is never touched)."""
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})  # the main thread handles them
        while not self._stop.wait(HEARTBEAT_S):
            with contextlib.suppress(OSError):
                os.utime(fd)


def gone(owner: dict[str, Any], touched: float) -> bool:
    """Whether the owner of a lock last touched at ``touched`` is provably gone (see the module)."""
    if owner.get("host") == socket.gethostname() and owner.get("boot") and owner.get("boot") == boot_id():
        pid = owner.get("pid")
        if not isinstance(pid, int) or not process_alive(pid):
            return True
        start = process_start(pid)
        return start is not None and start != owner.get("start")
    return time.time() - touched > LEASE_S
