"""What every table service works from: the table's storage and config, and the options of
the HudiTable handle it was reached through (under the options of each call)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hudi_core.config.option import Options
from hudi_core.config.table_config import TableConfig
from hudi_core.lock import TableLock, table_lock
from hudi_core.storage import Storage
from hudi_core.timeline import ActiveTimeline


class TableService:
    def __init__(
        self, storage: Storage, config: TableConfig, options: Mapping[str, Any] | None = None
    ) -> None:
        self.storage = storage
        self.config = config
        self.options = dict(options or {})

    def _options(self, options: Mapping[str, Any] | None) -> Options:
        return Options(self.config.properties, self.options, options)

    def _lock(self, opts: Options) -> TableLock:
        """The table's lock: held while this service plans or completes an instant."""
        return table_lock(self.storage, opts)

    def _timeline(self) -> ActiveTimeline:
        return ActiveTimeline.load(self.storage, self.config.timeline_timezone)
