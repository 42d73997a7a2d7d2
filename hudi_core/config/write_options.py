"""Options of a write: the operation, pre-combining, record sizing and the failure policy."""

from hudi_core.choices import TableType, WriteOperation
from hudi_core.config.option import ConfigOption, parse_bool
from hudi_core.errors import InvalidOptionError
from hudi_core.model.file_names import LOG_SUFFIX_CHARS, is_log_suffix


def _parse_log_suffix(raw: str) -> str:
    """A writer's log suffix: letters, digits and '-' only ('_', '.' and '/' would break the
    log file names Apache Hudi and hudi-rs parse)."""
    suffix = raw.strip()
    if not suffix:
        raise InvalidOptionError(
            f"a log suffix is one or more of {LOG_SUFFIX_CHARS}; leave the option unset for none"
        )
    if not is_log_suffix(suffix):
        raise InvalidOptionError(f"a log suffix may hold only {LOG_SUFFIX_CHARS}")
    return suffix


OPERATION = ConfigOption(
    "hoodie.datasource.write.operation",
    WriteOperation.UPSERT,
    "What a write does: upsert, insert, bulk_insert, delete, insert_overwrite, "
    "insert_overwrite_table or delete_partition.",
    parse=WriteOperation,
    choices=tuple(WriteOperation),
)
TABLE_TYPE = ConfigOption(
    "hoodie.datasource.write.table.type",
    TableType.COPY_ON_WRITE,
    "Type of the table a Spark write creates when none exists: COPY_ON_WRITE or MERGE_ON_READ.",
    parse=TableType,
    choices=tuple(TableType),
)
PRECOMBINE_FIELD = ConfigOption(
    "hoodie.datasource.write.precombine.field",
    None,
    "Ordering field for this write; defaults to the table's hoodie.table.precombine.field.",
)
RECORD_KEY_FIELD = ConfigOption(
    "hoodie.datasource.write.recordkey.field",
    None,
    "Record key fields for this write; must agree with the table's hoodie.table.recordkey.fields.",
)
PARTITION_PATH_FIELD = ConfigOption(
    "hoodie.datasource.write.partitionpath.field",
    None,
    "Partition fields for this write; must agree with the table's hoodie.table.partition.fields.",
)
PAYLOAD_CLASS = ConfigOption(
    "hoodie.datasource.write.payload.class",
    None,
    "Record payload class for this write; defaults to the table's hoodie.compaction.payload.class.",
)
COMBINE_BEFORE_INSERT = ConfigOption(
    "hoodie.combine.before.insert",
    False,
    "Reduce duplicate keys within a batch before insert / bulk_insert.",
    parse=parse_bool,
)
COMBINE_BEFORE_UPSERT = ConfigOption(
    "hoodie.combine.before.upsert",
    True,
    "Reduce duplicate keys within a batch before upsert.",
    parse=parse_bool,
)
COMBINE_BEFORE_DELETE = ConfigOption(
    "hoodie.combine.before.delete",
    True,
    "Reduce duplicate keys within a batch before delete.",
    parse=parse_bool,
)
INSERT_DROP_DUPLICATES = ConfigOption(
    "hoodie.datasource.write.insert.drop.duplicates",
    False,
    "On insert, drop incoming records whose key already exists in the table.",
    parse=parse_bool,
)
RECORD_SIZE_ESTIMATE = ConfigOption(
    "hoodie.copyonwrite.record.size.estimate",
    1024,
    "Average record size in bytes assumed until a commit large enough to measure exists.",
    parse=int,
)
RECORD_SIZE_ESTIMATION_THRESHOLD = ConfigOption(
    "hoodie.record.size.estimation.threshold",
    1.0,
    "A commit is used to measure record size only if it wrote more than this fraction of "
    "the small file limit.",
    parse=float,
)
INSERT_SPLIT_SIZE = ConfigOption(
    "hoodie.copyonwrite.insert.split.size",
    500000,
    "Inserts per new file group when auto split is off.",
    parse=int,
)
INSERT_AUTO_SPLIT = ConfigOption(
    "hoodie.copyonwrite.insert.auto.split",
    True,
    "Size new file groups from the max file size and the record size estimate.",
    parse=parse_bool,
)
BULK_INSERT_SORT_MODE = ConfigOption(
    "hoodie.bulkinsert.sort.mode",
    # NONE, Apache Hudi's default since 0.12.1: sorting by key halves a bulk_insert's speed and
    # only pays where keys follow the data's order (time-based keys) and a BLOOM index prunes
    # files by their key ranges; such tables ask for GLOBAL_SORT.
    "NONE",
    "Order of bulk_insert rows: NONE keeps input order within each partition; GLOBAL_SORT "
    "and PARTITION_SORT sort by partition, then record key (a file never spans partitions, so "
    "both give key-ordered files, whose key ranges let a BLOOM index skip them).",
    choices=("GLOBAL_SORT", "PARTITION_SORT", "NONE"),
)
SPARK_LOCAL_THRESHOLD_BYTES = ConfigOption(
    "hoodie.spark.local.threshold.bytes",
    32 << 20,
    "A Spark write whose input is at most this many bytes (source files, else Spark's size "
    "estimate of the DataFrame) runs on the driver with hudi_core's local engine: no Python "
    "worker, no shuffle, the same table. 0 sends every write through the executors. Also "
    "read from the Spark session's conf (SET hoodie.spark.local.threshold.bytes=...).",
    parse=int,
)
UPSERT_PARALLELISM = ConfigOption(
    "hoodie.upsert.shuffle.parallelism",
    0,
    "Partitions of the shuffles of an upsert on a distributed engine (Spark); 0 infers it "
    "from the input's partitions, at least the engine's default parallelism.",
    parse=int,
)
INSERT_PARALLELISM = ConfigOption(
    "hoodie.insert.shuffle.parallelism",
    0,
    "As hoodie.upsert.shuffle.parallelism, for insert and insert_overwrite.",
    parse=int,
)
BULK_INSERT_PARALLELISM = ConfigOption(
    "hoodie.bulkinsert.shuffle.parallelism",
    0,
    "As hoodie.upsert.shuffle.parallelism, for bulk_insert (its sort's partitions).",
    parse=int,
)
DELETE_PARALLELISM = ConfigOption(
    "hoodie.delete.shuffle.parallelism",
    0,
    "As hoodie.upsert.shuffle.parallelism, for delete.",
    parse=int,
)
ALLOW_EMPTY_COMMIT = ConfigOption(
    "hoodie.allow.empty.commit",
    True,
    "Complete a commit even when the batch is empty.",
    parse=parse_bool,
)
MARKERS_TYPE = ConfigOption(
    "hoodie.write.markers.type",
    "DIRECT",
    "How markers are kept; DIRECT writes one marker file per data file.",
    choices=("DIRECT",),
)
HEARTBEAT_INTERVAL_MS = ConfigOption(
    "hoodie.client.heartbeat.interval_in_ms",
    60000,
    "How often a running write or table service refreshes its heartbeat file.",
    parse=int,
)
HEARTBEAT_TOLERABLE_MISSES = ConfigOption(
    "hoodie.client.heartbeat.tolerable.misses",
    2,
    "Missed heartbeats after which a write or service attempt counts as dead.",
    parse=int,
)
PARTITIONS_TO_DELETE = ConfigOption(
    "hoodie.datasource.write.partitions.to.delete",
    None,
    "Comma-separated partition paths a delete_partition write removes.",
)
MERGE_ALLOW_DUPLICATE_ON_INSERTS = ConfigOption(
    "hoodie.merge.allow.duplicate.on.inserts",
    True,
    "Inserts topping up a small file keep duplicates of keys it holds instead of updating them.",
    parse=parse_bool,
)
ALLOW_OPERATION_METADATA_FIELD = ConfigOption(
    "hoodie.allow.operation.metadata.field",
    False,
    "Changelog mode: records carry _hoodie_operation (I, -U, U, D; a batch may bring its own, "
    "as a CDC source emits them). Merge-on-read keeps every change of a batch for incremental "
    "changelog reads (until compaction), copy-on-write each key's last change. Kept as a table "
    "property once a table is created with it.",
    parse=parse_bool,
)
LOG_DATA_BLOCK_FORMAT = ConfigOption(
    "hoodie.logfile.data.block.format",
    "avro",
    "Format of merge-on-read log data blocks: avro or parquet.",
    parse=lambda raw: raw.strip().lower(),
    choices=("AVRO", "PARQUET"),
)
SMALL_FILE_GROUP_CANDIDATES = ConfigOption(
    "hoodie.merge.small.file.group.candidates.limit",
    1,
    "Merge-on-read: log-free small file groups per partition that inserts may top up.",
    parse=int,
)
COMMIT_METADATA_KEY_PREFIX = ConfigOption(
    "hoodie.datasource.write.commitmeta.key.prefix",
    "_",
    "Write options whose keys start with this prefix are copied, key and value, into the "
    "commit's extraMetadata (compactions too); an empty prefix copies none.",
)
LOG_SUFFIX = ConfigOption(
    "hoodie.write.log.suffix",
    "",
    "Text this writer ends its log file names with "
    "(`.<fileId>_<baseTs>.log.<n>_<token>-<suffix>`), so that several writers' log files tell "
    "apart; letters, digits and '-' only. Empty: none.",
    parse=_parse_log_suffix,
)
STREAMING_CHECKPOINT_IDENTIFIER = ConfigOption(
    "hoodie.datasource.write.streaming.checkpoint.identifier",
    "default_single_writer",
    "The streaming sink's name for its query in each commit's _hudi_streaming_sink_checkpoint "
    "(batch id by identifier): give each query writing one table its own.",
)
