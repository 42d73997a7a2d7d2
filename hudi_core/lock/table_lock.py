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
        self.thread_name = ""
        self.lost = False  # a renewal found the hold taken over
        self.renewer: tuple[threading.Event, threading.Thread] | None = None


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
            raise LockError(
                f"could not take the lock {self.provider.key} within "
                f"{self.timing.max_wait_s:g} s; held by thread {state.thread_name!r} of this "
                f"process (pid {os.getpid()})"
            )
        state.thread_name = threading.current_thread().name  # for the messages of waiters
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

    def require_held(self) -> None:
        """Raises LockError if this process's hold was taken over (it stopped renewing in
        time, e.g. paused longer than the expiry): what it is about to publish is unsafe."""
        if self._state.lost:
            raise LockError(
                f"the lock {self.provider.key} was taken over by another process while held "
                "here (a renewal came after its expiry); the change was not made"
            )

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
                    self._state.lost = False
                    self._start_renewing(owner)
                    return
                if time.monotonic() >= give_up_at:
                    break
                time.sleep(timing.wait_between_retries_ms / 1000)
        hold = self.provider.holder()
        holder = hold.describe() if hold else "nobody (released just now)"
        raise LockError(
            f"could not take the lock {self.provider.key} within {timing.max_wait_s:g} s "
            f"({timing.num_retries + 1} attempts of {timing.wait_time_ms} ms); held by {holder}"
        )

    def _release(self) -> None:
        state = self._state
        if state.renewer is not None:
            stop, renewing = state.renewer
            stop.set()
            # A renewal under way would write the hold back after the release (a lock file
            # recreated, held by nobody until it expires): wait for it to finish first.
            renewing.join()
            state.renewer = None
        self.provider.release(state.owner)
        state.owner = ""

    def _start_renewing(self, owner: str) -> None:
        stop = threading.Event()
        thread = threading.Thread(target=self._renew_until, args=(owner, stop), daemon=True)
        self._state.renewer = (stop, thread)
        thread.start()

    def _renew_until(self, owner: str, stop: threading.Event) -> None:
        while not stop.wait(self.timing.heartbeat_interval_ms / 1000):
            if not self.provider.renew(owner, now_ms() + self.timing.expire_ms):
                self._state.lost = True
                _LOG.error("lost the lock %s: another process took it over", self.provider.key)
                return
