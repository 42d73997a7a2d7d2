"""Options of the lock that serializes timeline changes between writers and table services,
and of optimistic concurrency control (Apache Hudi's names)."""

from hudi_core.config.option import ConfigOption

IN_PROCESS = "org.apache.hudi.client.transaction.lock.InProcessLockProvider"
FILE_SYSTEM = "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
DATABASE = "hudi_core.lock.DatabaseLockProvider"

PROVIDER = ConfigOption(
    "hoodie.write.lock.provider",
    IN_PROCESS,
    "The lock provider: InProcessLockProvider (threads of one process), "
    "FileSystemBasedLockProvider (a lock file under the table; several processes or hosts on "
    "one file system), or hudi_core.lock.DatabaseLockProvider (a row per table in a SQL "
    "database through SQLAlchemy; see hoodie.write.lock.database.url). Short names "
    "in_process, file_system and database are accepted too.",
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
    "loses the lock after hoodie.write.lock.filesystem.expire, or three intervals.",
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
    "environment variable; Airflow tasks get Airflow's metadata database when neither is set).",
)
DATABASE_TABLE = ConfigOption(
    "hoodie.write.lock.database.table",
    "hudi_table_locks",
    "DatabaseLockProvider: the table holding a lock row per Hudi table (created if missing).",
)
CONCURRENCY_MODE = ConfigOption(
    "hoodie.write.concurrency.mode",
    "SINGLE_WRITER",
    "SINGLE_WRITER, or OPTIMISTIC_CONCURRENCY_CONTROL for several writers on one table: "
    "compaction may be planned while writes run, failed writes are rolled back lazily (by "
    "heartbeat), and a commit that touched a file group another instant changed meanwhile fails.",
    choices=("SINGLE_WRITER", "OPTIMISTIC_CONCURRENCY_CONTROL"),
)
