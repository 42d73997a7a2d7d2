"""TableLock: the lock writers and table services hold while they change a table's timeline.

`with lock:` waits for the provider's lock as Apache Hudi's lock options say (attempts of up
to hoodie.write.lock.wait_time_ms, hoodie.write.lock.num_retries times), renews it every
hoodie.write.lock.heartbeat_interval_ms while held, and gives it up at the end. It is
re-entrant within a thread (a commit that rolls back a failed write takes it twice), and the
threads of one process queue on an in-memory mutex before they ask the provider.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass

from hudi_core.errors import LockError
from hudi_core.lock.provider import LockProvider, now_ms

_LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class LockTiming:
    wait_time_ms: int = 60000
    wait_between_retries_ms: int = 1000
    num_retries: int = 15
    heartbeat_interval_ms: int = 60000
    expire_ms: int = 180000  # a hold not renewed for this long is taken over

    @property
    def max_wait_s(self) -> float:
        return self.wait_time_ms * (self.num_retries + 1) / 1000


class _Held:
    """A process's state of one lock: the mutex its threads share, and the current hold."""

    def __init__(self) -> None:
        self.mutex = threading.RLock()
        self.depth = 0
        self.owner = ""
        self.thread: int | None = None  # the thread holding it
        self.stop_renewing: threading.Event | None = None


_HELD: dict[str, _Held] = {}
_HELD_GUARD = threading.Lock()


def _held(key: str) -> _Held:
    with _HELD_GUARD:
        return _HELD.setdefault(key, _Held())


class TableLock:
    def __init__(self, provider: LockProvider, timing: LockTiming) -> None:
        self.provider = provider
        self.timing = timing
        self._state = _held(provider.key)

    def __enter__(self) -> TableLock:
        state = self._state
        if not state.mutex.acquire(timeout=self.timing.max_wait_s):
            raise LockError(f"another thread of this process held {self.provider.key} too long")
        if state.depth == 0:
            try:
                self._acquire()
            except BaseException:
                state.mutex.release()
                raise
        state.depth += 1
        state.thread = threading.get_ident()
        return self

    def __exit__(self, *exc_info: object) -> None:
        state = self._state
        state.depth -= 1
        try:
            if state.depth == 0:
                state.thread = None
                self._release()
        finally:
            state.mutex.release()

    @property
    def held(self) -> bool:
        """Whether this thread holds the lock now."""
        return self._state.thread == threading.get_ident()

    def _acquire(self) -> None:
        owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        timing = self.timing
        for _attempt in range(timing.num_retries + 1):
            give_up_at = time.monotonic() + timing.wait_time_ms / 1000
            while True:
                if self.provider.try_acquire(owner, now_ms() + timing.expire_ms):
                    self._state.owner = owner
                    self._start_renewing(owner)
                    return
                if time.monotonic() >= give_up_at:
                    break
                time.sleep(timing.wait_between_retries_ms / 1000)
        hold = self.provider.holder()
        holder = hold.describe() if hold else "nobody (released just now)"
        raise LockError(
            f"could not take the lock {self.provider.key} within {timing.max_wait_s:.0f} s "
            f"({timing.num_retries + 1} attempts of {timing.wait_time_ms} ms); held by {holder}"
        )

    def _release(self) -> None:
        state = self._state
        if state.stop_renewing is not None:
            state.stop_renewing.set()
            state.stop_renewing = None
        self.provider.release(state.owner)
        state.owner = ""

    def _start_renewing(self, owner: str) -> None:
        stop = threading.Event()
        self._state.stop_renewing = stop
        thread = threading.Thread(target=self._renew_until, args=(owner, stop), daemon=True)
        thread.start()

    def _renew_until(self, owner: str, stop: threading.Event) -> None:
        while not stop.wait(self.timing.heartbeat_interval_ms / 1000):
            if not self.provider.renew(owner, now_ms() + self.timing.expire_ms):
                _LOG.error("lost the lock %s: another process took it over", self.provider.key)
                return
