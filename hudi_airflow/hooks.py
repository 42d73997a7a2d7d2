"""HudiTableHook: one Hudi table as Airflow sees it (where it lives, its options), and the
quick timeline questions sensors and the compaction planner ask in-process.

The base path and hoodie.* options come from the task's parameters, or from an Airflow
connection of type `hudi`: its host (or extra `base_path`) is the base path, its extra
`options` a mapping of hoodie.* options, its extras `lock_provider` and `lock_database_url`
the lock's (these win over the same keys in `options`). Parameters win over the connection.

Tables run with optimistic concurrency: ingestion, compaction planning and the other services
run as separate tasks (separate processes) that may overlap, under the table's lock. Without a
lock provider configured, the lock follows the table's storage (hudi_core's
lock_provider_for_storage): a lock file on local and HDFS paths, a lock file written with
conditional writes on object stores. With HUDI_LOCK_DB_URL set (or a provider and URL in the
connection or options), the database lock is used. No task ever reads Airflow's metadata
database: Airflow 3 forbids it in task code.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from airflow.sdk import BaseHook

from hudi_core import HudiTable, InvalidOptionError
from hudi_core.config import PROPERTIES_FILE, Options
from hudi_core.config import lock_options as L
from hudi_core.filesystems import SECRET_OPTIONS_ENV, secret_options
from hudi_core.inspect import InstantInfo
from hudi_core.lock import (
    DATABASE_URL_ENV,
    WRITER_TURN,
    TableLock,
    lock_provider,
    lock_provider_for_storage,
    lock_timing,
)
from hudi_core.services import compaction_due
from hudi_core.storage import Storage
from hudi_core.timeline import ActiveTimeline

PLATFORM_DEFAULTS = {L.CONCURRENCY_MODE.key: "OPTIMISTIC_CONCURRENCY_CONTROL"}
# How long a writer waits for its turn (see writer_turn), and how often it asks.
WRITER_TURN_WAIT = timedelta(hours=6)
WRITER_TURN_POLL_MS = 2000
LOCK_URL_ENV = DATABASE_URL_ENV
# Connection extras with a form field of their own -> the hoodie option each sets.
EXTRA_OPTIONS = {"lock_provider": L.PROVIDER.key, "lock_database_url": L.DATABASE_URL.key}


class HudiTableHook(BaseHook):
    conn_name_attr = "hudi_conn_id"
    default_conn_name = "hudi_default"
    conn_type = "hudi"
    hook_name = "Apache Hudi table"  # its connection form: hudi_airflow.provider

    def __init__(
        self,
        hudi_conn_id: str | None = None,
        base_path: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.hudi_conn_id = hudi_conn_id
        self._base_path = base_path
        self._options = dict(options or {})

    @functools.cached_property
    def _connection_settings(self) -> tuple[str | None, dict[str, str]]:
        if not self.hudi_conn_id:
            return None, {}
        connection = self.get_connection(self.hudi_conn_id)
        extra = connection.extra_dejson
        base_path = extra.get("base_path") or connection.host
        options = {str(k): str(v) for k, v in (extra.get("options") or {}).items()}
        options.update({key: str(extra[f]) for f, key in EXTRA_OPTIONS.items() if extra.get(f)})
        return base_path, options

    @property
    def base_path(self) -> str:
        base_path = self._base_path or self._connection_settings[0]
        if not base_path:
            raise InvalidOptionError(
                "no Hudi table given: pass base_path, or hudi_conn_id naming a connection "
                "whose host or extra 'base_path' is the table's base path"
            )
        return base_path

    @property
    def options(self) -> dict[str, str]:
        """The platform defaults, the connection's options, then the task's; the lock, when
        none of them names one, as default_lock_provider says."""
        options = {**PLATFORM_DEFAULTS, **self._connection_settings[1], **self._options}
        if not str(options.get(L.PROVIDER.key) or "").strip():
            options[L.PROVIDER.key] = default_lock_provider(self.base_path, options)
        return options

    def in_process_options(self) -> dict[str, str]:
        """The options for hudi_core in this process (the same as options: hudi_core reads
        HUDI_LOCK_DB_URL itself)."""
        return self.options

    def spark_options(self) -> dict[str, str]:
        """The options a spark-submit gets on its command line: all but the lock database's
        URL, which may hold a password, and the object store's credentials (see spark_env)."""
        hidden = {L.DATABASE_URL.key, *secret_options(self.options)}
        return {k: v for k, v in self.options.items() if k not in hidden}

    def spark_env(self) -> dict[str, str]:
        """Environment for a spark-submit of this table: the lock database's URL and the
        object store's credentials travel as environment variables, never on a command line
        that logs print."""
        env = {}
        secrets = secret_options(self.options)
        if secrets:
            env[SECRET_OPTIONS_ENV] = json.dumps(secrets)
        if _uses_database_lock(self.options):
            url = self.options.get(L.DATABASE_URL.key) or os.environ.get(LOCK_URL_ENV)
            env.update({LOCK_URL_ENV: url} if url else {})
        return env

    def writer_turn(self, max_wait: timedelta | None = None) -> TableLock:
        """The table's writer turn: a lock beside the table lock, in the same medium, that
        writers hold for a whole write so that writers of one table (a backfill's concurrent
        runs, several sources) write one after another instead of failing each other at
        commit. Waits up to `max_wait` (default WRITER_TURN_WAIT), then raises LockError."""
        options = Options(self.in_process_options())
        storage = Storage(self.base_path, options=options)
        wait_ms = int((max_wait or WRITER_TURN_WAIT).total_seconds() * 1000)
        timing = dataclasses.replace(
            lock_timing(options),
            wait_time_ms=min(wait_ms, 60_000),
            wait_between_retries_ms=WRITER_TURN_POLL_MS,
            num_retries=max(0, wait_ms // 60_000 - 1),
        )
        return TableLock(lock_provider(storage, options, WRITER_TURN), timing)

    def get_conn(self) -> HudiTable:
        return HudiTable.open(self.base_path, self.in_process_options())

    def exists(self) -> bool:
        return Storage(self.base_path, options=self.options).exists(PROPERTIES_FILE)

    def timeline(self) -> ActiveTimeline:
        table = self.get_conn()
        return ActiveTimeline.load(table.storage, table.config.timeline_timezone)

    def find_instant(
        self,
        action: str | Sequence[str] | None,
        state: str | None,
        instant_time: str | None = None,
        after: str | None = None,
    ) -> InstantInfo | None:
        """The newest instant with this action (or one of these actions) and state (and
        time, if given; and a time after `after`, if given); None if the table does not
        exist yet or has no such instant."""
        if not self.exists():
            return None
        actions = {action} if isinstance(action, str) else set(action or ())
        for instant in reversed(self.get_conn().inspect.timeline()):
            if actions and instant.action not in actions:
                continue
            if state and instant.state != state.upper():
                continue
            if instant_time and instant.timestamp != instant_time:
                continue
            if after and instant.timestamp <= after:
                return None  # the newest match is not newer: no older one is
            return instant
        return None

    def last_checkpoint(self) -> str | None:
        """The checkpoint the table's newest ingest recorded (`deltastreamer.checkpoint.key`
        in its commit's extraMetadata, see spark_jobs/ingest.py; for a table fed by another
        Hudi table, the upstream instant it consumed last); None without table or one."""
        from spark_jobs.ingest import last_checkpoint

        return last_checkpoint(self.get_conn()) if self.exists() else None

    def compaction_due(self) -> bool:
        """Whether the table's compaction trigger (hoodie.compact.inline.trigger.strategy and
        its thresholds) says a compaction should be planned now."""
        if not self.exists():
            return False
        table = self.get_conn()
        options = Options(table.config.properties, table.options)
        return compaction_due(self.timeline(), options)

    def pending_compactions(self) -> list[str]:
        """The instant times of the planned compactions not completed yet, oldest first."""
        return self.pending_plans("compaction")

    def pending_plans(self, service: str) -> list[str]:
        """The instant times of the plans of `service` (compaction, clustering) not
        completed yet, oldest first."""
        if not self.exists():
            return []
        table = self.get_conn()
        return {"compaction": table.compaction, "clustering": table.clustering}[service].pending()


def default_lock_provider(base_path: str, options: dict[str, str]) -> str:
    """The lock of a table whose settings name none: the database lock when the deployment
    names a lock database (HUDI_LOCK_DB_URL, or the lock URL option), else the lock that
    follows the table's storage, which needs nothing beyond the table's own storage."""
    if os.environ.get(LOCK_URL_ENV) or options.get(L.DATABASE_URL.key):
        return L.DATABASE
    return lock_provider_for_storage(base_path, options)


def _uses_database_lock(options: dict[str, str]) -> bool:
    provider = options.get(L.PROVIDER.key, "")
    return provider in (L.DATABASE, "database", "DatabaseLockProvider")
