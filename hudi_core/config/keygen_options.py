"""Options the key generators read: which fields make the record key and partition path, how
the partition path is spelled, and how TimestampBasedKeyGenerator turns values into dates.

Names and defaults are Apache Hudi's (KeyGeneratorOptions, HoodieWriteConfig,
HoodieTableConfig, TimestampKeyGeneratorConfig of Hudi 0.14/0.15). Table properties
(`hoodie.table.*`) live in hoodie.properties; hive-style and url-encoding are stored there under
the write option's own key.
"""

from hudi_core.config.option import ConfigOption, parse_bool

# Declared with the other table properties / write options; the key generators read them too.
from hudi_core.config.table_options import HIVE_STYLE_PARTITIONING, URL_ENCODE_PARTITIONING
from hudi_core.config.table_options import KEY_GENERATOR_CLASS as TABLE_KEYGENERATOR_CLASS
from hudi_core.config.table_options import PARTITION_FIELDS as TABLE_PARTITION_FIELDS
from hudi_core.config.table_options import RECORD_KEY_FIELDS as TABLE_RECORDKEY_FIELDS
from hudi_core.config.write_options import PARTITION_PATH_FIELD as PARTITIONPATH_FIELD
from hudi_core.config.write_options import RECORD_KEY_FIELD as RECORDKEY_FIELD

_TIMEBASED = "hoodie.keygen.timebased."
_OLD_TIMEBASED = "hoodie.deltastreamer.keygen.timebased."

KEYGEN_TYPES = (
    "SIMPLE",
    "COMPLEX",
    "TIMESTAMP",
    "CUSTOM",
    "NON_PARTITION",
    "GLOBAL_DELETE",
    "SIMPLE_AVRO",
    "COMPLEX_AVRO",
    "TIMESTAMP_AVRO",
    "CUSTOM_AVRO",
    "NON_PARTITION_AVRO",
    "GLOBAL_DELETE_AVRO",
)
TIMESTAMP_TYPES = (
    "UNIX_TIMESTAMP",
    "DATE_STRING",
    "MIXED",
    "EPOCHMILLISECONDS",
    "EPOCHMICROSECONDS",
    "SCALAR",
)
TIME_UNITS = ("NANOSECONDS", "MICROSECONDS", "MILLISECONDS", "SECONDS", "MINUTES", "HOURS", "DAYS")

TABLE_KEYGENERATOR_TYPE = ConfigOption(
    "hoodie.table.keygenerator.type",
    None,
    "Table property of Hudi 1.x tables (table version 8+): the key generator by type name; "
    "hoodie.table.keygenerator.class wins when both are stored.",
    choices=KEYGEN_TYPES,
)

# --- write options (record key / partition fields are declared in write_options) ------
KEYGENERATOR_CLASS = ConfigOption(
    "hoodie.datasource.write.keygenerator.class",
    None,
    "Key generator class; inferred from the key and partition fields when not set.",
)
KEYGENERATOR_TYPE = ConfigOption(
    "hoodie.datasource.write.keygenerator.type",
    "SIMPLE",
    "Key generator by type name, used only when set and no class is given.",
    choices=KEYGEN_TYPES,
)
CONSISTENT_LOGICAL_TIMESTAMP = ConfigOption(
    "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled",
    False,
    "Render timestamp key/partition values as java.sql.Timestamp strings (and use epoch millis in "
    "TimestampBasedKeyGenerator) instead of the raw epoch count of the Avro logical type.",
    parse=parse_bool,
)
COMPLEX_KEYGEN_NEW_ENCODING = ConfigOption(
    "hoodie.write.complex.keygen.new.encoding",
    False,
    "ComplexKeyGenerator with one record key field: false writes <field>:<value> (Hudi 0.14.0 "
    "and 0.14.2+/0.15.1+), true writes the bare <value> (what Hudi 0.14.1 and 0.15.0 wrote).",
    parse=parse_bool,
)

# --- TimestampBasedKeyGenerator (TimestampKeyGeneratorConfig) -----------------------------
TIMESTAMP_TYPE = ConfigOption(
    _TIMEBASED + "timestamp.type",
    None,
    "How partition values are read as time: UNIX_TIMESTAMP, EPOCHMILLISECONDS, "
    "EPOCHMICROSECONDS, SCALAR (numbers), DATE_STRING or MIXED (strings).",
    choices=TIMESTAMP_TYPES,
    alternatives=(_OLD_TIMEBASED + "timestamp.type",),
)
SCALAR_TIME_UNIT = ConfigOption(
    _TIMEBASED + "timestamp.scalar.time.unit",
    "SECONDS",
    "Time unit of numeric values for timestamp type SCALAR (a java.util.concurrent.TimeUnit).",
    choices=TIME_UNITS,
    alternatives=(_OLD_TIMEBASED + "timestamp.scalar.time.unit",),
)
INPUT_DATE_FORMAT = ConfigOption(
    _TIMEBASED + "input.dateformat",
    "",
    "Joda-Time pattern(s) of string values, e.g. yyyy-MM-dd'T'HH:mm:ss.SSSZ; several are "
    "separated by the list delimiter and tried in order.",
    alternatives=(_OLD_TIMEBASED + "input.dateformat",),
)
INPUT_DATE_FORMAT_LIST_DELIMITER = ConfigOption(
    _TIMEBASED + "input.dateformat.list.delimiter.regex",
    ",",
    "Regular expression separating the input date formats.",
    alternatives=(_OLD_TIMEBASED + "input.dateformat.list.delimiter.regex",),
)
INPUT_TIMEZONE = ConfigOption(
    _TIMEBASED + "input.timezone",
    "UTC",
    "Time zone of string values without an offset. When unset, Hudi uses the offset in the "
    "value, else the JVM zone (taken as UTC here).",
    alternatives=(_OLD_TIMEBASED + "input.timezone",),
)
OUTPUT_DATE_FORMAT = ConfigOption(
    _TIMEBASED + "output.dateformat",
    "",
    "Joda-Time pattern of the partition path, e.g. yyyy/MM/dd.",
    alternatives=(_OLD_TIMEBASED + "output.dateformat",),
)
OUTPUT_TIMEZONE = ConfigOption(
    _TIMEBASED + "output.timezone",
    "UTC",
    "Time zone the partition path is written in. When unset, Hudi uses the zone parsed from a "
    "string value, else the JVM zone (taken as UTC here).",
    alternatives=(_OLD_TIMEBASED + "output.timezone",),
)
TIMEZONE = ConfigOption(
    _TIMEBASED + "timezone",
    "UTC",
    "Deprecated: one time zone for both input and output; when set it wins over both.",
    alternatives=(_OLD_TIMEBASED + "timezone",),
)
DATE_TIME_PARSER_CLASS = ConfigOption(
    "hoodie.keygen.datetime.parser.class",
    "org.apache.hudi.keygen.parser.HoodieDateTimeParser",
    "Date time parser of TimestampBasedKeyGenerator; only Hudi's default parser is supported.",
    alternatives=("hoodie.deltastreamer.keygen.datetime.parser.class",),
)

__all__ = [
    "COMPLEX_KEYGEN_NEW_ENCODING",
    "CONSISTENT_LOGICAL_TIMESTAMP",
    "DATE_TIME_PARSER_CLASS",
    "HIVE_STYLE_PARTITIONING",
    "INPUT_DATE_FORMAT",
    "INPUT_DATE_FORMAT_LIST_DELIMITER",
    "INPUT_TIMEZONE",
    "KEYGENERATOR_CLASS",
    "KEYGENERATOR_TYPE",
    "OUTPUT_DATE_FORMAT",
    "OUTPUT_TIMEZONE",
    "PARTITIONPATH_FIELD",
    "RECORDKEY_FIELD",
    "SCALAR_TIME_UNIT",
    "TABLE_KEYGENERATOR_CLASS",
    "TABLE_KEYGENERATOR_TYPE",
    "TABLE_PARTITION_FIELDS",
    "TABLE_RECORDKEY_FIELDS",
    "TIMEZONE",
    "TIMESTAMP_TYPE",
    "URL_ENCODE_PARTITIONING",
]
