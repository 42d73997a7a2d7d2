"""Every hoodie.* option hudi_core understands, with its default and doc, in one package.

Importing this package declares them all, so `declared_options()` lists the full set.
"""

from hudi_core.config import (  # noqa: F401
    archival_options,
    bootstrap_options,
    cleaner_options,
    clustering_options,
    compaction_options,
    filesystem_options,
    hive_sync_options,
    index_options,
    keygen_options,
    lock_options,
    metadata_options,
    partition_commit_options,
    read_options,
    schema_options,
    storage_options,
    table_options,
    write_options,
)
from hudi_core.config.option import ConfigOption, Options, declared_options
from hudi_core.config.table_config import PROPERTIES_FILE
from hudi_core.config.unknown_options import check_options

__all__ = ["PROPERTIES_FILE", "ConfigOption", "Options", "check_options", "declared_options"]
