"""The schema layer: Arrow <-> Avro as Apache Hudi writes it and hudi-rs reads it, and evolution."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi import HudiTableBuilder

from hudi_core.config.option import Options, declared_options
from hudi_core.config.schema_options import (
    MAKE_NEW_COLUMNS_NULLABLE,
    RECONCILE_SCHEMA,
    SCHEMA_ALLOW_AUTO_EVOLUTION_COLUMN_DROP,
    SET_NULL_FOR_MISSING_COLUMNS,
)
from hudi_core.errors import SchemaError
from hudi_core.schema import (
    META_FIELDS,
    OPERATION_FIELD,
    add_meta_fields,
    arrow_to_avro,
    arrow_to_avro_json,
    arrow_to_create_schema,
    avro_record_name,
    avro_schema_json,
    avro_to_arrow,
    cast_batch_to_schema,
    decimal_fixed_size,
    deduce_writer_schema,
    normalize_schema,
    reconcile_write_schema,
    sanitize_avro_name,
    strip_meta_fields,
    table_schema_from_commit,
)

FIXTURES = [
    ("cow", "v6_empty"),
    ("cow", "v6_nonpartitioned"),
    ("cow", "v6_simplekeygen_hivestyle_no_metafields"),
    ("cow", "v6_simplekeygen_nonhivestyle"),
    ("cow", "v6_simplekeygen_nonhivestyle_overwritetable"),
    ("cow", "v6_timebasedkeygen_nonhivestyle"),
    ("mor", "v6_empty_parquetlog"),
    ("mor", "v6_nonpartitioned_parquetlog"),
    ("mor", "v6_simplekeygen_hivestyle_no_metafields_parquetlog"),
    ("mor", "v6_simplekeygen_nonhivestyle_overwritetable_parquetlog"),
    ("mor", "v6_simplekeygen_nonhivestyle_parquetlog"),
    ("mor", "v6_trips_8i1u_avrolog"),
]
FIXTURES_WITH_DATA = [(kind, name) for kind, name in FIXTURES if "empty" not in name]
COMPLETED_SUFFIXES = (".commit", ".deltacommit", ".replacecommit")


# ---------------------------------------------------------------- helpers


def describe_field(field: pa.Field) -> tuple:
    return (field.name, describe_type(field.type), field.nullable, dict(field.metadata or {}))


def describe_type(dtype: pa.DataType) -> object:
    if dtype.num_fields == 0:
        return str(dtype)
    children = [describe_field(dtype.field(i)) for i in range(dtype.num_fields)]
    return (type(dtype).__name__, children)


def assert_same_schema(actual: pa.Schema, expected: pa.Schema) -> None:
    """Equal including nested field names, nullability and field metadata (in any order)."""
    assert [describe_field(f) for f in actual] == [describe_field(f) for f in expected]
    assert actual.equals(expected)


def read_properties(path: Path) -> dict[str, str]:
    """Enough of Java's properties format for hoodie.properties."""
    props = {}
    for line in path.read_text().splitlines():
        if not line or line.startswith(("#", "!")) or "=" not in line:
            continue
        key, value = line.split("=", 1)
        props[key.strip()] = value.replace("\\:", ":").replace("\\=", "=")
    return props


def completed_instants(table: Path) -> list[Path]:
    files = [p for p in (table / ".hoodie").iterdir() if p.name.endswith(COMPLETED_SUFFIXES)]
    return sorted(files, key=lambda p: p.name)


def commit_schema(instant: Path) -> str:
    return json.loads(instant.read_text())["extraMetadata"]["schema"]


def latest_table_schema_json(table: Path) -> str:
    instants = completed_instants(table)
    if instants:
        return commit_schema(instants[-1])
    return read_properties(table / ".hoodie" / "hoodie.properties")["hoodie.table.create.schema"]


def hudi_rs_table(path: Path):
    return HudiTableBuilder.from_base_uri(str(path)).build()


@pytest.fixture
def table_with_create_schema(hudi_fixture, tmp_path):
    """Writes an empty table whose create schema is the given Avro; hudi-rs reads it from there."""

    def make(avro: dict) -> Path:
        target = tmp_path / f"t{len(list(tmp_path.iterdir()))}"
        shutil.copytree(hudi_fixture("cow", "v6_empty"), target)
        props_path = target / ".hoodie" / "hoodie.properties"
        lines = [
            line
            for line in props_path.read_text().splitlines()
            if not line.startswith("hoodie.table.create.schema=")
        ]
        escaped = avro_schema_json(avro).replace(":", "\\:")
        lines.append(f"hoodie.table.create.schema={escaped}")
        props_path.write_text("\n".join(lines) + "\n")
        return target

    return make


def rich_schema() -> pa.Schema:
    """Every Arrow type the writer accepts, nested and nullable both ways."""
    return pa.schema(
        [
            pa.field("b", pa.bool_()),
            pa.field("i8", pa.int8()),
            pa.field("i16", pa.int16(), nullable=False),
            pa.field("i32", pa.int32()),
            pa.field("i64", pa.int64()),
            pa.field("f32", pa.float32()),
            pa.field("f64", pa.float64()),
            pa.field("dec", pa.decimal128(20, 4)),
            pa.field("s", pa.string()),
            pa.field("ls", pa.large_string()),
            pa.field("bin", pa.binary()),
            pa.field("lbin", pa.large_binary()),
            pa.field("day", pa.date32()),
            pa.field("ts_us_tz", pa.timestamp("us", tz="UTC")),
            pa.field("ts_us", pa.timestamp("us")),
            pa.field("ts_ms_tz", pa.timestamp("ms", tz="Europe/Paris")),
            pa.field("ts_ms", pa.timestamp("ms")),
            pa.field(
                "st",
                pa.struct(
                    [
                        pa.field("a", pa.int32(), nullable=False),
                        pa.field("inner", pa.struct([pa.field("x", pa.float64())])),
                        pa.field("d", pa.decimal128(5, 2)),
                    ]
                ),
            ),
            pa.field("ints", pa.list_(pa.int32())),
            pa.field("req_ints", pa.list_(pa.field("item", pa.int64(), nullable=False))),
            pa.field("structs", pa.list_(pa.struct([pa.field("q", pa.decimal128(5, 2))]))),
            pa.field("m", pa.map_(pa.string(), pa.struct([pa.field("v", pa.int64())]))),
            pa.field("m_list", pa.map_(pa.large_string(), pa.list_(pa.string()))),
        ]
    )


def element(dtype: pa.DataType, nullable: bool = True) -> pa.ListType:
    return pa.list_(pa.field("element", dtype, nullable=nullable))


def map_of(value: pa.DataType) -> pa.MapType:
    return pa.map_(pa.string(), pa.field("value", value, nullable=True))


def normalized_rich_schema() -> pa.Schema:
    """rich_schema() as a reader returns it once written (what hudi-rs reports)."""
    utc_us, utc_ms = pa.timestamp("us", tz="UTC"), pa.timestamp("ms", tz="UTC")
    return pa.schema(
        [
            pa.field("b", pa.bool_()),
            pa.field("i8", pa.int32()),
            pa.field("i16", pa.int32(), nullable=False),
            pa.field("i32", pa.int32()),
            pa.field("i64", pa.int64()),
            pa.field("f32", pa.float32()),
            pa.field("f64", pa.float64()),
            pa.field("dec", pa.decimal128(20, 4)),
            pa.field("s", pa.string()),
            pa.field("ls", pa.string()),
            pa.field("bin", pa.binary()),
            pa.field("lbin", pa.binary()),
            pa.field("day", pa.date32()),
            pa.field("ts_us_tz", utc_us),
            pa.field("ts_us", utc_us),
            pa.field("ts_ms_tz", utc_ms),
            pa.field("ts_ms", utc_ms),
            pa.field(
                "st",
                pa.struct(
                    [
                        pa.field("a", pa.int32(), nullable=False),
                        pa.field("inner", pa.struct([pa.field("x", pa.float64())])),
                        pa.field("d", pa.decimal128(5, 2)),
                    ]
                ),
            ),
            pa.field("ints", element(pa.int32())),
            pa.field("req_ints", element(pa.int64(), nullable=False)),
            pa.field("structs", element(pa.struct([pa.field("q", pa.decimal128(5, 2))]))),
            pa.field("m", map_of(pa.struct([pa.field("v", pa.int64())]))),
            pa.field("m_list", map_of(element(pa.string()))),
        ]
    )


# ---------------------------------------------------------------- fixtures: read like hudi-rs


@pytest.mark.parametrize(("kind", "name"), FIXTURES)
def test_table_schema_matches_hudi_rs(hudi_fixture, kind, name):
    table = hudi_fixture(kind, name)
    ours = table_schema_from_commit(latest_table_schema_json(table))
    assert_same_schema(ours, hudi_rs_table(table).get_schema())


@pytest.mark.parametrize(("kind", "name"), FIXTURES)
def test_meta_fields_match_hudi_rs(hudi_fixture, kind, name):
    table = hudi_fixture(kind, name)
    ours = add_meta_fields(table_schema_from_commit(latest_table_schema_json(table)))
    assert_same_schema(ours, hudi_rs_table(table).get_schema_with_meta_fields())


# ---------------------------------------------------------------- fixtures: write like Hudi


@pytest.mark.parametrize(("kind", "name"), FIXTURES)
def test_commit_schemas_regenerate_byte_for_byte(hudi_fixture, kind, name):
    table = hudi_fixture(kind, name)
    table_name = read_properties(table / ".hoodie" / "hoodie.properties")["hoodie.table.name"]
    for instant in completed_instants(table):
        recorded = commit_schema(instant)
        regenerated = arrow_to_avro_json(table_schema_from_commit(recorded), table_name, False)
        assert regenerated == recorded, instant.name


@pytest.mark.parametrize(("kind", "name"), FIXTURES)
def test_create_schema_regenerates_byte_for_byte(hudi_fixture, kind, name):
    props = read_properties(hudi_fixture(kind, name) / ".hoodie" / "hoodie.properties")
    recorded = props["hoodie.table.create.schema"]
    schema = table_schema_from_commit(recorded)
    regenerated = avro_schema_json(arrow_to_create_schema(schema, props["hoodie.table.name"]))
    assert regenerated == recorded


@pytest.mark.parametrize(("kind", "name"), FIXTURES_WITH_DATA)
def test_base_file_footers_and_log_headers_regenerate(hudi_fixture, kind, name):
    table = hudi_fixture(kind, name)
    instants = completed_instants(table)
    table_name = read_properties(table / ".hoodie" / "hoodie.properties")["hoodie.table.name"]
    schema = table_schema_from_commit(commit_schema(instants[-1]))
    expected = arrow_to_avro_json(schema, table_name, True)
    footers = [
        pq.ParquetFile(path).metadata.metadata.get(b"parquet.avro.schema")
        for path in table.rglob("*.parquet")
    ]
    for footer in footers:
        if footer is not None:  # Spark's row writer leaves no Avro schema in the footer
            assert footer.decode() == expected
    for log_file in table.rglob(".*.log.*"):
        assert expected.encode() in log_file.read_bytes(), log_file.name


# ---------------------------------------------------------------- avro_to_arrow vs hudi-rs


def test_rich_schema_reads_back_like_hudi_rs(table_with_create_schema):
    avro = arrow_to_avro(rich_schema(), "v6_empty", False)
    theirs = hudi_rs_table(table_with_create_schema(avro)).get_schema()
    assert_same_schema(avro_to_arrow(avro), theirs)
    assert_same_schema(theirs, normalized_rich_schema())


def test_create_style_schema_reads_back_like_hudi_rs(table_with_create_schema):
    avro = arrow_to_create_schema(rich_schema(), "v6_empty")
    theirs = hudi_rs_table(table_with_create_schema(avro)).get_schema()
    assert_same_schema(avro_to_arrow(avro), theirs)


AVRO_TYPES_HUDI_RS_READS = [
    "int",
    ["int", "null"],
    {"type": "long", "logicalType": "timestamp-millis"},
    {"type": "long", "logicalType": "timestamp-nanos"},
    {"type": "int", "logicalType": "time-millis"},
    {"type": "long", "logicalType": "time-micros"},
    {"type": "int", "logicalType": "timestamp-micros"},  # misplaced logical type: plain int
    {"type": "map", "values": "int"},
    {
        "type": "map",
        "values": {"type": "array", "items": ["null", {"type": "map", "values": "long"}]},
    },
    {"type": "array", "items": "int"},
    {"type": "enum", "name": "E", "symbols": ["A", "B"]},
    {"type": "enum", "name": "E", "symbols": ["A"], "doc": "an enum"},
    {"type": "fixed", "name": "F", "size": 4},
    ["null", {"type": "fixed", "name": "F", "size": 3, "doc": "not kept in a union"}],
    {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
    {
        "type": "fixed",
        "name": "D",
        "size": 16,
        "logicalType": "decimal",
        "precision": 38,
        "scale": 9,
    },
    ["null", "int", "string"],
    ["int", "string"],
    ["null", "int", {"type": "record", "name": "U", "fields": [{"name": "a", "type": "int"}]}],
    {
        "type": "record",
        "name": "R",
        "doc": "a record",
        "aliases": ["old_r", "elsewhere.r"],
        "fields": [
            {"name": "a", "type": "int", "doc": "field a"},
            {"name": "b", "type": ["null", "string"], "default": None, "doc": ""},
        ],
    },
]


@pytest.mark.parametrize("avro_type", AVRO_TYPES_HUDI_RS_READS, ids=json.dumps)
def test_avro_types_read_like_hudi_rs(table_with_create_schema, avro_type):
    avro = {
        "type": "record",
        "name": "v6_empty_record",
        "namespace": "hoodie.v6_empty",
        "fields": [{"name": "x", "type": avro_type}],
    }
    theirs = hudi_rs_table(table_with_create_schema(avro)).get_schema()
    assert_same_schema(avro_to_arrow(avro), theirs)


def wrap(avro_type, name: str = "x") -> dict:
    fields = [{"name": name, "type": avro_type}]
    return {"type": "record", "name": "t_record", "namespace": "hoodie.t", "fields": fields}


@pytest.mark.parametrize(
    ("avro_type", "expected"),
    [
        # hudi-rs panics on these; Spark reads them as TimestampNTZ
        ({"type": "long", "logicalType": "local-timestamp-micros"}, pa.timestamp("us")),
        ({"type": "long", "logicalType": "local-timestamp-millis"}, pa.timestamp("ms")),
        # hudi-rs says fixed_size_binary[16], but the data is a string, as Spark reads it
        ({"type": "string", "logicalType": "uuid"}, pa.string()),
        # an invalid decimal is ignored, per the Avro spec
        ({"type": "bytes", "logicalType": "decimal", "precision": 0}, pa.binary()),
    ],
)
def test_avro_types_hudi_rs_cannot_read(avro_type, expected):
    assert avro_to_arrow(wrap(avro_type)).field("x").type == expected


def test_null_type_is_nullable():
    assert avro_to_arrow(wrap("null")).field("x") == pa.field("x", pa.null(), nullable=True)


def test_named_type_references_resolve():
    avro = {
        "type": "record",
        "name": "r",
        "namespace": "ns",
        "fields": [
            {"name": "a", "type": {"type": "record", "name": "P", "fields": [
                {"name": "v", "type": "int"}
            ]}},
            {"name": "b", "type": ["null", "P"]},
            {"name": "c", "type": "ns.P"},
            {"name": "d", "type": {"type": "fixed", "name": "F", "namespace": "other", "size": 2}},
            {"name": "e", "type": "other.F"},
        ],
    }  # fmt: skip
    schema = avro_to_arrow(avro)
    point = pa.struct([pa.field("v", pa.int32(), nullable=False)])
    assert [f.type for f in schema] == [point, point, point, pa.binary(2), pa.binary(2)]
    assert schema.field("b").nullable and not schema.field("c").nullable


@pytest.mark.parametrize(
    "bad",
    [
        "not json",
        json.dumps({"type": "array", "items": "int"}),
        {"type": "record", "name": "r"},
        wrap("NoSuchType"),
        wrap(["null", "null"]),
        {"type": "record", "name": "r", "fields": [{"name": "me", "type": ["null", "r"]}]},
    ],
)
def test_bad_avro_schemas_raise_schema_error(bad):
    with pytest.raises(SchemaError):
        avro_to_arrow(bad)


def test_avro_json_with_properties_escapes_parses():
    escaped = avro_schema_json(wrap("int")).replace(":", "\\:")
    assert avro_to_arrow(escaped) == avro_to_arrow(wrap("int"))


# ---------------------------------------------------------------- arrow_to_avro conventions


def test_round_trip_normalises_to_what_readers_see():
    assert_same_schema(
        avro_to_arrow(arrow_to_avro(rich_schema(), "t", False)), normalized_rich_schema()
    )
    assert_same_schema(normalize_schema(rich_schema()), normalized_rich_schema())


def test_round_trip_is_identity_on_normalised_schemas():
    schema = normalized_rich_schema()
    assert_same_schema(avro_to_arrow(arrow_to_avro(schema, "t", False)), schema)
    assert_same_schema(avro_to_arrow(arrow_to_create_schema(schema, "t")), schema)
    with_meta = avro_to_arrow(arrow_to_avro(schema, "t", True))
    assert_same_schema(strip_meta_fields(with_meta), schema)


def test_record_names_and_nested_namespaces():
    schema = pa.schema(
        [
            pa.field(
                "st",
                pa.struct([pa.field("inner", pa.struct([pa.field("d", pa.decimal128(9, 3))]))]),
            ),
            pa.field("arr", pa.list_(pa.struct([pa.field("a", pa.int32())]))),
            pa.field("m", pa.map_(pa.string(), pa.struct([pa.field("a", pa.int32())]))),
            pa.field("price", pa.decimal128(10, 5), nullable=False),
        ]
    )
    avro = arrow_to_avro(schema, "trips", False)
    assert (avro["name"], avro["namespace"]) == ("trips_record", "hoodie.trips")
    st, arr, m, price = avro["fields"]
    st_record = st["type"][1]
    assert (st_record["name"], st_record["namespace"]) == ("st", "hoodie.trips.trips_record")
    inner = st_record["fields"][0]["type"][1]
    assert (inner["name"], inner["namespace"]) == ("inner", "hoodie.trips.trips_record.st")
    decimal = inner["fields"][0]["type"][1]
    assert decimal == {
        "type": "fixed",
        "name": "fixed",
        "namespace": "hoodie.trips.trips_record.st.inner.d",
        "size": 4,
        "logicalType": "decimal",
        "precision": 9,
        "scale": 3,
    }
    item = arr["type"][1]["items"][1]
    assert (item["name"], item["namespace"]) == ("arr", "hoodie.trips.trips_record")
    value = m["type"][1]["values"][1]
    assert (value["name"], value["namespace"]) == ("m", "hoodie.trips.trips_record")
    assert price == {
        "name": "price",
        "type": {
            **decimal,
            "namespace": "hoodie.trips.trips_record.price",
            "size": 5,
            "precision": 10,
            "scale": 5,
        },
    }


def test_nullable_fields_are_null_first_unions_with_null_default():
    schema = pa.schema([pa.field("a", pa.int64()), pa.field("b", pa.int64(), nullable=False)])
    assert arrow_to_avro(schema, "t", False)["fields"] == [
        {"name": "a", "type": ["null", "long"], "default": None},
        {"name": "b", "type": "long"},
    ]
    assert arrow_to_create_schema(schema, "t")["fields"] == [
        {"name": "a", "type": ["long", "null"]},
        {"name": "b", "type": "long"},
    ]


def test_meta_fields_lead_and_replace_any_in_the_schema():
    schema = pa.schema([pa.field("_hoodie_record_key", pa.string()), pa.field("id", pa.int32())])
    fields = arrow_to_avro(schema, "t", True, with_operation_field=True)["fields"]
    assert [f["name"] for f in fields] == [*META_FIELDS, OPERATION_FIELD, "id"]
    assert fields[0] == {
        "name": "_hoodie_commit_time",
        "type": ["null", "string"],
        "doc": "",
        "default": None,
    }
    assert [f["name"] for f in arrow_to_avro(schema, "t", False)["fields"]] == ["id"]


@pytest.mark.parametrize(
    ("dtype", "avro_type"),
    [
        (pa.timestamp("us", tz="UTC"), "timestamp-micros"),
        (pa.timestamp("us", tz="America/New_York"), "timestamp-micros"),
        (pa.timestamp("us"), "timestamp-micros"),
        (pa.timestamp("ns"), "timestamp-micros"),
        (pa.timestamp("ms"), "timestamp-millis"),
        (pa.timestamp("s", tz="UTC"), "timestamp-millis"),
        (pa.time32("ms"), "time-millis"),
        (pa.time64("ns"), "time-micros"),
        (pa.date64(), "date"),
    ],
)
def test_temporal_types(dtype, avro_type):
    field = arrow_to_avro(pa.schema([pa.field("x", dtype, nullable=False)]), "t", False)["fields"][
        0
    ]
    assert field["type"]["logicalType"] == avro_type


@pytest.mark.parametrize(
    ("precision", "size"),
    [(1, 1), (2, 1), (3, 2), (4, 2), (9, 4), (10, 5), (18, 8), (19, 9), (28, 12), (38, 16)],
)
def test_decimal_fixed_size_follows_spark(precision, size):
    assert decimal_fixed_size(precision) == size


@pytest.mark.parametrize(
    ("table_name", "sanitized"),
    [("trips", "trips"), ("my-table", "my__table"), ("1abc", "__abc"), ("a.b c", "a__b__c")],
)
def test_table_names_are_sanitized_like_hudi(table_name, sanitized):
    assert sanitize_avro_name(table_name) == sanitized
    assert avro_record_name(table_name) == (f"{sanitized}_record", f"hoodie.{sanitized}")


def test_column_comment_becomes_doc():
    schema = pa.schema([pa.field("a", pa.int32(), metadata={"comment": "the a"})])
    assert arrow_to_avro(schema, "t", False)["fields"][0]["doc"] == "the a"


def test_dictionary_columns_store_their_values():
    schema = pa.schema([pa.field("d", pa.dictionary(pa.int32(), pa.string()))])
    assert arrow_to_avro(schema, "t", False)["fields"][0]["type"] == ["null", "string"]


@pytest.mark.parametrize(
    "field",
    [
        pa.field("u", pa.uint64()),
        pa.field("d", pa.duration("s")),
        pa.field("big", pa.decimal256(40, 2)),
        pa.field("m", pa.map_(pa.int32(), pa.string())),
        pa.field("bad name", pa.int32()),
        pa.field("u", pa.dense_union([pa.field("a", pa.int32())])),
    ],
)
def test_types_hudi_cannot_store_raise(field):
    with pytest.raises(SchemaError, match=field.name):
        arrow_to_avro(pa.schema([field]), "t", False)


def test_duplicate_column_names_raise():
    with pytest.raises(SchemaError, match="more than once"):
        arrow_to_avro(pa.schema([("a", pa.int32()), ("a", pa.int64())]), "t", False)


# ---------------------------------------------------------------- meta fields


def test_meta_field_helpers():
    assert META_FIELDS == [
        "_hoodie_commit_time",
        "_hoodie_commit_seqno",
        "_hoodie_record_key",
        "_hoodie_partition_path",
        "_hoodie_file_name",
    ]
    data = pa.schema([("id", pa.int32())])
    with_meta = add_meta_fields(data, with_operation_field=True)
    assert with_meta.names == [*META_FIELDS, OPERATION_FIELD, "id"]
    assert all(not f.nullable and f.type == pa.string() for f in with_meta if f.name != "id")
    assert add_meta_fields(data, nullable=True).field(0).nullable
    assert strip_meta_fields(with_meta) == data


def test_add_meta_fields_moves_existing_ones_to_the_front():
    schema = pa.schema([("id", pa.int32()), pa.field("_hoodie_record_key", pa.string())])
    result = add_meta_fields(schema)
    assert result.names == [*META_FIELDS, "id"]
    assert result.field("_hoodie_record_key").nullable


# ---------------------------------------------------------------- evolution


TABLE = normalize_schema(
    pa.schema(
        [
            pa.field("id", pa.int32(), nullable=False),
            pa.field("name", pa.string()),
            pa.field("amount", pa.int64()),
            pa.field("price", pa.decimal128(10, 2)),
            pa.field("day", pa.date32()),
            pa.field("ts", pa.timestamp("ms", tz="UTC")),
            pa.field("st", pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])),
            pa.field("tags", pa.list_(pa.struct([pa.field("k", pa.string())]))),
            pa.field("attrs", pa.map_(pa.string(), pa.struct([pa.field("v", pa.float32())]))),
        ]
    )
)


def batch_schema(**changes: pa.DataType | pa.Field | None) -> pa.Schema:
    """TABLE with some columns changed (a type or field), dropped (None) or added."""
    fields = {f.name: f for f in TABLE}
    for name, change in changes.items():
        if change is None:
            fields.pop(name)
        elif isinstance(change, pa.Field):
            fields[name] = change
        else:
            fields[name] = pa.field(name, change)
    return pa.schema(list(fields.values()))


def test_same_schema_reconciles_to_itself():
    assert_same_schema(reconcile_write_schema(TABLE, TABLE), TABLE)


def test_batch_column_order_and_meta_columns_do_not_matter():
    shuffled = pa.schema([pa.field("_hoodie_record_key", pa.string()), *reversed(list(TABLE))])
    assert_same_schema(reconcile_write_schema(add_meta_fields(TABLE), shuffled), TABLE)


def test_new_nullable_columns_are_appended_at_every_level():
    batch = batch_schema(
        st=pa.struct(
            [pa.field("a", pa.int32()), pa.field("b", pa.string()), pa.field("c", pa.int8())]
        ),
        tags=pa.list_(pa.struct([pa.field("k", pa.string()), pa.field("n", pa.int64())])),
        extra=pa.large_string(),
    )
    result = reconcile_write_schema(TABLE, batch)
    assert result.names == [*TABLE.names, "extra"]
    assert result.field("extra").type == pa.string()
    assert result.field("st").type.field("c").type == pa.int32()
    assert result.field("tags").type.value_type.names == ["k", "n"]


@pytest.mark.parametrize(
    ("column", "incoming"),
    [
        ("amount", pa.int32()),  # int fits long
        ("amount", pa.int8()),
        ("name", pa.int64()),  # Hudi promotes numbers into a string column
        ("name", pa.binary()),
        ("name", pa.date32()),
        ("price", pa.decimal128(6, 1)),  # narrower decimal fits
        ("price", pa.int32()),
        ("day", pa.string()),  # Hudi parses strings into a date column
        ("ts", pa.timestamp("ns")),  # other units or zones keep the table's
        ("ts", pa.timestamp("us", tz="Asia/Tokyo")),
        ("st", pa.null()),  # an all-null column fits anything
    ],
)
def test_incoming_types_that_promote_keep_the_table_type(column, incoming):
    result = reconcile_write_schema(TABLE, batch_schema(**{column: incoming}))
    assert result.field(column).type == TABLE.field(column).type


@pytest.mark.parametrize(
    ("column", "incoming", "widened"),
    [
        ("id", pa.int64(), pa.int64()),
        ("id", pa.float64(), pa.float64()),
        ("amount", pa.float32(), pa.float32()),
        ("price", pa.decimal128(11, 2), pa.decimal128(11, 2)),  # same scale and fixed size
        ("st", pa.struct([pa.field("a", pa.int64()), pa.field("b", pa.string())]), None),
    ],
)
def test_compatible_wider_incoming_types_widen_the_table(column, incoming, widened):
    result = reconcile_write_schema(TABLE, batch_schema(**{column: incoming}))
    expected = widened or pa.struct([pa.field("a", pa.int64()), pa.field("b", pa.string())])
    assert result.field(column).type == expected


@pytest.mark.parametrize(
    ("path", "changes", "table_type", "incoming_type"),
    [
        ("id", {"id": pa.string()}, "int32", "string"),
        ("amount", {"amount": pa.bool_()}, "int64", "bool"),
        ("price", {"price": pa.decimal128(12, 2)}, "decimal128(10, 2)", "decimal128(12, 2)"),
        ("price", {"price": pa.decimal128(10, 3)}, "decimal128(10, 2)", "decimal128(10, 3)"),
        ("day", {"day": pa.int32()}, "date32[day]", "int32"),
        ("ts", {"ts": pa.int64()}, "timestamp[ms, tz=UTC]", "int64"),
        ("st.a", {"st": pa.struct([pa.field("a", pa.string()), pa.field("b", pa.string())])},
         "int32", "string"),
        ("tags.element.k", {"tags": pa.list_(pa.struct([pa.field("k", pa.bool_())]))},
         "string", "bool"),
        ("attrs.value.v", {"attrs": pa.map_(pa.string(), pa.struct([pa.field("v", pa.bool_())]))},
         "float", "bool"),
        ("st", {"st": pa.string()}, "struct<a: int32, b: string>", "string"),
    ],
)  # fmt: skip
def test_incompatible_type_changes_name_column_and_both_types(
    path, changes, table_type, incoming_type
):
    with pytest.raises(SchemaError) as raised:
        reconcile_write_schema(TABLE, batch_schema(**changes))
    assert (
        f"column '{path}' has type {table_type} in the table but {incoming_type} in the batch"
        in str(raised.value)
    )


def test_every_conflict_is_reported_at_once():
    batch = batch_schema(id=pa.string(), amount=pa.bool_(), name=None)
    with pytest.raises(SchemaError) as raised:
        reconcile_write_schema(TABLE, batch)
    message = str(raised.value)
    assert "'id' has type int32" in message and "'amount' has type int64" in message
    assert "lacks table columns 'name'" in message


def test_missing_columns_fail_by_default_naming_them_and_the_options():
    batch = batch_schema(name=None, st=pa.struct([pa.field("a", pa.int32())]))
    with pytest.raises(SchemaError) as raised:
        reconcile_write_schema(TABLE, batch)
    message = str(raised.value)
    assert "'name', 'st.b'" in message
    assert SET_NULL_FOR_MISSING_COLUMNS.key in message
    assert SCHEMA_ALLOW_AUTO_EVOLUTION_COLUMN_DROP.key in message


def test_missing_columns_allowed_stay_in_the_schema_as_nullable():
    batch = batch_schema(id=None, st=pa.struct([pa.field("a", pa.int32())]))
    result = reconcile_write_schema(TABLE, batch, allow_missing_columns=True)
    assert result.names == TABLE.names
    assert result.field("id").nullable
    assert result.field("st").type == TABLE.field("st").type


def test_column_drop_removes_missing_columns_and_wins_over_filling():
    batch = batch_schema(name=None, st=pa.struct([pa.field("a", pa.int32())]))
    result = reconcile_write_schema(TABLE, batch, True, allow_column_drop=True)
    assert "name" not in result.names
    assert result.field("st").type == pa.struct([pa.field("a", pa.int32())])


def test_new_non_nullable_columns_need_the_option():
    batch = batch_schema(extra=pa.field("extra", pa.int32(), nullable=False))
    with pytest.raises(SchemaError, match=MAKE_NEW_COLUMNS_NULLABLE.key):
        reconcile_write_schema(TABLE, batch)
    result = reconcile_write_schema(TABLE, batch, make_new_columns_nullable=True)
    assert result.field("extra").nullable


def test_nullability_is_the_looser_of_both():
    relaxed = reconcile_write_schema(TABLE, batch_schema(id=pa.field("id", pa.int32())))
    assert relaxed.field("id").nullable
    strict_batch = batch_schema(name=pa.field("name", pa.string(), nullable=False))
    assert reconcile_write_schema(TABLE, strict_batch).field("name").nullable


def test_duplicate_batch_columns_raise():
    batch = pa.schema([*TABLE, pa.field("id", pa.int64())])
    with pytest.raises(SchemaError, match="more than once"):
        reconcile_write_schema(TABLE, batch)


def test_deduce_writer_schema_reads_hudi_options():
    batch = batch_schema(name=None)
    with pytest.raises(SchemaError):
        deduce_writer_schema(TABLE, batch)
    for key in (SET_NULL_FOR_MISSING_COLUMNS.key, RECONCILE_SCHEMA.key):
        assert deduce_writer_schema(TABLE, batch, {key: "true"}).names == TABLE.names
    dropped = deduce_writer_schema(
        TABLE, batch, Options({SCHEMA_ALLOW_AUTO_EVOLUTION_COLUMN_DROP.key: True})
    )
    assert "name" not in dropped.names
    first = deduce_writer_schema(None, pa.schema([("a", pa.int8())]))
    assert first == pa.schema([("a", pa.int32())])


def test_schema_options_carry_hudi_names_and_defaults():
    declared = {option.key: option.default for option in declared_options()}
    assert declared["hoodie.datasource.write.reconcile.schema"] is False
    assert declared["hoodie.write.set.null.for.missing.columns"] is False
    assert declared["hoodie.datasource.write.schema.allow.auto.evolution.column.drop"] is False
    assert declared["hoodie.datasource.write.new.columns.nullable"] is False


def test_evolved_schema_survives_the_avro_round_trip():
    batch = batch_schema(amount=pa.float64(), extra=pa.list_(pa.int16()))
    result = reconcile_write_schema(TABLE, batch)
    assert_same_schema(avro_to_arrow(arrow_to_avro(result, "t", False)), result)


# ---------------------------------------------------------------- cast_batch_to_schema


def test_cast_reorders_fills_missing_columns_and_promotes():
    batch = pa.table(
        {
            "name": pa.array([7, None], pa.int64()),
            "id": pa.array([1, 2], pa.int16()),
            "st": pa.array([{"a": 5}, None], pa.struct([pa.field("a", pa.int8())])),
            "tags": pa.array(
                [[{"k": "x"}], None], pa.large_list(pa.struct([pa.field("k", pa.large_string())]))
            ),
            "ts": pa.array([1_000_999, None], pa.timestamp("ns")),
            "day": pa.array(["2024-02-29", None]),
        }
    )
    schema = reconcile_write_schema(TABLE, batch.schema, allow_missing_columns=True)
    out = cast_batch_to_schema(batch, schema)
    assert_same_schema(out.schema, schema)
    assert out.to_pydict() == {
        "id": [1, 2],
        "name": ["7", None],
        "amount": [None, None],
        "price": [None, None],
        "day": [pa.scalar("2024-02-29").cast(pa.date32()).as_py(), None],
        "ts": [pa.scalar(1, pa.timestamp("ms", tz="UTC")).as_py(), None],
        "st": [{"a": 5, "b": None}, None],
        "tags": [[{"k": "x"}], None],
        "attrs": [None, None],
    }


def test_cast_handles_sliced_chunked_dictionary_and_map_columns():
    attrs_type = pa.map_(pa.large_string(), pa.struct([pa.field("v", pa.float32())]))
    first = pa.record_batch(
        {
            "id": pa.array([0, 1, 2], pa.int32()),
            "name": pa.array(["a", "b", "a"]).dictionary_encode(),
            "attrs": pa.array([[("z", {"v": 0.5})], [("k", {"v": 1.5})], None], attrs_type),
        }
    )
    batch = pa.Table.from_batches([first.slice(1), first.slice(0, 1)])
    schema = reconcile_write_schema(TABLE, batch.schema, allow_missing_columns=True)
    out = cast_batch_to_schema(batch, schema)
    assert out.column("id").to_pylist() == [1, 2, 0]
    assert out.column("name").to_pylist() == ["b", "a", "a"]
    assert out.column("attrs").to_pylist() == [[("k", {"v": 1.5})], None, [("z", {"v": 0.5})]]
    assert out.schema.field("attrs").type == TABLE.field("attrs").type


def test_cast_rounds_where_java_does():
    batch = pa.table(
        {"x": pa.array([2**53 + 1], pa.int64()), "t": pa.array([1_999], pa.time64("ns"))}
    )
    schema = pa.schema([("x", pa.float64()), ("t", pa.time64("us"))])
    assert cast_batch_to_schema(batch, schema).to_pydict() == {
        "x": [float(2**53)],
        "t": [pa.scalar(1, pa.time64("us")).as_py()],
    }


def test_cast_accepts_record_batches_and_drops_meta_columns():
    batch = pa.record_batch({"_hoodie_commit_time": ["1"], "id": pa.array([3], pa.int32())})
    out = cast_batch_to_schema(batch, pa.schema([pa.field("id", pa.int64())]))
    assert out.to_pydict() == {"id": [3]}


@pytest.mark.parametrize(
    ("columns", "schema", "match"),
    [
        ({"id": [1], "other": [1]}, pa.schema([("id", pa.int64())]), "'other'"),
        (
            {"a": [1]},
            pa.schema([("a", pa.int64()), pa.field("b", pa.int64(), nullable=False)]),
            "'b'",
        ),
        ({"a": [1, None]}, pa.schema([pa.field("a", pa.int64(), nullable=False)]), "1 nulls"),
        ({"a": ["12.345"]}, pa.schema([("a", pa.decimal128(10, 2))]), "column 'a'"),
        ({"s": [{"x": 1, "y": 2}]}, pa.schema([("s", pa.struct([("x", pa.int64())]))]), "'y'"),
    ],
)
def test_cast_errors_name_the_column(columns, schema, match):
    with pytest.raises(SchemaError, match=match):
        cast_batch_to_schema(pa.table(columns), schema)


def test_write_then_read_with_hudi_rs_schema(table_with_create_schema):
    """A reconciled and cast batch has exactly the schema hudi-rs reports for the commit."""
    batch = pa.table({"id": pa.array([1], pa.int8()), "name": ["x"], "flag": [True], "n": [1.0]})
    created = pa.schema([("id", pa.int32()), ("name", pa.string()), ("flag", pa.bool_())])
    table_path = table_with_create_schema(arrow_to_avro(created, "v6_empty", False))
    schema = reconcile_write_schema(hudi_rs_table(table_path).get_schema(), batch.schema)
    evolved = hudi_rs_table(table_with_create_schema(arrow_to_avro(schema, "v6_empty", False)))
    assert_same_schema(cast_batch_to_schema(batch, schema).schema, evolved.get_schema())
