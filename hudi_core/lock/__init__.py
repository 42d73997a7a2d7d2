"""Locks that serialize timeline changes between writers and table services of one table.

`table_lock(storage, options)` builds the lock hoodie.write.lock.provider names: in-process
(threads of one process), file system (a lock file created exclusively; processes on one local
or HDFS file system), storage-based (a lock file kept by conditional writes on S3, GCS or
Azure; processes anywhere that reach the store, Apache Hudi 1.1 writers included), or database
(a row per table through SQLAlchemy; processes anywhere that reach the database).
`lock_provider_for_storage` names the lock that follows a table's storage.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from typing import Any, cast

from hudi_core.config import cleaner_options as CL
from hudi_core.config import lock_options as L
from hudi_core.config.option import Options
from hudi_core.errors import InvalidOptionError, UnsupportedStorageError
from hudi_core.filesystems import is_object_store
from hudi_core.lock.database import DatabaseLockProvider
from hudi_core.lock.file_system import LOCK_FILE, FileSystemLockProvider
from hudi_core.lock.in_process import InProcessLockProvider
from hudi_core.lock.provider import LockHold, LockProvider
from hudi_core.lock.storage_based import LOCK_FILE as STORAGE_LOCK_FILE
from hudi_core.lock.storage_based import StorageBasedLockProvider
from hudi_core.lock.table_lock import LockTiming, TableLock
from hudi_core.storage import Storage

DATABASE_URL_ENV = "HUDI_LOCK_DB_URL"
_NAMES = {
    "in_process": L.IN_PROCESS,
    "InProcessLockProvider": L.IN_PROCESS,
    "file_system": L.FILE_SYSTEM,
    "FileSystemBasedLockProvider": L.FILE_SYSTEM,
    "database": L.DATABASE,
    "DatabaseLockProvider": L.DATABASE,
    "storage": L.STORAGE_BASED,
    "storage_based": L.STORAGE_BASED,
    "StorageBasedLockProvider": L.STORAGE_BASED,
}

__all__ = [
    "DATABASE_URL_ENV",
    "DatabaseLockProvider",
    "FileSystemLockProvider",
    "InProcessLockProvider",
    "LockHold",
    "LockProvider",
    "LockTiming",
    "StorageBasedLockProvider",
    "TABLE_LOCK",
    "TableLock",
    "WRITER_TURN",
    "failed_writes_policy",
    "lock_provider",
    "lock_provider_for_storage",
    "lock_timing",
    "non_blocking_concurrency",
    "optimistic_concurrency",
    "table_lock",
]


def optimistic_concurrency(options: Options) -> bool:
    """Whether several writers may work on the table at once."""
    return options.get_option(L.CONCURRENCY_MODE) != "SINGLE_WRITER"


def non_blocking_concurrency(options: Options) -> bool:
    """Whether writers that only append logs go on without conflicting (see lock.conflicts)."""
    return options.get_option(L.CONCURRENCY_MODE) == "NON_BLOCKING_CONCURRENCY_CONTROL"


def failed_writes_policy(options: Options) -> str:
    """EAGER (the next writer rolls back every pending write) or LAZY (only writes whose
    heartbeat stopped, by the cleaner). Several writers imply LAZY, as in Apache Hudi: an
    eager writer would roll back the others' running writes."""
    if optimistic_concurrency(options):
        return "LAZY"
    return options.get_option(CL.FAILED_WRITES_POLICY)


# The lock every change of a table's timeline is made under (Apache Hudi's lock, in its place).
TABLE_LOCK = "table"
# A second lock of a table, of the same kind and beside the table lock: writers that must not
# run at once (the Airflow provider's ingest runs of one table) hold it for a whole write.
WRITER_TURN = "writer_turn"


def table_lock(storage: Storage, options: Options, name: str = TABLE_LOCK) -> TableLock:
    """The lock of the table at `storage`, as the options configure it; `name` another lock
    of the table (WRITER_TURN), in the same medium under another key."""
    return TableLock(lock_provider(storage, options, name), lock_timing(options))


def lock_timing(options: Options) -> LockTiming:
    heartbeat_ms = options.get_option(L.HEARTBEAT_INTERVAL_MS)
    expire_minutes = options.get_option(L.FILESYSTEM_EXPIRE)
    expire_ms = expire_minutes * 60_000 if expire_minutes > 0 else 3 * heartbeat_ms
    if _provider_name(options) == L.STORAGE_BASED:
        heartbeat_ms, expire_ms = _storage_lease_ms(options)
    return LockTiming(
        wait_time_ms=options.get_option(L.WAIT_TIME_MS),
        wait_between_retries_ms=options.get_option(L.WAIT_BETWEEN_RETRIES_MS),
        num_retries=options.get_option(L.NUM_RETRIES),
        heartbeat_interval_ms=heartbeat_ms,
        expire_ms=expire_ms,
    )


def _storage_lease_ms(options: Options) -> tuple[int, int]:
    """(renewal interval, validity) of the storage-based lock, checked as Apache Hudi checks
    them: a lease must survive several missed renewals."""
    renew_s = options.get_option(L.STORAGE_RENEW_INTERVAL_SECS)
    validity_s = options.get_option(L.STORAGE_VALIDITY_TIMEOUT_SECS)
    if renew_s < 1 or validity_s < 10 or validity_s < 10 * renew_s:
        raise InvalidOptionError(
            f"{L.STORAGE_VALIDITY_TIMEOUT_SECS.key}={validity_s} must be at least 10 and at "
            f"least 10 times {L.STORAGE_RENEW_INTERVAL_SECS.key}={renew_s} (itself at least 1)"
        )
    return renew_s * 1000, validity_s * 1000


def lock_provider_for_storage(base_path: str, options: Mapping[str, Any] | None = None) -> str:
    """The lock provider (class name) that follows the table's storage, for when none is
    configured: the storage-based lock on object stores (S3, GCS, Azure), the file-system lock
    on local and HDFS paths, or wherever hoodie.write.lock.filesystem.path puts its lock file
    when that is not an object store."""
    lock_folder = Options(options).get_option(L.FILESYSTEM_PATH)
    if lock_folder and not is_object_store(lock_folder):
        return L.FILE_SYSTEM
    return L.STORAGE_BASED if is_object_store(base_path) else L.FILE_SYSTEM


def _provider_name(options: Options) -> str:
    name = options.get_option(L.PROVIDER).strip()
    return _NAMES.get(name, name)


def lock_provider(storage: Storage, options: Options, lock: str = TABLE_LOCK) -> LockProvider:
    """The provider of the table's lock named `lock` (TABLE_LOCK: Apache Hudi's own, at the
    place Apache Hudi keeps it; any other: a key, file or row of its own beside it)."""
    named = "" if lock == TABLE_LOCK else f"#{lock}"
    name = _provider_name(options)
    if named and name not in _NAMES.values():
        # A custom provider has no second key to offer: another lock follows the storage.
        name = lock_provider_for_storage(storage.base_uri, options)
    if name == L.IN_PROCESS:
        return InProcessLockProvider(storage.base_uri + named)
    if name == L.FILE_SYSTEM:
        folder = options.get_option(L.FILESYSTEM_PATH)
        lock_folder = (
            Storage(folder, options=options)
            if folder
            else Storage(storage.full_path(".hoodie"), storage.fs)
        )
        if lock_folder.is_object_store:
            raise UnsupportedStorageError(
                f"{L.PROVIDER.key}={L.FILE_SYSTEM} is not safe on {lock_folder.base_uri}: an "
                "object store has no exclusive create, so two writers could both take the lock; "
                f"use {L.PROVIDER.key}=storage ({L.STORAGE_BASED}: conditional writes on the "
                "store, the lock Apache Hudi 1.1 writers use there) or database "
                "(hudi_core.lock.DatabaseLockProvider)"
            )
        return FileSystemLockProvider(lock_folder, LOCK_FILE if not named else f"{lock}.lock")
    if name == L.STORAGE_BASED:
        timeout_s = options.get_option(L.STORAGE_VALIDITY_TIMEOUT_SECS) / 5
        lock_file = STORAGE_LOCK_FILE if not named else f".hoodie/.locks/{lock}_lock.json"
        return StorageBasedLockProvider.for_table(storage.base_uri, options, timeout_s, lock_file)
    if name == L.DATABASE:
        return DatabaseLockProvider(
            _database_url(options), options.get_option(L.DATABASE_TABLE), storage.base_uri + named
        )
    return _custom_provider(name, storage, options)


def _database_url(options: Options) -> str:
    url = options.get_option(L.DATABASE_URL) or os.environ.get(DATABASE_URL_ENV)
    if not url:
        raise InvalidOptionError(
            f"the database lock needs a database: set {L.DATABASE_URL.key} or the "
            f"{DATABASE_URL_ENV} environment variable"
        )
    return url


def _custom_provider(name: str, storage: Storage, options: Options) -> LockProvider:
    """A provider class named by its dotted path, built with (storage, options)."""
    module_name, _, class_name = name.rpartition(".")
    try:
        provider_class = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError, ValueError) as exc:
        known = ", ".join(sorted(_NAMES))
        raise InvalidOptionError(
            f"option {L.PROVIDER.key}={name!r} names no lock provider (known: {known}, or a "
            "dotted path to a hudi_core.lock.LockProvider subclass)"
        ) from exc
    if not (isinstance(provider_class, type) and issubclass(provider_class, LockProvider)):
        raise InvalidOptionError(
            f"option {L.PROVIDER.key}={name!r} names a class that is not a "
            "hudi_core.lock.LockProvider"
        )
    # LockProvider leaves construction to its subclasses; a custom one is built from
    # (storage, options), as hoodie.write.lock.provider's doc promises.
    factory = cast(Callable[[Storage, Options], LockProvider], provider_class)
    return factory(storage, options)
