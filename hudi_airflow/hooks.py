"""HudiTableHook: one Hudi table as Airflow sees it (where it lives, its options), and the
quick timeline questions sensors and the compaction planner ask in-process.

The base path and hoodie.* options come from the task's parameters, or from an Airflow
connection of type `hudi`: its host (or extra `base_path`) is the base path, its extra
`options` a mapping of hoodie.* options. Parameters win over the connection.

Without a lock provider configured, tables use the database lock (HUDI_LOCK_DB_URL, else
Airflow's own metadata database), with optimistic concurrency: ingestion, compaction planning
and the other services run as separate tasks (separate processes) that may overlap.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from airflow.sdk import BaseHook

from hudi_core import HudiTable
from hudi_core.config import lock_options as L
from hudi_core.config.option import Options
from hudi_core.config.table_config import PROPERTIES_FILE
from hudi_core.lock import DATABASE_URL_ENV
from hudi_core.services.compaction_trigger import compaction_due
from hudi_core.storage import Storage
from hudi_core.timeline import ActiveTimeline, Instant
from hudi_core.timeline.instant import COMPACTION

PLATFORM_DEFAULTS = {
    L.PROVIDER.key: L.DATABASE,
    L.CONCURRENCY_MODE.key: "OPTIMISTIC_CONCURRENCY_CONTROL",
}
LOCK_URL_ENV = DATABASE_URL_ENV[0]


class HudiTableHook(BaseHook):
    conn_name_attr = "hudi_conn_id"
    default_conn_name = "hudi_default"
    conn_type = "hudi"
    hook_name = "Apache Hudi table"

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
        return base_path, {str(k): str(v) for k, v in (extra.get("options") or {}).items()}

    @property
    def base_path(self) -> str:
        base_path = self._base_path or self._connection_settings[0]
        if not base_path:
            raise ValueError(
                "no Hudi table given: pass base_path, or hudi_conn_id naming a connection "
                "whose host or extra 'base_path' is the table's base path"
            )
        return base_path

    @property
    def options(self) -> dict[str, str]:
        """The platform defaults, the connection's options, then the task's."""
        return {**PLATFORM_DEFAULTS, **self._connection_settings[1], **self._options}

    def in_process_options(self) -> dict[str, str]:
        """The options for hudi_core in this process: a database lock without a URL of its
        own gets Airflow's metadata database."""
        options = self.options
        if _uses_database_lock(options) and not options.get(L.DATABASE_URL.key):
            url = lock_database_url()
            if url:
                options[L.DATABASE_URL.key] = url
        return options

    def spark_options(self) -> dict[str, str]:
        """The options a spark-submit gets on its command line: all but the lock database's
        URL, which may hold a password (see spark_env)."""
        return {k: v for k, v in self.options.items() if k != L.DATABASE_URL.key}

    def spark_env(self) -> dict[str, str]:
        """Environment for a spark-submit of this table: the lock database's URL travels as an
        environment variable, never on a command line that logs print."""
        if not _uses_database_lock(self.options):
            return {}
        url = self.options.get(L.DATABASE_URL.key) or lock_database_url()
        return {LOCK_URL_ENV: url} if url else {}

    def get_conn(self) -> HudiTable:
        return HudiTable.open(self.base_path, self.in_process_options())

    def exists(self) -> bool:
        return Storage(self.base_path).exists(PROPERTIES_FILE)

    def timeline(self) -> ActiveTimeline:
        table = self.get_conn()
        return ActiveTimeline.load(table.storage, table.config.timeline_timezone)

    def find_instant(
        self, action: str | None, state: str | None, instant_time: str | None = None
    ) -> Instant | None:
        """The newest instant with this action and state (and time, if given); None if the
        table does not exist yet or has no such instant."""
        if not self.exists():
            return None
        for instant in reversed(self.timeline().instants):
            if action and instant.action != action:
                continue
            if state and instant.state.value != state.upper():
                continue
            if instant_time and instant.timestamp != instant_time:
                continue
            return instant
        return None

    def compaction_due(self) -> bool:
        """Whether the table's compaction trigger (hoodie.compact.inline.trigger.strategy and
        its thresholds) says a compaction should be planned now."""
        if not self.exists():
            return False
        table = self.get_conn()
        options = Options(table.config.properties, table.options)
        return compaction_due(self.timeline(), options)

    def pending_compactions(self) -> list[str]:
        if not self.exists():
            return []
        return [i.timestamp for i in self.timeline().pending([COMPACTION])]


def lock_database_url() -> str | None:
    """The database the lock rows live in: HUDI_LOCK_DB_URL, else Airflow's metadata DB."""
    for variable in DATABASE_URL_ENV:
        if os.environ.get(variable):
            return os.environ[variable]
    from airflow.configuration import conf

    return conf.get("database", "sql_alchemy_conn", fallback=None)


def _uses_database_lock(options: dict[str, str]) -> bool:
    provider = options.get(L.PROVIDER.key, "")
    return provider in (L.DATABASE, "database", "DatabaseLockProvider")
