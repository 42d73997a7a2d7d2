"""Options stored in `.hoodie/hoodie.properties`: they define the table and outlive any writer."""

from hudi_core.choices import TableType
from hudi_core.config.option import ConfigOption, parse_bool, parse_list

TABLE_NAME = ConfigOption("hoodie.table.name", None, "Name of the table (required).")
DATABASE_NAME = ConfigOption(
    "hoodie.database.name", None, "Database the table belongs to; part of the checksum."
)
TABLE_TYPE = ConfigOption(
    "hoodie.table.type",
    TableType.COPY_ON_WRITE,
    "COPY_ON_WRITE rewrites base files on update; MERGE_ON_READ appends log files.",
    parse=TableType,
    choices=tuple(TableType),
)
TABLE_VERSION = ConfigOption(
    "hoodie.table.version", 6, "On-disk format version; this library reads and writes 6.", int
)
TIMELINE_LAYOUT_VERSION = ConfigOption(
    "hoodie.timeline.layout.version", 1, "Timeline file layout; table version 6 uses 1.", int
)
RECORD_KEY_FIELDS: ConfigOption[list[str]] = ConfigOption(
    "hoodie.table.recordkey.fields",
    [],
    "Comma-separated fields that make up the record key.",
    parse_list,
)
PARTITION_FIELDS: ConfigOption[list[str]] = ConfigOption(
    "hoodie.table.partition.fields",
    [],
    "Comma-separated fields the partition path is built from (empty: non-partitioned).",
    parse_list,
)
PRECOMBINE_FIELD = ConfigOption(
    "hoodie.table.precombine.field",
    None,
    "Ordering field: of two records with the same key, the one with the larger value wins.",
)
ORDERING_GROUPS = ConfigOption(
    "hoodie.table.ordering.groups",
    None,
    "Ordering groups of a multi-stream table (_ts1:name,price;_ts2:age: each group's columns "
    "ordered by its own field), given as the precombine field. Kept apart from "
    "hoodie.table.precombine.field, which Apache Hudi's readers take for one field name.",
)
KEY_GENERATOR_CLASS = ConfigOption(
    "hoodie.table.keygenerator.class",
    None,
    "Apache Hudi key generator class that turns rows into record keys and partition paths.",
)
HIVE_STYLE_PARTITIONING = ConfigOption(
    "hoodie.datasource.write.hive_style_partitioning",
    False,
    "Partition folders are named field=value instead of value.",
    parse_bool,
)
URL_ENCODE_PARTITIONING = ConfigOption(
    "hoodie.datasource.write.partitionpath.urlencode",
    False,
    "Escape characters in partition values that are unsafe in paths (%XX).",
    parse_bool,
)
DROP_PARTITION_COLUMNS = ConfigOption(
    "hoodie.datasource.write.drop.partition.columns",
    False,
    "Drop partition columns from data files; unsupported (Apache Hudi readers need them).",
    parse_bool,
)
POPULATE_META_FIELDS = ConfigOption(
    "hoodie.populate.meta.fields",
    True,
    "Fill the _hoodie_* meta columns; when false they stay null and keys are recomputed.",
    parse_bool,
)
ARCHIVELOG_FOLDER = ConfigOption(
    "hoodie.archivelog.folder", "archived", "Folder under .hoodie holding archived instants."
)
TIMELINE_TIMEZONE = ConfigOption(
    "hoodie.table.timeline.timezone",
    "LOCAL",
    "Time zone instant times are generated in.",
    choices=("LOCAL", "UTC"),
)
BASE_FILE_FORMAT = ConfigOption(
    "hoodie.table.base.file.format", "PARQUET", "Base file format.", choices=("PARQUET",)
)
CREATE_SCHEMA = ConfigOption(
    "hoodie.table.create.schema", None, "Avro schema (JSON) the table was created with."
)
PAYLOAD_CLASS = ConfigOption(
    "hoodie.compaction.payload.class",
    "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
    "Record payload class that decides how two versions of a record merge.",
)
RECORD_MERGER_STRATEGY = ConfigOption(
    "hoodie.compaction.record.merger.strategy",
    "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
    "Record merger strategy id; Apache Hudi's default (payload-based merging) is the one used.",
)
CHECKSUM = ConfigOption(
    "hoodie.table.checksum", None, "CRC32 of 'database.table', guarding the properties file.", int
)
METADATA_PARTITIONS: ConfigOption[list[str]] = ConfigOption(
    "hoodie.table.metadata.partitions",
    [],
    "Partitions of Apache Hudi's metadata table (files, ...) that are ready; this library does "
    "not keep a metadata table and removes one before its first change to a table.",
    parse_list,
)
METADATA_PARTITIONS_INFLIGHT: ConfigOption[list[str]] = ConfigOption(
    "hoodie.table.metadata.partitions.inflight",
    [],
    "Metadata table partitions Apache Hudi was still building; removed with the metadata table.",
    parse_list,
)
BOOTSTRAP_BASE_PATH = ConfigOption(
    "hoodie.bootstrap.base.path",
    None,
    "The source dataset a table was bootstrapped from; its skeleton files are read with that "
    "dataset's files.",
)
HFILE_BOOTSTRAP_INDEX = "org.apache.hudi.common.bootstrap.index.HFileBootstrapIndex"
BOOTSTRAP_INDEX_CLASS = ConfigOption(
    "hoodie.bootstrap.index.class",
    HFILE_BOOTSTRAP_INDEX,
    "The bootstrap index mapping skeleton files to source files (HFileBootstrapIndex, under "
    ".hoodie/.aux/.bootstrap/).",
)
