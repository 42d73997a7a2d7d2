"""Options of the Hive metastore sync (Apache Hudi's hoodie.datasource.hive_sync.* names)."""

from hudi_core.config.option import ConfigOption, parse_bool, parse_list

ENABLE = ConfigOption(
    "hoodie.datasource.hive_sync.enable",
    False,
    "Register the table and its partitions in a Hive metastore after each commit.",
    parse_bool,
    alternatives=("hoodie.datasource.meta.sync.enable",),
)
MODE = ConfigOption(
    "hoodie.datasource.hive_sync.mode",
    "spark",
    "How to reach the metastore: hms (its thrift API at metastore.uris), jdbc (HiveQL over "
    "HiveServer2 or the Spark Thrift Server at jdbcurl), or spark (the metastore embedded in "
    "the Spark driver: Spark's Hive catalog, Derby under the working directory; no server).",
    parse=str.lower,
    choices=("HMS", "JDBC", "SPARK"),
)
DATABASE = ConfigOption(
    "hoodie.datasource.hive_sync.database",
    "default",
    "Metastore database of the synced tables (created if missing and auto_create_database).",
)
TABLE = ConfigOption(
    "hoodie.datasource.hive_sync.table",
    None,
    "Metastore table name (default: hoodie.table.name); merge-on-read tables become "
    "<table>_ro and <table>_rt.",
)
METASTORE_URIS = ConfigOption(
    "hoodie.datasource.hive_sync.metastore.uris",
    "thrift://localhost:9083",
    "hms mode: the metastore's thrift URI (comma-separated URIs are tried in order).",
)
JDBC_URL = ConfigOption(
    "hoodie.datasource.hive_sync.jdbcurl",
    "jdbc:hive2://localhost:10000",
    "jdbc mode: the HiveServer2 URL (jdbc:hive2://host:port[/database]).",
)
USERNAME = ConfigOption(
    "hoodie.datasource.hive_sync.username", "hive", "jdbc mode: user name for HiveServer2."
)
PASSWORD = ConfigOption(
    "hoodie.datasource.hive_sync.password", "hive", "jdbc mode: password for HiveServer2."
)
PARTITION_FIELDS = ConfigOption(
    "hoodie.datasource.hive_sync.partition_fields",
    None,
    "Comma-separated partition columns of the Hive table (default: the table's partition fields).",
    parse_list,
)
PARTITION_EXTRACTOR_CLASS = ConfigOption(
    "hoodie.datasource.hive_sync.partition_extractor_class",
    None,
    "Turns a partition path into partition values: org.apache.hudi.hive."
    "MultiPartKeysValueExtractor, HiveStylePartitionValueExtractor, "
    "SinglePartPartitionValueExtractor, SlashEncodedDayPartitionValueExtractor, "
    "SlashEncodedHourPartitionValueExtractor or NonPartitionedExtractor (default, as Apache "
    "Hudi infers it: NonPartitionedExtractor without partition fields; with one, "
    "HiveStylePartitionValueExtractor on hive-style tables, else "
    "SinglePartPartitionValueExtractor; with several, MultiPartKeysValueExtractor).",
)
AUTO_CREATE_DATABASE = ConfigOption(
    "hoodie.datasource.hive_sync.auto_create_database",
    True,
    "Create the database when it does not exist (else the sync fails naming it).",
    parse_bool,
)
SKIP_RO_SUFFIX = ConfigOption(
    "hoodie.datasource.hive_sync.skip_ro_suffix",
    False,
    "Merge-on-read: name the read-optimized table <table> instead of <table>_ro.",
    parse_bool,
)
SYNC_AS_DATASOURCE = ConfigOption(
    "hoodie.datasource.hive_sync.sync_as_datasource",
    True,
    "Add the spark.sql.sources.* table properties so Spark reads the tables as a hudi data "
    "source table.",
    parse_bool,
)
SUPPORT_TIMESTAMP = ConfigOption(
    "hoodie.datasource.hive_sync.support_timestamp",
    False,
    "Declare timestamp-micros/millis columns as Hive timestamp (default: bigint, as Hive "
    "reads them from parquet).",
    parse_bool,
)
SCHEMA_STRING_LENGTH_THRESHOLD = ConfigOption(
    "hoodie.datasource.hive_sync.schema_string_length_thresh",
    4000,
    "Longest Spark schema JSON chunk per spark.sql.sources.schema.part.N table property.",
    parse=int,
)
TABLE_PROPERTIES = ConfigOption(
    "hoodie.datasource.hive_sync.table_properties",
    None,
    "Extra table properties, one key=value per line.",
)
SERDE_PROPERTIES = ConfigOption(
    "hoodie.datasource.hive_sync.serde_properties",
    None,
    "Extra serde properties, one key=value per line.",
)
BATCH_NUM = ConfigOption(
    "hoodie.datasource.hive_sync.batch_num",
    1000,
    "Partitions added, altered or dropped per metastore call or statement.",
    parse=int,
)
