"""The one exception hierarchy of hudi_core.

Messages say what was wrong and what to do about it, e.g.
"record key field 'uuid' is null in 3 rows; first at row 17".
"""


class HudiError(Exception):
    """Root of every error hudi_core raises on purpose."""


class TableNotFoundError(HudiError):
    """No Hudi table (no .hoodie/hoodie.properties) at the given path."""


class TableExistsError(HudiError):
    """A table already exists where a new one was to be created."""


class TableConfigError(HudiError):
    """hoodie.properties is missing a key, holds a bad value, or fails its checksum."""


class UnsupportedTableVersionError(TableConfigError):
    """The table was written in a table version this library does not read or write."""


class UnsupportedTableFeatureError(TableConfigError):
    """The table uses a feature this library cannot read or write correctly (an Apache
    Hudi-bootstrapped table, say)."""


class InvalidOptionError(HudiError):
    """A hoodie.* option has a value outside what it accepts."""


class SchemaError(HudiError):
    """An input batch's schema conflicts with the table's schema."""


class RecordKeyError(HudiError):
    """Key generation failed: a record key or partition field is missing or null."""


class QueryError(HudiError):
    """A read asks for what the table cannot answer: a column it does not have, a filter
    with an unknown operator, or a filter value that does not fit its column's type."""


class IncrementalHistoryError(QueryError):
    """An incremental or streaming read of commits whose history is gone: archived, or their
    files cleaned, before the read got to them."""


class PrecombineFieldError(HudiError):
    """The precombine (ordering) field is missing from an input batch."""


class TimelineError(HudiError):
    """An instant transition is not allowed (already exists, wrong state, time not increasing)."""


class InstantTimeError(TimelineError, ValueError):
    """A text is not an instant time (yyyyMMddHHmmssSSS, or a date-time where one is accepted);
    a ValueError too, as parsing a malformed value is."""


class CorruptFileError(HudiError):
    """A file under the table does not have the format its name promises."""


class MissingInstantFileError(CorruptFileError, FileNotFoundError):
    """A timeline file that should be there is not (a FileNotFoundError too, for callers
    that treat an absent file as "no content")."""


class MissingDataFileError(CorruptFileError, FileNotFoundError):
    """A data file the table's listing named is gone (a FileNotFoundError too)."""


class ConcurrentServiceError(HudiError):
    """Another process is running the same table service on the same instant right now."""


class ConcurrentWriterError(HudiError):
    """Another writer is writing the table right now, and the table is in single-writer mode."""


class ServiceError(HudiError):
    """A table service (compaction, clean, archival, rollback, savepoint, restore) cannot run
    as asked: nothing to run, or the table's state forbids it (a pending restore blocks every
    change until it is run again)."""


class LockError(HudiError):
    """The table's lock could not be taken in time, or its holder lost it."""


class WriteConflictError(HudiError):
    """Another instant changed a file group this write changed, after this write started;
    the write was rolled back and can be retried."""


class SyncError(HudiError):
    """Hive metastore sync or partition commit failed: a bad identifier, a schema change Hive
    cannot follow, or the metastore refused an operation."""


class PathOutsideTableError(HudiError):
    """A location (in a plan, or registered in a metastore) is not under the table's base
    path, so this table cannot own the file or folder it names."""


class UnsupportedStorageError(HudiError):
    """A location's scheme names a file system hudi_core cannot reach (supported: local,
    s3a/s3/s3n, gs, abfs/abfss, hdfs), or a feature that is unsafe on that store."""


class BootstrapError(HudiError):
    """A bootstrap cannot run: the table already has commits, the source dataset holds no
    parquet files, or its files lack the record key fields."""


class InternalError(HudiError):
    """hudi_core broke one of its own invariants: a bug to report, not a problem with the
    table or the input. The write or service was stopped (and rolled back) before it
    committed anything inconsistent."""


class PartitionPathError(RecordKeyError):
    """A partition path is not safe as folders under the table: it would leave its partition
    folder, name the metadata folder, or be unlistable by readers. Nothing was written."""


class StorageUnreachableError(HudiError, OSError):
    """The file system of a table's location could not be reached, or refused the request (a
    wrong endpoint, no network, bad credentials): names the location and the settings to
    check. An OSError too, as the failed call's own error was."""
