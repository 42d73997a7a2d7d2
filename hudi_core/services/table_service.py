"""What every table service works from: the table's storage and config, and the options of
the HudiTable handle it was reached through (under the options of each call)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hudi_core.config.option import Options
from hudi_core.config.table_config import TableConfig
from hudi_core.config.unknown_options import check_options
from hudi_core.lock import TableLock, table_lock
from hudi_core.services.metadata_table import prepare_for_change
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

    def _options_for_change(self, options: Mapping[str, Any] | None, what: str) -> Options:
        """The call's options, once the table is ready for this service to change it: a
        metadata table the table has is removed (see services.metadata_table)."""
        check_options(options)
        opts = self._options(options)
        changed = prepare_for_change(self.storage, Options(self.options, options), opts, what)
        if changed is not None:
            self.config = changed
            opts = self._options(options)
        return opts

    def _lock(self, opts: Options) -> TableLock:
        """The table's lock: held while this service plans or completes an instant."""
        return table_lock(self.storage, opts)

    def _timeline(self) -> ActiveTimeline:
        return ActiveTimeline.load(self.storage, self.config.timeline_timezone)
