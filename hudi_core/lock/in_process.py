"""The in-process lock: threads of one process (TableLock's own mutex does the work)."""

from __future__ import annotations

from hudi_core.lock.provider import LockHold, LockProvider


class InProcessLockProvider(LockProvider):
    def __init__(self, table_uri: str) -> None:
        self._key = f"in-process:{table_uri}"

    @property
    def key(self) -> str:
        return self._key

    def try_acquire(self, owner: str, expires_at_ms: int) -> bool:
        return True

    def renew(self, owner: str, expires_at_ms: int) -> bool:
        return True

    def release(self, owner: str) -> None:
        pass

    def holder(self) -> LockHold | None:
        return None
