"""Options of the lock that serializes timeline changes between writers and table services,
and of optimistic concurrency control (Apache Hudi's names)."""

from hudi_core.config.option import ConfigOption, parse_bool
from hudi_core.errors import InvalidOptionError

IN_PROCESS = "org.apache.hudi.client.transaction.lock.InProcessLockProvider"
FILE_SYSTEM = "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
DATABASE = "hudi_core.lock.DatabaseLockProvider"
STORAGE_BASED = "org.apache.hudi.client.transaction.lock.StorageBasedLockProvider"

PROVIDER = ConfigOption(
    "hoodie.write.lock.provider",
    IN_PROCESS,
    "The lock provider: InProcessLockProvider (threads of one process), "
    "FileSystemBasedLockProvider (a lock file under the table, created exclusively; processes "
    "or hosts on one local or HDFS file system, refused on object stores), "
    "StorageBasedLockProvider (.hoodie/.locks/table_lock.json kept by conditional writes on "
    "S3, GCS or Azure, the file Apache Hudi 1.1 writers use; see "
    "hoodie.write.lock.storage.*), or hudi_core.lock.DatabaseLockProvider (a row per table "
    "in a SQL database through SQLAlchemy; see hoodie.write.lock.database.url). Short names "
    "in_process, file_system, storage and database are accepted too.",
)
WAIT_TIME_MS = ConfigOption(
    "hoodie.write.lock.wait_time_ms",
    60000,
    "How long one attempt to take the lock waits for its holder before retrying.",
    parse=int,
)
WAIT_BETWEEN_RETRIES_MS = ConfigOption(
    "hoodie.write.lock.wait_time_ms_between_retry",
    1000,
    "Pause between two polls of a lock held by someone else.",
    parse=int,
)
NUM_RETRIES = ConfigOption(
    "hoodie.write.lock.num_retries",
    15,
    "Attempts (each up to hoodie.write.lock.wait_time_ms) before taking the lock fails.",
    parse=int,
)
HEARTBEAT_INTERVAL_MS = ConfigOption(
    "hoodie.write.lock.heartbeat_interval_ms",
    60000,
    "How often a holder renews its lock's expiry; a holder that stops renewing (crashed) "
    "loses the lock after hoodie.write.lock.filesystem.expire, or three intervals (the "
    "storage-based lock: hoodie.write.lock.storage.*).",
    parse=int,
)
FILESYSTEM_PATH = ConfigOption(
    "hoodie.write.lock.filesystem.path",
    None,
    "FileSystemBasedLockProvider: the folder of the lock file (default: the table's .hoodie).",
)
FILESYSTEM_EXPIRE = ConfigOption(
    "hoodie.write.lock.filesystem.expire",
    0,
    "Minutes after its last renewal at which a held lock counts as abandoned and is taken "
    "over (0: three heartbeat intervals). Applies to the file-system and database locks.",
    parse=int,
)
DATABASE_URL = ConfigOption(
    "hoodie.write.lock.database.url",
    None,
    "DatabaseLockProvider: the SQLAlchemy URL of the lock database (default: the HUDI_LOCK_DB_URL "
    "environment variable).",
)
DATABASE_TABLE = ConfigOption(
    "hoodie.write.lock.database.table",
    "hudi_table_locks",
    "DatabaseLockProvider: the table holding a lock row per Hudi table (created if missing).",
)
STORAGE_VALIDITY_TIMEOUT_SECS = ConfigOption(
    "hoodie.write.lock.storage.validity.timeout.secs",
    300,
    "StorageBasedLockProvider: seconds each take or renewal of the lock is valid for; a hold "
    "not renewed by then (its holder died) is taken over. At least 10, and at least 10 times "
    "hoodie.write.lock.storage.renew.interval.secs (Apache Hudi's rule).",
    parse=int,
)
STORAGE_RENEW_INTERVAL_SECS = ConfigOption(
    "hoodie.write.lock.storage.renew.interval.secs",
    30,
    "StorageBasedLockProvider: seconds between two renewals of a held lock "
    "(hoodie.write.lock.storage.heartbeat.poll.secs, its former name, is read too).",
    parse=int,
    alternatives=("hoodie.write.lock.storage.heartbeat.poll.secs",),
)
CONCURRENCY_MODE = ConfigOption(
    "hoodie.write.concurrency.mode",
    "SINGLE_WRITER",
    "SINGLE_WRITER, or OPTIMISTIC_CONCURRENCY_CONTROL for several writers on one table: "
    "compaction may be planned while writes run, failed writes are rolled back lazily (by "
    "heartbeat), and a commit that touched a file group another instant changed meanwhile fails. "
    "NON_BLOCKING_CONCURRENCY_CONTROL (merge-on-read tables with the bucket index): as "
    "optimistic, but writes that only append logs never conflict with each other or with a "
    "compaction; each commit places its log files after those committed before it.",
    choices=(
        "SINGLE_WRITER",
        "OPTIMISTIC_CONCURRENCY_CONTROL",
        "NON_BLOCKING_CONCURRENCY_CONTROL",
    ),
)

# Early conflict detection (Apache Hudi 0.13+; the names of RFC-56's first draft, under
# hoodie.write.lock., are read too). Markers here are always direct: the strategies for them.
SIMPLE_DETECTION = "org.apache.hudi.table.marker.SimpleDirectMarkerBasedDetectionStrategy"
TRANSACTION_DETECTION = (
    "org.apache.hudi.table.marker.SimpleTransactionDirectMarkerBasedDetectionStrategy"
)
TIMELINE_SERVER_DETECTION = (
    "org.apache.hudi.timeline.service.handlers.marker.AsyncTimelineServerBasedDetectionStrategy"
)
_MARKER = "org.apache.hudi.table.marker."
_TRANSACTION = "org.apache.hudi.client.transaction."
# Names of RFC-56's draft (and of pre-release builds), read as the released classes.
_DRAFT_NAMES = {
    f"{package}Simple{kind}DirectMarkerBasedEarlyConflictDetectionStrategy": released
    for package in (_MARKER, _TRANSACTION)
    for kind, released in (("", SIMPLE_DETECTION), ("Transaction", TRANSACTION_DETECTION))
}


def parse_detection_strategy(raw: str) -> str:
    """An early conflict detection strategy, as the class name Apache Hudi releases have
    (a released class may be given by its simple name too)."""
    name = raw.strip()
    for released in (SIMPLE_DETECTION, TRANSACTION_DETECTION):
        if name in (released, released.rsplit(".", 1)[1]):
            return released
    if name in _DRAFT_NAMES:
        return _DRAFT_NAMES[name]
    supported = f"{SIMPLE_DETECTION} (the default) or {TRANSACTION_DETECTION}"
    if "TimelineServer" in name or "AsyncTimeline" in name:
        raise InvalidOptionError(
            "timeline-server-based early conflict detection is not supported: markers here are "
            f"direct (hoodie.write.markers.type=DIRECT); use {supported}"
        )
    raise InvalidOptionError(f"not an early conflict detection strategy; use {supported}")


EARLY_CONFLICT_DETECTION_ENABLE = ConfigOption(
    "hoodie.write.concurrency.early.conflict.detection.enable",
    False,
    "OPTIMISTIC_CONCURRENCY_CONTROL only (ignored otherwise, as in Apache Hudi): fail a write "
    "with WriteConflictError before it writes any file when a live writer's markers name one "
    "of its file groups (hoodie.write.lock.early.conflict.detection.enable is read too).",
    parse=parse_bool,
    alternatives=("hoodie.write.lock.early.conflict.detection.enable",),
)
EARLY_CONFLICT_DETECTION_STRATEGY = ConfigOption(
    "hoodie.write.concurrency.early.conflict.detection.strategy",
    SIMPLE_DETECTION,
    "SimpleDirectMarkerBasedDetectionStrategy (live writers' markers) or "
    "SimpleTransactionDirectMarkerBasedDetectionStrategy (under the table lock, and commits "
    "completed since the write started too); timeline-server strategies are not supported "
    "(hoodie.write.lock.early.conflict.detection.strategy is read too).",
    parse=parse_detection_strategy,
    alternatives=("hoodie.write.lock.early.conflict.detection.strategy",),
)
EARLY_CONFLICT_CHECK_COMMIT_CONFLICT = ConfigOption(
    "hoodie.write.concurrency.early.conflict.check.commit.conflict",
    False,
    "Early conflict detection also fails a write on the instants completed (or compactions "
    "and clusterings planned) since it started that changed its file groups; always on with "
    "the transaction strategy.",
    parse=parse_bool,
    alternatives=("hoodie.write.lock.early.conflict.check.commit",),
)
