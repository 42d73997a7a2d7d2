"""Locks that serialize timeline changes between writers and table services of one table.

`table_lock(storage, options)` builds the lock hoodie.write.lock.provider names: in-process
(threads of one process), file system (a lock file; processes on one file system), or
database (a row per table through SQLAlchemy; processes anywhere that reach the database).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import cast

from hudi_core.config import cleaner_options as CL
from hudi_core.config import lock_options as L
from hudi_core.config.option import Options
from hudi_core.errors import InvalidOptionError, UnsupportedStorageError
from hudi_core.lock.database import DatabaseLockProvider
from hudi_core.lock.file_system import FileSystemLockProvider
from hudi_core.lock.in_process import InProcessLockProvider
from hudi_core.lock.provider import LockHold, LockProvider
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
}

__all__ = [
    "DATABASE_URL_ENV",
    "DatabaseLockProvider",
    "FileSystemLockProvider",
    "InProcessLockProvider",
    "LockHold",
    "LockProvider",
    "LockTiming",
    "TableLock",
    "failed_writes_policy",
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


def table_lock(storage: Storage, options: Options) -> TableLock:
    """The lock of the table at `storage`, as the options configure it."""
    return TableLock(lock_provider(storage, options), lock_timing(options))


def lock_timing(options: Options) -> LockTiming:
    heartbeat_ms = options.get_option(L.HEARTBEAT_INTERVAL_MS)
    expire_minutes = options.get_option(L.FILESYSTEM_EXPIRE)
    return LockTiming(
        wait_time_ms=options.get_option(L.WAIT_TIME_MS),
        wait_between_retries_ms=options.get_option(L.WAIT_BETWEEN_RETRIES_MS),
        num_retries=options.get_option(L.NUM_RETRIES),
        heartbeat_interval_ms=heartbeat_ms,
        expire_ms=expire_minutes * 60_000 if expire_minutes > 0 else 3 * heartbeat_ms,
    )


def lock_provider(storage: Storage, options: Options) -> LockProvider:
    name = options.get_option(L.PROVIDER).strip()
    name = _NAMES.get(name, name)
    if name == L.IN_PROCESS:
        return InProcessLockProvider(storage.base_uri)
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
                f"use {L.PROVIDER.key}=database (hudi_core.lock.DatabaseLockProvider)"
            )
        return FileSystemLockProvider(lock_folder)
    if name == L.DATABASE:
        return DatabaseLockProvider(
            _database_url(options), options.get_option(L.DATABASE_TABLE), storage.base_uri
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
