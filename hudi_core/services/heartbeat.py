"""Heartbeats: a running write or service keeps rewriting a small file, so that another
process can tell (by the file's modification time) an attempt still working from a dead one.

Writes beat in `.hoodie/.heartbeat/<instant>`, as Apache Hudi's writers do. A table service
executing an instant first claims an attempt, `.hoodie/.aux/.attempts/<instant>/<n>`: a file
created exclusively, so of two processes retrying the same instant at once one gets the
attempt and the other fails cleanly; a new attempt is only granted once the last one's
heartbeat has stopped. Each beat replaces the file whole (Storage.replace), so a process
killed while beating leaves its name behind, and is seen dead at once on its host.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass

from hudi_core.config import write_options as W
from hudi_core.config.option import Options
from hudi_core.config.table_config import METAFOLDER
from hudi_core.errors import ConcurrentServiceError
from hudi_core.storage import Storage

HEARTBEAT_FOLDER = f"{METAFOLDER}/.heartbeat"
ATTEMPTS_FOLDER = f"{METAFOLDER}/.aux/.attempts"


@dataclass(frozen=True)
class Liveness:
    """How often heartbeats beat, and how many may be missed before the beater counts as dead."""

    interval_ms: int = W.HEARTBEAT_INTERVAL_MS.default
    tolerable_misses: int = W.HEARTBEAT_TOLERABLE_MISSES.default

    @classmethod
    def from_options(cls, options: Options) -> Liveness:
        return cls(
            options.get_option(W.HEARTBEAT_INTERVAL_MS),
            options.get_option(W.HEARTBEAT_TOLERABLE_MISSES),
        )

    def is_alive(self, storage: Storage, path: str) -> bool:
        """Whether the heartbeat at `path` beat within the tolerated misses (a missing file
        never beat), by Apache Hudi's rule; and, when it names a process of this host (ours
        do), whether that process still runs: a crashed writer is seen at once."""
        last_beat_ms = storage.modified_ms(path)
        if last_beat_ms is None:
            return False
        if _now_ms() - last_beat_ms > self.interval_ms * self.tolerable_misses:
            return False
        return _beater_may_run(storage, path)


def _owner() -> bytes:
    """What our heartbeat files hold: the beating process, as host, PID namespace and PID
    (Apache Hudi's are empty; only their modification time counts there)."""
    return f"{socket.gethostname()} {_pid_namespace()} {os.getpid()}".encode()


def _pid_namespace() -> str:
    """Which process IDs a PID belongs to (containers on one host have their own); "" where
    the system does not say."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def _beater_may_run(storage: Storage, path: str) -> bool:
    """False only for a heartbeat of a process that is known to be gone: one of this host and
    PID namespace whose PID runs no more."""
    try:
        host, namespace, pid = storage.read_bytes(path).decode().split(" ")
    except (FileNotFoundError, UnicodeDecodeError, ValueError):
        # Gone meanwhile, or not ours: the time alone decides. An empty file is no sign of a
        # dead owner: Apache Hudi's heartbeats are empty, and HDFS shows a file being
        # rewritten as empty. Ours are replaced whole where the storage allows it.
        return True
    here = (socket.gethostname(), _pid_namespace())
    if (host, namespace) != here or not namespace or not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


class Heartbeat:
    """Context manager: beats every interval while the block runs; removed at the end."""

    def __init__(self, storage: Storage, path: str, liveness: Liveness) -> None:
        self.storage = storage
        self.path = path
        self.interval = liveness.interval_ms / 1000
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat_until_stopped, daemon=True)

    def __enter__(self) -> Heartbeat:
        self._beat()
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()
        self.storage.delete(self.path)

    def _beat(self) -> None:
        # Whole or not at all: a process killed mid-beat must leave its name in the file (an
        # empty one is judged by its time alone, and would hold off reruns until it expires).
        self.storage.replace(self.path, _owner())

    def _beat_until_stopped(self) -> None:
        while not self._stop.wait(self.interval):
            self._beat()


def write_heartbeat(storage: Storage, instant_time: str, liveness: Liveness) -> Heartbeat:
    return Heartbeat(storage, f"{HEARTBEAT_FOLDER}/{instant_time}", liveness)


def write_is_alive(storage: Storage, instant_time: str, liveness: Liveness) -> bool:
    return liveness.is_alive(storage, f"{HEARTBEAT_FOLDER}/{instant_time}")


def claim_attempt(storage: Storage, instant_time: str, liveness: Liveness, what: str) -> Heartbeat:
    """The next attempt at running `what` (a service) on `instant_time`, beating while used.

    Raises ConcurrentServiceError when another process holds a live attempt, or wins the race
    for the next one.
    """
    folder = f"{ATTEMPTS_FOLDER}/{instant_time}"
    numbers = sorted(int(e.name) for e in storage.list_files(folder) if e.name.isdigit())
    if numbers and liveness.is_alive(storage, f"{folder}/{numbers[-1]}"):
        raise ConcurrentServiceError(
            f"{what} of instant {instant_time} is running in another process "
            f"(attempt {numbers[-1]}); retry once it has finished or stopped beating"
        )
    attempt = (numbers[-1] + 1) if numbers else 1
    path = f"{folder}/{attempt}"
    try:
        storage.create_new(path, _owner())
    except FileExistsError as exc:
        raise ConcurrentServiceError(
            f"another process started {what} of instant {instant_time} at the same moment"
        ) from exc
    return Heartbeat(storage, path, liveness)


def release_attempts(storage: Storage, instant_time: str) -> None:
    """Forgets every attempt at an instant once it completed."""
    storage.delete_dir(f"{ATTEMPTS_FOLDER}/{instant_time}")


def _now_ms() -> int:
    return int(time.time() * 1000)
