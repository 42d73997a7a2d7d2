"""Apache Hudi's metadata table (`.hoodie/metadata/`), which this library does not keep.

Apache Hudi 0.14/0.15 writers create a metadata table by default: a merge-on-read table listing
every data file, announced by `hoodie.table.metadata.partitions` in hoodie.properties. Its
writers, index lookups, small-file handling, compaction and clean planning trust that listing.
A change made here without updating it would leave the next Apache Hudi writer working from a
stale listing (duplicate keys, lost updates, missing files).

So, before the first instant of any write or table service, under the table lock, we do what
an Apache Hudi writer running with hoodie.metadata.enable=false does on such a table: delete
the metadata table's folder, then drop the two properties that announce it. Apache Hudi
writers with the metadata table on rebuild it from storage. The folder goes first, so that a
run cut off at any point leaves the properties still announcing it, and the next run finishes
the removal. Reads never need it: for table version 6 they list storage, as Apache Hudi does.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from hudi_core.config import metadata_options as M
from hudi_core.config import table_options as T
from hudi_core.config.option import Options
from hudi_core.config.table_config import METAFOLDER, TableConfig
from hudi_core.errors import InvalidOptionError
from hudi_core.lock import table_lock
from hudi_core.storage import Storage

METADATA_TABLE_FOLDER = f"{METAFOLDER}/metadata"
ANNOUNCING_PROPERTIES = (T.METADATA_PARTITIONS.key, T.METADATA_PARTITIONS_INFLIGHT.key)
_LOG = logging.getLogger(__name__)


def refuse_metadata_table_option(options: Mapping[str, Any], what: str) -> None:
    """Raises InvalidOptionError when the caller's options ask for the metadata table."""
    if Options(options).get_option(M.ENABLE):
        raise InvalidOptionError(
            f"{M.ENABLE.key}=true: {what} cannot keep Apache Hudi's metadata table in step, "
            "this library does not maintain it; leave the option out (or set it to false), and "
            "a metadata table the table has is removed before the change, as Apache Hudi does "
            "with the option off"
        )


def remove_metadata_table(storage: Storage, options: Options) -> TableConfig | None:
    """Removes the metadata table if the table has one (or what a cut-off removal left of
    it), under the table lock; returns the table's config afterwards, None if nothing was
    there to remove."""
    if not _has_metadata_table(storage, TableConfig.load(storage)):
        return None
    with table_lock(storage, options):
        config = TableConfig.load(storage)  # another process may have removed it meanwhile
        if not _has_metadata_table(storage, config):
            return config
        announced = {k: v for k, v in config.properties.items() if k in ANNOUNCING_PROPERTIES}
        storage.delete_dir(METADATA_TABLE_FOLDER)
        if announced:
            config = config.save_update(storage, {}, removals=announced)
    shown = ", ".join(f"{k}={v}" for k, v in sorted(announced.items()))
    _LOG.warning(
        "removed Apache Hudi's metadata table from table %s (the folder %s%s): this library "
        "does not keep it in step with the files it writes and deletes, and Apache Hudi "
        "writers would trust its stale file listing; Apache Hudi writers run with "
        "hoodie.metadata.enable=true rebuild it from storage",
        config.name,
        storage.full_path(METADATA_TABLE_FOLDER),
        f" and the properties {shown}" if shown else "",
    )
    return config


def _has_metadata_table(storage: Storage, config: TableConfig) -> bool:
    announced = any(k in config.properties for k in ANNOUNCING_PROPERTIES)
    return announced or storage.exists(METADATA_TABLE_FOLDER)


def prepare_for_change(
    storage: Storage, caller_options: Mapping[str, Any], options: Options, what: str
) -> TableConfig | None:
    """What every write and table service does before its first instant: refuse
    hoodie.metadata.enable=true among the caller's options, then remove a metadata table the
    table has. Returns the table's config if the removal changed it, else None."""
    refuse_metadata_table_option(caller_options, what)
    return remove_metadata_table(storage, options)
