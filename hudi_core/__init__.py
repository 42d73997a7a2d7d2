"""Apache Hudi's table format (table version 6) as a pure-Python library.

from hudi_core import HudiTable
table = HudiTable.create(path, name="trips", record_key_fields=["uuid"],
                         partition_fields=["city"], precombine_field="ts")
table.write(arrow_table, operation="upsert")
table.read()
"""

from hudi_core import config  # noqa: F401  (declares every option)
from hudi_core.errors import (
    ConcurrentServiceError,
    ConcurrentWriterError,
    CorruptFileError,
    HudiError,
    InvalidOptionError,
    LockError,
    MissingDataFileError,
    MissingInstantFileError,
    PartitionPathError,
    PrecombineFieldError,
    RecordKeyError,
    SchemaError,
    ServiceError,
    SyncError,
    TableConfigError,
    TableExistsError,
    TableNotFoundError,
    TimelineError,
    UnsupportedTableFeatureError,
    UnsupportedTableVersionError,
    WriteConflictError,
)
from hudi_core.table import HudiTable
from hudi_core.timeline import Instant, State

__all__ = [
    "ConcurrentServiceError",
    "ConcurrentWriterError",
    "CorruptFileError",
    "HudiError",
    "HudiTable",
    "Instant",
    "InvalidOptionError",
    "LockError",
    "MissingDataFileError",
    "MissingInstantFileError",
    "PartitionPathError",
    "PrecombineFieldError",
    "RecordKeyError",
    "SchemaError",
    "ServiceError",
    "State",
    "SyncError",
    "TableConfigError",
    "TableExistsError",
    "TableNotFoundError",
    "TimelineError",
    "UnsupportedTableFeatureError",
    "UnsupportedTableVersionError",
    "WriteConflictError",
]
