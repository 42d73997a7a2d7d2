"""The file-system lock: a lock file created exclusively, holding its owner and expiry.

Taking the lock is creating `<folder>/lock` (Storage.create_new: a hard link locally, which
fails if the file exists). The holder rewrites the file with a later expiry as it renews
(written aside and renamed over, so a reader never sees half a file). A lock file whose
expiry passed is moved aside and the lock created anew; if the file moved aside turns out not
to be the expired hold that was read (another process took over in between), it is put back.
"""

from __future__ import annotations

import json
import uuid

from hudi_core.lock.provider import LockHold, LockProvider
from hudi_core.storage import Storage

LOCK_FILE = "lock"


class FileSystemLockProvider(LockProvider):
    def __init__(self, folder: Storage, file_name: str = LOCK_FILE) -> None:
        self.folder = folder  # rooted at the lock file's folder
        self.file_name = file_name  # the table lock's `lock`, or another named lock's file

    @property
    def key(self) -> str:
        return f"file-system:{self.folder.full_path(self.file_name)}"

    def try_acquire(self, owner: str, expires_at_ms: int) -> bool:
        content = _content(owner, expires_at_ms)
        if self._create(content):
            return True
        hold = self.holder()
        if hold is None:  # released meanwhile
            return self._create(content)
        if hold.owner == owner:
            return self.renew(owner, expires_at_ms)
        if hold.expired and self._remove_expired(hold):
            return self._create(content)
        return False

    def renew(self, owner: str, expires_at_ms: int) -> bool:
        hold = self.holder()
        if hold is None or hold.owner != owner:
            return False
        aside = f"{self.file_name}.{uuid.uuid4().hex}.renew"
        self.folder.write_bytes(aside, _content(owner, expires_at_ms))
        self.folder.fs.move(self.folder.full_path(aside), self.folder.full_path(self.file_name))
        return True

    def release(self, owner: str) -> None:
        hold = self.holder()
        if hold is not None and hold.owner == owner:
            self.folder.delete(self.file_name)

    def holder(self) -> LockHold | None:
        return _parse(self._read(self.file_name))

    def _create(self, content: bytes) -> bool:
        try:
            self.folder.create_new(self.file_name, content)
            return True
        except FileExistsError:
            return False

    def _remove_expired(self, expired: LockHold) -> bool:
        """Moves the expired lock file aside; True if what moved was that expired hold."""
        aside = f"{self.file_name}.{uuid.uuid4().hex}.expired"
        try:
            self.folder.fs.move(self.folder.full_path(self.file_name), self.folder.full_path(aside))
        except FileNotFoundError:
            return True  # someone else removed it first; creating decides who wins
        moved = self._read(aside)
        if _parse(moved) == expired:
            self.folder.delete(aside)
            return True
        try:  # a live hold taken over in between: give it back
            self.folder.create_new(self.file_name, moved or b"")
        except FileExistsError:
            pass
        self.folder.delete(aside)
        return False

    def _read(self, name: str) -> bytes | None:
        try:
            return self.folder.read_bytes(name)
        except FileNotFoundError:
            return None


def _content(owner: str, expires_at_ms: int) -> bytes:
    return json.dumps({"owner": owner, "expiresAtMs": expires_at_ms}).encode()


def _parse(content: bytes | None) -> LockHold | None:
    if content is None:
        return None
    try:
        fields = json.loads(content)
        return LockHold(str(fields["owner"]), int(fields["expiresAtMs"]))
    except (ValueError, KeyError, TypeError):
        # Not ours or unreadable: treat as held by an unknown owner until an hour passes,
        # rather than deleting a file we do not understand.
        return LockHold("unknown (unreadable lock file)", 2**62)
