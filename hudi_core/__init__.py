"""Apache Hudi's table format (table version 6) as a pure-Python library.

from hudi_core import HudiTable
table = HudiTable.create(path, name="trips", record_key_fields=["uuid"],
                         partition_fields=["city"], precombine_field="ts")
table.write(arrow_table, operation="upsert")
table.read()
"""

from hudi_core import config  # noqa: F401  (declares every option)
from hudi_core.choices import CompactionOrder, QueryType, TableType, WriteOperation
from hudi_core.errors import (
    BootstrapError,
    ConcurrentServiceError,
    ConcurrentWriterError,
    CorruptFileError,
    HudiError,
    IncrementalHistoryError,
    InstantTimeError,
    InternalError,
    InvalidOptionError,
    LockError,
    MissingDataFileError,
    MissingInstantFileError,
    PartitionPathError,
    PathOutsideTableError,
    PrecombineFieldError,
    QueryError,
    RecordKeyError,
    SchemaError,
    ServiceError,
    StorageUnreachableError,
    SyncError,
    TableConfigError,
    TableExistsError,
    TableNotFoundError,
    TimelineError,
    UnsupportedStorageError,
    UnsupportedTableFeatureError,
    UnsupportedTableVersionError,
    WriteConflictError,
)
from hudi_core.read.scan_statistics import ScanStatistics
from hudi_core.table import HudiTable
from hudi_core.timeline import Instant, State

# The modules other packages (the Airflow provider, the Spark jobs, users) may import, and from
# each the names its __all__ lists; everything deeper is internal (tests/test_public_api.py).
PUBLIC_MODULES = (
    "hudi_core",
    "hudi_core.choices",
    "hudi_core.config",
    "hudi_core.distributed",
    "hudi_core.engine",
    "hudi_core.errors",
    "hudi_core.filesystems",
    "hudi_core.inspect",
    "hudi_core.io",
    "hudi_core.lock",
    "hudi_core.merge",
    "hudi_core.schema",
    "hudi_core.services",
    "hudi_core.storage",
    "hudi_core.sync",
    "hudi_core.table",
    "hudi_core.timeline",
)

__all__ = [
    "CompactionOrder",
    "QueryType",
    "TableType",
    "WriteOperation",
    "BootstrapError",
    "ConcurrentServiceError",
    "ConcurrentWriterError",
    "CorruptFileError",
    "HudiError",
    "HudiTable",
    "Instant",
    "InstantTimeError",
    "InternalError",
    "InvalidOptionError",
    "LockError",
    "MissingDataFileError",
    "MissingInstantFileError",
    "PartitionPathError",
    "PathOutsideTableError",
    "PrecombineFieldError",
    "IncrementalHistoryError",
    "QueryError",
    "RecordKeyError",
    "ScanStatistics",
    "SchemaError",
    "ServiceError",
    "State",
    "StorageUnreachableError",
    "SyncError",
    "TableConfigError",
    "TableExistsError",
    "TableNotFoundError",
    "TimelineError",
    "UnsupportedStorageError",
    "UnsupportedTableFeatureError",
    "UnsupportedTableVersionError",
    "WriteConflictError",
]
