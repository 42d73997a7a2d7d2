"""What every lock provider does: take, renew and release one table's lock for an owner.

A provider only answers for the moment it is asked; waiting, retrying, re-entrance and
renewal live in TableLock. Each hold carries an expiry that its holder keeps pushing forward
(the lock's heartbeat); a hold whose expiry passed belongs to a holder that died, and the next
process to ask takes it over.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass


@dataclass(frozen=True)
class LockHold:
    """Who holds a lock, and until when unless renewed."""

    owner: str
    expires_at_ms: int

    @property
    def expired(self) -> bool:
        return now_ms() > self.expires_at_ms

    def describe(self) -> str:
        left = (self.expires_at_ms - now_ms()) / 1000
        return f"{self.owner} (expires in {left:.0f} s)" if left > 0 else f"{self.owner} (expired)"


class LockProvider(ABC):
    """One table's lock in some shared medium (process memory, a file, a database row)."""

    @property
    @abstractmethod
    def key(self) -> str:
        """Names the lock: two providers with the same key guard the same table."""

    @abstractmethod
    def try_acquire(self, owner: str, expires_at_ms: int) -> bool:
        """Takes the lock if free or expired; False while another owner holds it."""

    @abstractmethod
    def renew(self, owner: str, expires_at_ms: int) -> bool:
        """Moves the hold's expiry; False if `owner` no longer holds the lock."""

    @abstractmethod
    def release(self, owner: str) -> None:
        """Gives the lock up if `owner` holds it."""

    @abstractmethod
    def holder(self) -> LockHold | None:
        """The current hold, for messages (None when free)."""


def now_ms() -> int:
    return int(time.time() * 1000)
