"""The parts of Hive sync and partition commit that need no server: partition value
extractors (under Apache Hudi's class names), HiveQL identifiers and literals, the Arrow ->
Hive and Arrow -> Spark type mappings, schema evolution checks, durations, partition times
and commit policies."""

from __future__ import annotations

import datetime
import json

import pyarrow as pa
import pytest

from hudi_core.config.option import Options
from hudi_core.errors import InvalidOptionError, SyncError
from hudi_core.schema.meta_fields import META_FIELDS
from hudi_core.schema.to_arrow import avro_to_arrow
from hudi_core.sync.hive_schema import evolved_columns, hive_columns, hive_type
from hudi_core.sync.identifiers import MAX_NAME_LENGTH, checked_name, literal, quoted
from hudi_core.sync.metastore import Column
from hudi_core.sync.partition_commit import commit_policies, parse_duration_ms
from hudi_core.sync.partition_times import PartitionTimeExtractor
from hudi_core.sync.partition_values import partition_value_extractor
from hudi_core.sync.spark_schema import spark_schema_json

HIVE = "org.apache.hudi.hive."
KIND = "sink.partition-commit.policy.kind"
ENABLE = "hoodie.datasource.hive_sync.enable"
PATTERN = "partition.time-extractor.timestamp-pattern"
FORMATTER = "partition.time-extractor.timestamp-formatter"
ZONE = "sink.partition-commit.watermark-time-zone"


def extract(class_name: str, path: str) -> list[str]:
    return partition_value_extractor(HIVE + class_name, [])(path)


def utc_ms(text: str) -> int:
    moment = datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.UTC)
    return int(moment.timestamp() * 1000)


# --- partition value extractors -------------------------------------------------------------


@pytest.mark.parametrize(
    ("class_name", "path", "values"),
    [
        ("MultiPartKeysValueExtractor", "a/b", ["a", "b"]),
        ("MultiPartKeysValueExtractor", "k1=a/k2=b", ["a", "b"]),
        ("MultiPartKeysValueExtractor", "k1=a/b", ["a", "b"]),
        ("MultiPartKeysValueExtractor", "", []),
        ("MultiPartKeysValueExtractor", "sf", ["sf"]),
        ("SinglePartPartitionValueExtractor", "a/b", ["a-b"]),
        ("SinglePartPartitionValueExtractor", "2024/01/02", ["2024-01-02"]),
        ("HiveStylePartitionValueExtractor", "dt=2024-01-01", ["2024-01-01"]),
        ("SlashEncodedDayPartitionValueExtractor", "2024/1/2", ["2024-01-02"]),
        ("SlashEncodedDayPartitionValueExtractor", "2024/12/31", ["2024-12-31"]),
        ("SlashEncodedDayPartitionValueExtractor", "year=2024/month=01/day=02", ["2024-01-02"]),
        ("SlashEncodedHourPartitionValueExtractor", "2024/1/2/3", ["2024-01-02-03"]),
        ("SlashEncodedHourPartitionValueExtractor", "y=2024/m=01/d=02/h=23", ["2024-01-02-23"]),
        ("NonPartitionedExtractor", "anything/at/all", []),
        ("NonPartitionedExtractor", "", []),
    ],
)
def test_extractor_values(class_name, path, values):
    assert extract(class_name, path) == values


def test_extractor_short_class_name_works_too():
    extractor = partition_value_extractor("MultiPartKeysValueExtractor", [])
    assert extractor("k1=a/k2=b") == ["a", "b"]


@pytest.mark.parametrize(
    ("class_name", "path", "message"),
    [
        ("MultiPartKeysValueExtractor", "k=a=b", "'k=a=b' of 'k=a=b' is not key=value"),
        ("MultiPartKeysValueExtractor", "x/k=", "'k=' of 'x/k=' is not key=value"),
        ("HiveStylePartitionValueExtractor", "a/b", "'a/b' is not in the form partition_key="),
        ("HiveStylePartitionValueExtractor", "k=a=b", "'k=a=b' is not in the form"),
        ("HiveStylePartitionValueExtractor", "dt=", "'dt=' is not in the form"),
        (
            "SlashEncodedDayPartitionValueExtractor",
            "ab/cd",
            "'ab/cd' is not in the form yyyy/mm/dd",
        ),
        ("SlashEncodedDayPartitionValueExtractor", "2024/01", "'2024/01' is not in the form"),
        ("SlashEncodedDayPartitionValueExtractor", "2024/01/02/03", "not in the form yyyy/mm/dd"),
        ("SlashEncodedDayPartitionValueExtractor", "ab/cd/ef", "'ab/cd/ef' is not a date"),
        ("SlashEncodedDayPartitionValueExtractor", "2024/02/30", "'2024/02/30' is not a date"),
        ("SlashEncodedDayPartitionValueExtractor", "2024/0_1/02", "'2024/0_1/02' is not a date"),
        ("SlashEncodedHourPartitionValueExtractor", "2024/01/02", "yyyy/mm/dd/hh"),
        ("SlashEncodedHourPartitionValueExtractor", "2024/01/02/24", "'2024/01/02/24' is not a"),
    ],
)
def test_extractor_refuses_paths_it_cannot_read(class_name, path, message):
    with pytest.raises(SyncError, match=message.replace("(", r"\(")) as caught:
        extract(class_name, path)
    assert repr(path) in str(caught.value)


@pytest.mark.parametrize(
    ("fields", "hive_style", "path", "values"),
    [
        ([], False, "", []),  # NonPartitionedExtractor
        (["dt"], True, "dt=2024-01-01", ["2024-01-01"]),  # HiveStylePartitionValueExtractor
        (["dt"], False, "2024/01/01", ["2024-01-01"]),  # SinglePartPartitionValueExtractor
        (["country", "city"], True, "country=us/city=sf", ["us", "sf"]),  # MultiPartKeys
        (["country", "city"], False, "us/sf", ["us", "sf"]),  # MultiPartKeys
    ],
)
def test_extractor_inferred_from_partition_fields(fields, hive_style, path, values):
    assert partition_value_extractor(None, fields, hive_style)(path) == values
    assert partition_value_extractor("", fields, hive_style)(path) == values


def test_inferred_hive_style_extractor_refuses_a_plain_path():
    with pytest.raises(SyncError, match="partition_key=partition_value"):
        partition_value_extractor(None, ["dt"], hive_style=True)("2024-01-01")


def test_unknown_extractor_class_names_the_known_ones():
    with pytest.raises(SyncError) as caught:
        partition_value_extractor("org.apache.hudi.hive.NoSuchExtractor", ["dt"])
    message = str(caught.value)
    assert "'org.apache.hudi.hive.NoSuchExtractor'" in message
    for known in (
        "MultiPartKeysValueExtractor",
        "SinglePartPartitionValueExtractor",
        "HiveStylePartitionValueExtractor",
        "SlashEncodedDayPartitionValueExtractor",
        "SlashEncodedHourPartitionValueExtractor",
        "NonPartitionedExtractor",
    ):
        assert known in message


# --- identifiers and literals ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "stored"),
    [
        ("trips", "trips"),
        ("Trips_2024", "trips_2024"),
        ("_hoodie_commit_time", "_hoodie_commit_time"),
        ("DB", "db"),
        ("a" * MAX_NAME_LENGTH, "a" * MAX_NAME_LENGTH),
    ],
)
def test_valid_names_are_lower_cased(name, stored):
    assert checked_name(name, "table") == stored
    assert quoted(name, "table") == f"`{stored}`"


@pytest.mark.parametrize(
    "name",
    ["trips; DROP TABLE x", "a`b", "a b", "", "1abc", "a" * 129, "a-b", "a.b", "trips\n", "é"],
)
def test_bad_names_are_refused_naming_them(name):
    with pytest.raises(SyncError) as caught:
        checked_name(name, "table")
    assert f"table name {name!r} is not a valid Hive identifier" in str(caught.value)
    with pytest.raises(SyncError):
        quoted(name, "database")


def _hive_string_token(text: str) -> tuple[int, str]:
    """Hive's lexer rule for one single-quoted string literal at the start of `text`:
    '\\'' ( ~('\\'' | '\\\\') | ('\\\\' .) )* '\\''. Returns (where it ends, its value as
    Hive's unescapeSQLString reads it)."""
    assert text[0] == "'"
    escapes = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "b": "\b", "Z": "\x1a"}
    value, i = [], 1
    while i < len(text):
        char = text[i]
        if char == "'":
            return i + 1, "".join(value)
        if char == "\\":
            follower = text[i + 1]
            value.append(escapes.get(follower, follower))
            i += 2
            continue
        value.append(char)
        i += 1
    raise AssertionError(f"unterminated literal {text!r}")


@pytest.mark.parametrize(
    "text",
    [
        "plain",
        "it's",
        "'; DROP TABLE trips; --",
        "x' OR '1'='1",
        "back\\slash",
        "ends with backslash\\",
        "\\'",
        "\\\\'",
        'double "quotes"',
        "two\nlines",
        "file:/tmp/table/dt=2024-01-01",
        "",
    ],
)
def test_literal_cannot_end_early_and_reads_back_as_given(text):
    quoted_text = literal(text)
    end, value = _hive_string_token(quoted_text)
    assert end == len(quoted_text), f"{quoted_text!r} ends at {end}"
    assert value == text
    assert "\n" not in quoted_text


def test_literal_escapes():
    assert literal("it's") == "'it\\'s'"
    assert literal("a\\b") == "'a\\\\b'"
    assert literal("a\\") == "'a\\\\'"
    assert literal(42) == "'42'"


# --- Hive types -----------------------------------------------------------------------------

_POINT = {"type": "record", "name": "point", "fields": [{"name": "x", "type": "double"}]}
_INNER = {
    "type": "record",
    "name": "outer",
    "fields": [
        {"name": "a", "type": "int"},
        {
            "name": "inner",
            "type": {
                "type": "record",
                "name": "inner",
                "fields": [{"name": "C", "type": "string"}],
            },
        },
    ],
}
# (Avro type of a table column, its Hive type, its Hive type with support_timestamp)
AVRO_TO_HIVE = [
    ("boolean", "boolean", None),
    ("int", "int", None),
    ("long", "bigint", None),
    ("float", "float", None),
    ("double", "double", None),
    ("string", "string", None),
    ("bytes", "binary", None),
    ({"type": "fixed", "name": "f16", "size": 16}, "binary", None),
    ({"type": "enum", "name": "color", "symbols": ["RED", "GREEN"]}, "string", None),
    ({"type": "int", "logicalType": "date"}, "date", None),
    ({"type": "int", "logicalType": "time-millis"}, "int", None),
    ({"type": "long", "logicalType": "time-micros"}, "bigint", None),
    ({"type": "long", "logicalType": "timestamp-millis"}, "bigint", "timestamp"),
    ({"type": "long", "logicalType": "timestamp-micros"}, "bigint", "timestamp"),
    ({"type": "long", "logicalType": "local-timestamp-micros"}, "bigint", "timestamp"),
    (
        {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
        "decimal(10,2)",
        None,
    ),
    (
        {
            "type": "fixed",
            "name": "d",
            "size": 8,
            "logicalType": "decimal",
            "precision": 18,
            "scale": 4,
        },
        "decimal(18,4)",
        None,
    ),
    ({"type": "bytes", "logicalType": "big-decimal"}, "binary", None),
    ({"type": "fixed", "name": "dur", "size": 12, "logicalType": "duration"}, "binary", None),
    (["null", "string"], "string", None),
    ({"type": "array", "items": "int"}, "array<int>", None),
    ({"type": "array", "items": ["null", _POINT]}, "array<struct<x:double>>", None),
    (
        {"type": "map", "values": {"type": "array", "items": "long"}},
        "map<string,array<bigint>>",
        None,
    ),
    (
        {"type": "map", "values": {"type": "long", "logicalType": "timestamp-micros"}},
        "map<string,bigint>",
        "map<string,timestamp>",
    ),
    (_INNER, "struct<a:int,inner:struct<c:string>>", None),
    (["null", "int", "string"], "struct<member0:int,member1:string>", None),
    (["long", "double"], "struct<member0:bigint,member1:double>", None),
]


@pytest.mark.parametrize(("avro", "plain", "with_timestamp"), AVRO_TO_HIVE)
def test_hive_type_of_every_column_type_a_table_holds(avro, plain, with_timestamp):
    schema = avro_to_arrow(
        {"type": "record", "name": "row", "fields": [{"name": "col", "type": avro}]}
    )
    dtype = schema.field("col").type
    assert hive_type(dtype) == plain
    assert hive_type(dtype, support_timestamp=True) == (with_timestamp or plain)


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [
        (pa.int8(), "int"),
        (pa.int16(), "int"),
        (pa.large_string(), "string"),
        (pa.large_list(pa.float32()), "array<float>"),
        (pa.dictionary(pa.int32(), pa.string()), "string"),
        (pa.timestamp("ns"), "bigint"),
        (pa.decimal128(38, 0), "decimal(38,0)"),
        (pa.binary(12), "binary"),
    ],
)
def test_hive_type_of_other_arrow_types(dtype, expected):
    assert hive_type(dtype) == expected


def test_hive_type_refuses_what_hive_cannot_hold():
    with pytest.raises(SyncError, match="no Hive type for the Arrow type null"):
        hive_type(pa.null())
    with pytest.raises(SyncError, match="column name 'a b' is not a valid Hive identifier"):
        hive_type(pa.struct([pa.field("a b", pa.int32())]))


# --- Hive columns and their evolution -------------------------------------------------------


def test_hive_columns_put_meta_columns_first_and_partition_keys_apart():
    schema = pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("ts", pa.int64()),
            pa.field("Fare", pa.float64()),
            pa.field("dt", pa.date32()),
            pa.field("at", pa.timestamp("us", tz="UTC")),
        ]
    )
    columns, keys = hive_columns(schema, ["dt", "region"])
    assert [(c.name, c.type) for c in columns] == [
        *[(name, "string") for name in META_FIELDS],
        ("id", "string"),
        ("ts", "bigint"),
        ("fare", "double"),
        ("at", "bigint"),
    ]
    # dt takes the data field's type; region is not a data field: a string
    assert keys == (Column("dt", "date"), Column("region", "string"))
    columns, _ = hive_columns(schema, ["DT"], support_timestamp=True)
    assert Column("at", "timestamp") in columns
    assert "dt" not in [c.name for c in columns]


def test_hive_columns_refuse_names_differing_only_in_case():
    schema = pa.schema([("ID", pa.string()), ("id", pa.int64())])
    with pytest.raises(SyncError, match="columns 'ID' and 'id' differ only in case"):
        hive_columns(schema, [])


def test_hive_columns_refuse_a_bad_partition_key():
    with pytest.raises(SyncError, match="partition column name 'dt; x' is not a valid"):
        hive_columns(pa.schema([("id", pa.string())]), ["dt; x"])


CURRENT = (Column("id", "string"), Column("n", "int"), Column("f", "float"))


def test_evolved_columns_none_when_unchanged():
    assert evolved_columns("db.t", CURRENT, CURRENT) is None
    assert evolved_columns("db.t", CURRENT, CURRENT[:2]) is None  # dropped columns stay


def test_evolved_columns_append_new_ones_and_keep_dropped_ones():
    wanted = (Column("id", "string"), Column("f", "float"), Column("note", "string"))
    assert evolved_columns("db.t", CURRENT, wanted) == (*CURRENT, Column("note", "string"))


def test_evolved_columns_allow_widening():
    wanted = (Column("id", "string"), Column("n", "bigint"), Column("f", "double"))
    assert evolved_columns("db.t", CURRENT, wanted) == wanted
    structs = (Column("s", "struct<a:int>"),)
    grown = (Column("s", "struct<a:int,b:string>"),)
    assert evolved_columns("db.t", structs, grown) == grown


@pytest.mark.parametrize(
    ("current", "wanted", "named"),
    [
        ("bigint", "int", "n bigint -> int"),
        ("string", "int", "n string -> int"),
        ("double", "float", "n double -> float"),
        ("int", "string", "n int -> string"),
    ],
)
def test_evolved_columns_refuse_what_hive_cannot_read(current, wanted, named):
    with pytest.raises(SyncError) as caught:
        evolved_columns("db.t", (Column("n", current),), (Column("n", wanted),))
    assert "db.t" in str(caught.value)
    assert named in str(caught.value)


# --- the Spark schema -----------------------------------------------------------------------


def test_spark_schema_json_shape():
    schema = pa.schema(
        [
            pa.field("dt", pa.string()),
            pa.field("id", pa.string(), nullable=False),
            pa.field("amount", pa.decimal128(10, 2)),
            pa.field("at", pa.timestamp("us", tz="UTC")),
            pa.field("tags", pa.list_(pa.field("element", pa.string()))),
            pa.field("attrs", pa.map_(pa.string(), pa.int64())),
            pa.field("loc", pa.struct([pa.field("x", pa.float64())])),
            pa.field("day", pa.date32()),
            pa.field("choice", pa.dense_union([pa.field("int", pa.int32())])),
        ]
    )
    text = spark_schema_json(schema, ["dt", "Region"])
    assert " " not in text  # compact: as Spark's StructType.json writes it
    parsed = json.loads(text)
    assert parsed["type"] == "struct"
    data = ["id", "amount", "at", "tags", "attrs", "loc", "day", "choice"]
    assert [f["name"] for f in parsed["fields"]] == [*META_FIELDS, *data, "dt", "Region"]
    fields = {f["name"]: f for f in parsed["fields"]}
    assert fields["_hoodie_commit_time"] == {
        "name": "_hoodie_commit_time",
        "type": "string",
        "nullable": True,
        "metadata": {},
    }
    assert fields["id"]["nullable"] is False
    assert fields["amount"]["type"] == "decimal(10,2)"
    assert fields["at"]["type"] == "timestamp"
    assert fields["day"]["type"] == "date"
    assert fields["tags"]["type"] == {
        "type": "array",
        "elementType": "string",
        "containsNull": True,
    }
    assert fields["attrs"]["type"] == {
        "type": "map",
        "keyType": "string",
        "valueType": "long",
        "valueContainsNull": True,
    }
    assert fields["loc"]["type"]["fields"] == [
        {"name": "x", "type": "double", "nullable": True, "metadata": {}}
    ]
    assert fields["choice"]["type"]["fields"] == [
        {"name": "member0", "type": "integer", "nullable": True, "metadata": {}}
    ]


def test_spark_schema_json_puts_partition_columns_last():
    schema = pa.schema([pa.field("dt", pa.string()), pa.field("id", pa.string())])
    parsed = json.loads(spark_schema_json(schema, ["dt", "Region"]))
    assert [f["name"] for f in parsed["fields"]][-3:] == ["id", "dt", "Region"]
    dt, region = parsed["fields"][-2:]
    assert dt == {"name": "dt", "type": "string", "nullable": True, "metadata": {}}
    # a partition field the data lacks: a required string, named as the partition key is
    assert region == {"name": "Region", "type": "string", "nullable": False, "metadata": {}}


def test_spark_schema_json_refuses_types_spark_lacks():
    with pytest.raises(SyncError, match="no Spark type for the Arrow type time64"):
        spark_schema_json(pa.schema([("t", pa.time64("us"))]), [])


# --- durations ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "millis"),
    [
        ("0 s", 0),
        ("30 min", 30 * 60_000),
        ("1 h", 3_600_000),
        ("2d", 2 * 86_400_000),
        ("500 ms", 500),
        ("15", 15),
        ("10 seconds", 10_000),
        ("3 hours", 3 * 3_600_000),
        (" 1 DAY ", 86_400_000),
    ],
)
def test_parse_duration_ms(text, millis):
    assert parse_duration_ms(text) == millis


@pytest.mark.parametrize("text", ["soon", "1.5 h", "-1 s", "1 fortnight", ""])
def test_parse_duration_refuses_non_durations_naming_the_option(text):
    with pytest.raises(InvalidOptionError) as caught:
        parse_duration_ms(text)
    assert f"sink.partition-commit.delay={text!r}" in str(caught.value)


# --- partition times ------------------------------------------------------------------------


def epoch_ms(keys: list[str], values: list[str], options=None, partition: str = "p") -> int:
    return PartitionTimeExtractor(keys, Options(options)).epoch_ms(values, partition)


def test_partition_time_default_is_the_first_value():
    assert epoch_ms(["dt"], ["2024-01-01"]) == utc_ms("2024-01-01T00:00:00")
    assert epoch_ms(["dt"], ["2024-01-01 05:06:07"]) == utc_ms("2024-01-01T05:06:07")
    assert epoch_ms(["dt", "hour"], ["2024-03-04", "07"]) == utc_ms("2024-03-04T00:00:00")


def test_partition_time_pattern_fills_in_the_named_values():
    options = {PATTERN: "$dt $hour:00:00"}
    assert epoch_ms(["dt", "hour"], ["2024-01-01", "07"], options) == utc_ms("2024-01-01T07:00")
    assert epoch_ms(["dt", "hour"], ["2024-01-01", "23"], options) == utc_ms("2024-01-01T23:00")


def test_partition_time_custom_formatter():
    options = {FORMATTER: "yyyyMMdd"}
    assert epoch_ms(["day"], ["20240102"], options) == utc_ms("2024-01-02T00:00")
    options = {PATTERN: "$year$month$day $hour:00:00", FORMATTER: "yyyyMMdd HH:mm:ss"}
    values = ["2024", "01", "02", "13"]
    assert epoch_ms(["year", "month", "day", "hour"], values, options) == utc_ms("2024-01-02T13:00")


def test_partition_time_read_in_the_watermark_time_zone():
    utc = epoch_ms(["dt"], ["2024-01-01"])
    kolkata = epoch_ms(["dt"], ["2024-01-01"], {ZONE: "Asia/Kolkata"})
    assert utc - kolkata == (5 * 60 + 30) * 60_000
    assert kolkata == utc_ms("2023-12-31T18:30:00")
    # summer time counts: New York is UTC-4 in July, UTC-5 in January
    assert epoch_ms(["dt"], ["2024-07-01"], {ZONE: "America/New_York"}) == utc_ms(
        "2024-07-01T04:00"
    )
    assert epoch_ms(["dt"], ["2024-01-01"], {ZONE: "America/New_York"}) == utc_ms(
        "2024-01-01T05:00"
    )


def test_partition_time_unknown_zone_names_the_option():
    with pytest.raises(InvalidOptionError, match=f"{ZONE}='Mars/Base' is not a time zone"):
        PartitionTimeExtractor(["dt"], Options({ZONE: "Mars/Base"}))


def test_partition_time_unknown_key_names_the_partition():
    with pytest.raises(SyncError) as caught:
        epoch_ms(["dt"], ["2024-01-01"], {PATTERN: "$day 00:00:00"}, "dt=2024-01-01")
    message = str(caught.value)
    assert "partition 'dt=2024-01-01'" in message
    assert "$day" in message
    assert PATTERN in message


@pytest.mark.parametrize(
    ("values", "options"),
    [
        (["tomorrow"], None),
        (["2024-13-01"], None),
        (["2024-01-01x"], None),
        (["2024-01-02"], {FORMATTER: "yyyyMMdd"}),
        (["2024-01-02"], {FORMATTER: "yyyy-MM-dd HH:mm:ss"}),  # set: no date-only fallback
    ],
)
def test_partition_time_unparsable_values_name_the_partition(values, options):
    partition = f"dt={values[0]}"
    with pytest.raises(SyncError) as caught:
        epoch_ms(["dt"], values, options, partition)
    message = str(caught.value)
    assert f"partition {partition!r}" in message
    assert repr(values[0]) in message
    assert FORMATTER in message


def test_partition_time_of_a_non_partitioned_table_is_refused():
    with pytest.raises(SyncError, match="non-partitioned"):
        epoch_ms([], [])


# --- commit policies ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kinds", "hive_sync", "policies"),
    [
        (None, False, []),
        ("", False, []),
        ("success-file", False, ["success-file"]),
        ("SUCCESS-FILE", False, ["success-file"]),
        ("success-file, metastore", True, ["success-file", "metastore"]),
        ("metastore", True, ["metastore"]),
    ],
)
def test_commit_policies(kinds, hive_sync, policies):
    options = {KIND: kinds, ENABLE: str(hive_sync).lower()}
    assert commit_policies(Options(options)) == policies


def test_commit_policies_refuse_unknown_kinds():
    with pytest.raises(InvalidOptionError) as caught:
        commit_policies(Options({KIND: "success-file,custom,email"}))
    message = str(caught.value)
    assert KIND in message
    assert "custom, email" in message
    assert "known: success-file, metastore" in message


def test_metastore_policy_needs_hive_sync():
    with pytest.raises(InvalidOptionError) as caught:
        commit_policies(Options({KIND: "success-file,metastore"}))
    assert KIND in str(caught.value)
    assert f"{ENABLE}=true" in str(caught.value)
    # Apache Hudi's older name of the switch counts too
    options = Options({KIND: "metastore", "hoodie.datasource.meta.sync.enable": "true"})
    assert commit_policies(options) == ["metastore"]
