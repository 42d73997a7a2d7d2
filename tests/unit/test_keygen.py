"""Key generators: choice from options, record keys and partition paths, as Java Hudi 0.14/0.15."""

from __future__ import annotations

import datetime
import decimal

import pyarrow as pa
import pytest

from hudi_core.config.option import Options
from hudi_core.errors import InvalidOptionError, RecordKeyError
from hudi_core.keygen import (
    ComplexKeyGenerator,
    CustomKeyGenerator,
    GlobalDeleteKeyGenerator,
    NonpartitionedKeyGenerator,
    SimpleKeyGenerator,
    TimestampBasedKeyGenerator,
    key_generator_for,
)
from hudi_core.keygen.render import java_strings

KG = "org.apache.hudi.keygen."
RK = "hoodie.datasource.write.recordkey.field"
PP = "hoodie.datasource.write.partitionpath.field"
CLS = "hoodie.datasource.write.keygenerator.class"
HIVE = "hoodie.datasource.write.hive_style_partitioning"
ENCODE = "hoodie.datasource.write.partitionpath.urlencode"


def generator(opts: dict[str, str]):
    return key_generator_for(Options(opts))


TRIPS = pa.table(
    {
        "uuid": ["a1", "b2", "c3"],
        "city": ["sf", "la", "sf"],
        "ts": [1, 2, 3],
        "fare": [1.5, 20.0, 1e7],
    }
)


# --- choosing the generator ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("keys", "partitions", "expected"),
    [
        ("uuid", None, NonpartitionedKeyGenerator),
        ("uuid", "", NonpartitionedKeyGenerator),
        ("uuid", "city", SimpleKeyGenerator),
        ("uuid,ts", "city", ComplexKeyGenerator),
        ("uuid", "city,ts", ComplexKeyGenerator),
        ("uuid", "city:SIMPLE,ts:TIMESTAMP", CustomKeyGenerator),
    ],
)
def test_inferred_generator(keys, partitions, expected):
    options = {RK: keys} | ({PP: partitions} if partitions is not None else {})
    if expected is CustomKeyGenerator:
        options |= {
            "hoodie.keygen.timebased.timestamp.type": "UNIX_TIMESTAMP",
            "hoodie.keygen.timebased.output.dateformat": "yyyy",
        }
    kg = generator(options)
    assert type(kg) is expected
    assert kg.class_name == expected.default_class_name


def test_table_properties_define_the_generator():
    kg = generator(
        {
            "hoodie.table.recordkey.fields": "uuid",
            "hoodie.table.partition.fields": "city",
            "hoodie.table.keygenerator.class": KG + "ComplexKeyGenerator",
        }
    )
    assert type(kg) is ComplexKeyGenerator
    assert kg.record_key_fields == ["uuid"]
    assert kg.partition_path_fields == ["city"]


def test_write_options_fill_what_the_table_leaves_out():
    kg = generator(
        {"hoodie.table.recordkey.fields": "uuid", PP: "city", CLS: KG + "SimpleKeyGenerator"}
    )
    assert (kg.record_key_fields, kg.partition_path_fields) == (["uuid"], ["city"])


def test_avro_class_names_are_accepted_and_kept():
    kg = generator({RK: "uuid", PP: "city", CLS: KG + "SimpleAvroKeyGenerator"})
    assert type(kg) is SimpleKeyGenerator
    assert kg.class_name == KG + "SimpleAvroKeyGenerator"


def test_avro_and_spark_variants_do_not_conflict():
    kg = generator(
        {
            "hoodie.table.keygenerator.class": KG + "ComplexKeyGenerator",
            CLS: KG + "ComplexAvroKeyGenerator",
            RK: "uuid",
            PP: "city",
        }
    )
    assert kg.class_name == KG + "ComplexKeyGenerator"


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("SIMPLE", SimpleKeyGenerator),
        ("complex", ComplexKeyGenerator),
        ("NON_PARTITION", NonpartitionedKeyGenerator),
        ("GLOBAL_DELETE", GlobalDeleteKeyGenerator),
        ("COMPLEX_AVRO", ComplexKeyGenerator),
    ],
)
def test_keygenerator_type(kind, expected):
    kg = generator({RK: "uuid", PP: "city", "hoodie.datasource.write.keygenerator.type": kind})
    assert type(kg) is expected


def test_table_keygenerator_type_of_newer_tables():
    kg = generator(
        {"hoodie.table.keygenerator.type": "NON_PARTITION", "hoodie.table.recordkey.fields": "uuid"}
    )
    assert type(kg) is NonpartitionedKeyGenerator


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"hoodie.table.recordkey.fields": "uuid", RK: "id"}, "hoodie.table.recordkey.fields=uuid"),
        ({"hoodie.table.partition.fields": "city", PP: "region"}, "config conflict"),
        (
            {
                "hoodie.table.keygenerator.class": KG + "SimpleKeyGenerator",
                CLS: KG + "ComplexKeyGenerator",
            },
            "config conflict",
        ),
        ({CLS: "com.acme.MyKeyGenerator"}, "com.acme.MyKeyGenerator"),
        ({CLS: KG + "SimpleKeyGenerator", RK: "a,b", PP: "city"}, "single record key field"),
        ({CLS: KG + "SimpleKeyGenerator", RK: "a", PP: "x,y"}, "single partition path field"),
        ({CLS: KG + "CustomKeyGenerator", RK: "a", PP: "x,y"}, "city:SIMPLE,ts:TIMESTAMP"),
        ({RK: "a", PP: "x:HOURLY"}, "SIMPLE or TIMESTAMP"),
        (
            {CLS: KG + "TimestampBasedKeyGenerator", RK: "a", PP: "ts"},
            "hoodie.keygen.timebased.timestamp.type",
        ),
    ],
)
def test_bad_configurations(options, message):
    with pytest.raises(InvalidOptionError, match=message.replace(".", r"\.")):
        generator(options)


def test_same_fields_spelled_with_spaces_agree():
    kg = generator({"hoodie.table.recordkey.fields": "a,b", RK: " a , b "})
    assert kg.record_key_fields == ["a", "b"]


def test_custom_types_come_from_the_write_option():
    kg = generator(
        {
            "hoodie.table.partition.fields": "city,day",
            PP: "city:simple,day:SIMPLE",
            RK: "uuid",
            "hoodie.table.keygenerator.class": KG + "CustomKeyGenerator",
        }
    )
    assert type(kg) is CustomKeyGenerator
    assert kg.partition_path_fields == ["city", "day"]


def test_no_record_key_fields_is_an_error_only_for_keys():
    kg = generator({PP: "city"})
    assert kg.partition_paths(TRIPS).to_pylist() == ["sf", "la", "sf"]
    with pytest.raises(InvalidOptionError, match="no record key fields"):
        kg.record_keys(TRIPS)


# --- record keys --------------------------------------------------------------------------


def test_simple_record_keys_and_partition_paths():
    kg = generator({RK: "uuid", PP: "city"})
    assert kg.record_keys(TRIPS).to_pylist() == ["a1", "b2", "c3"]
    assert kg.partition_paths(TRIPS).to_pylist() == ["sf", "la", "sf"]
    assert kg.record_keys(TRIPS).type == pa.string()


def test_null_record_key_counts_rows_and_names_the_first():
    uuids = ["k"] * 30
    for row in (17, 20, 25):
        uuids[row] = None
    batch = pa.table({"uuid": uuids, "city": ["sf"] * 30})
    with pytest.raises(RecordKeyError) as error:
        generator({RK: "uuid", PP: "city"}).record_keys(batch)
    assert str(error.value) == "record key field 'uuid' is null in 3 rows; first at row 17"


def test_empty_and_mixed_record_keys():
    kg = generator({RK: "uuid"})
    with pytest.raises(RecordKeyError, match="is empty in 1 row; first at row 1"):
        kg.record_keys(pa.table({"uuid": ["a", ""]}))
    with pytest.raises(RecordKeyError, match="is null or empty in 2 rows; first at row 0"):
        kg.record_keys(pa.table({"uuid": ["", None, "x"]}))


def test_missing_record_key_column_names_the_columns_present():
    with pytest.raises(RecordKeyError) as error:
        generator({RK: "id"}).record_keys(TRIPS)
    assert str(error.value) == (
        "record key field 'id' is not in the batch; columns present: uuid, city, ts, fare"
    )


def test_complex_record_keys():
    kg = generator({RK: "uuid,ts", PP: "city"})
    assert kg.record_keys(TRIPS).to_pylist() == ["uuid:a1,ts:1", "uuid:b2,ts:2", "uuid:c3,ts:3"]


def test_complex_placeholders_and_all_missing_error():
    kg = generator({RK: "a,b"})
    batch = pa.table({"a": ["x", None, ""], "b": [None, "y", "z"]})
    assert kg.record_keys(batch).to_pylist() == [
        "a:x,b:__null__",
        "a:__null__,b:y",
        "a:__empty__,b:z",
    ]
    bad = pa.table({"a": ["x", None, ""], "b": ["y", "", None]})
    with pytest.raises(RecordKeyError) as error:
        kg.record_keys(bad)
    assert str(error.value) == (
        "record key fields 'a', 'b' are all null or empty in 2 rows; first at row 1"
    )


def test_complex_with_one_key_field_keeps_the_field_name():
    options = {RK: "uuid", PP: "city", CLS: KG + "ComplexKeyGenerator"}
    assert generator(options).record_keys(TRIPS).to_pylist()[0] == "uuid:a1"
    options["hoodie.write.complex.keygen.new.encoding"] = "true"  # what 0.14.1/0.15.0 wrote
    assert generator(options).record_keys(TRIPS).to_pylist()[0] == "a1"
    with pytest.raises(RecordKeyError, match="'uuid' is null"):
        generator(options).record_keys(pa.table({"uuid": [None], "city": ["x"]}))


def test_nonpartitioned_keys_depend_on_the_number_of_fields():
    one = generator({RK: "uuid"})
    two = generator({RK: "uuid,ts", CLS: KG + "NonpartitionedKeyGenerator"})
    assert one.record_keys(TRIPS).to_pylist()[0] == "a1"
    assert two.record_keys(TRIPS).to_pylist()[0] == "uuid:a1,ts:1"
    assert one.partition_paths(TRIPS).to_pylist() == ["", "", ""]
    assert two.partition_path_fields == []


def test_global_delete_always_writes_field_names():
    kg = generator({RK: "uuid", PP: "city", CLS: KG + "GlobalDeleteKeyGenerator"})
    assert kg.record_keys(TRIPS).to_pylist()[0] == "uuid:a1"
    assert kg.partition_paths(TRIPS).to_pylist() == ["", "", ""]


def test_nested_fields():
    struct = pa.array(
        [{"id": 1, "region": {"name": "us"}}, {"id": 2, "region": None}, None],
        pa.struct([("id", pa.int64()), ("region", pa.struct([("name", pa.string())]))]),
    )
    batch = pa.table({"rec": struct})
    kg = generator({RK: "rec.id", PP: "rec.region.name", HIVE: "true"})
    assert kg.record_keys(batch.slice(0, 2)).to_pylist() == ["1", "2"]
    assert kg.partition_paths(batch).to_pylist() == [
        "rec.region.name=us",
        "rec.region.name=__HIVE_DEFAULT_PARTITION__",
        "rec.region.name=__HIVE_DEFAULT_PARTITION__",
    ]
    with pytest.raises(RecordKeyError, match="'rec.id' is null in 1 row; first at row 2"):
        kg.record_keys(batch)
    with pytest.raises(RecordKeyError, match="struct 'rec' has no field 'uuid'"):
        generator({RK: "rec.uuid"}).record_keys(batch)
    with pytest.raises(RecordKeyError, match="'rec.id' is of type int64, not a struct"):
        generator({RK: "rec.id.x"}).record_keys(batch)


def test_record_batch_chunked_dictionary_and_empty_inputs():
    kg = generator({RK: "uuid", PP: "city"})
    batch = pa.record_batch({"uuid": ["a"], "city": pa.array(["sf"]).dictionary_encode()})
    assert kg.record_keys(batch).to_pylist() == ["a"]
    assert kg.partition_paths(batch).to_pylist() == ["sf"]
    chunked = pa.concat_tables([TRIPS, TRIPS])
    assert kg.record_keys(chunked).to_pylist() == ["a1", "b2", "c3"] * 2
    assert len(kg.record_keys(TRIPS.slice(0, 0))) == 0
    assert len(kg.partition_paths(TRIPS.slice(0, 0))) == 0


# --- how values are written ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (
            pa.array([1.0, 100.0, 0.1, 1e7, 1.5e7, 1e-3, 9.99e-4, 123456789.123, 1e-7, 0.0, -0.0]),
            [
                "1.0",
                "100.0",
                "0.1",
                "1.0E7",
                "1.5E7",
                "0.001",
                "9.99E-4",
                "1.23456789123E8",
                "1.0E-7",
                "0.0",
                "-0.0",
            ],
        ),
        (
            pa.array([float("nan"), float("inf"), float("-inf"), -1234.5, 1.7976931348623157e308]),
            ["NaN", "Infinity", "-Infinity", "-1234.5", "1.7976931348623157E308"],
        ),
        (
            pa.array([1.1, 3.4028235e38, 16777216.0], pa.float32()),
            ["1.1", "3.4028235E38", "1.6777216E7"],
        ),
        (pa.array([True, False]), ["true", "false"]),
        (pa.array([-5, 127], pa.int8()), ["-5", "127"]),
        (
            pa.array(
                [decimal.Decimal("12345.67890"), decimal.Decimal("-1.00000")], pa.decimal128(10, 5)
            ),
            ["12345.67890", "-1.00000"],
        ),
        (
            pa.array([decimal.Decimal("0.0000001"), decimal.Decimal("0E-7")], pa.decimal128(10, 7)),
            ["1E-7", "0E-7"],
        ),
        (pa.array([datetime.date(2023, 4, 1)]), ["2023-04-01"]),
        (pa.array(["x"], pa.large_string()), ["x"]),
        (pa.array([None, 1], pa.int64()), [None, "1"]),
    ],
)
def test_values_are_written_as_java_writes_them(values, expected):
    assert java_strings(values, "field", consistent_timestamps=False).to_pylist() == expected


def test_timestamps_are_raw_avro_counts_unless_consistent():
    micros = pa.array([1680350460123456, -1500], pa.timestamp("us", tz="UTC"))
    millis = pa.array([1680350460120], pa.timestamp("ms"))
    assert java_strings(micros, "f", False).to_pylist() == ["1680350460123456", "-1500"]
    assert java_strings(millis, "f", False).to_pylist() == ["1680350460120"]
    assert java_strings(micros, "f", True).to_pylist() == [
        "2023-04-01 12:01:00.123",
        "1969-12-31 23:59:59.999",
    ]
    assert java_strings(millis, "f", True).to_pylist() == ["2023-04-01 12:01:00.12"]
    seconds = pa.array([0], pa.timestamp("s"))
    assert java_strings(seconds, "f", True).to_pylist() == ["1970-01-01 00:00:00.0"]


def test_types_without_a_java_string_are_refused():
    batch = pa.table({"blob": [b"x"], "tags": [["a"]]})
    with pytest.raises(RecordKeyError, match="record key field 'blob' has Arrow type binary"):
        generator({RK: "blob"}).record_keys(batch)
    with pytest.raises(RecordKeyError, match="partition path field 'tags' has Arrow type list"):
        generator({RK: "blob", PP: "tags"}).partition_paths(batch)


def test_consistent_timestamp_option_reaches_record_keys():
    batch = pa.table({"ts": pa.array([1680350460123000], pa.timestamp("us"))})
    consistent = "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled"
    options = {RK: "ts", consistent: "true"}
    assert generator(options).record_keys(batch).to_pylist() == ["2023-04-01 12:01:00.123"]


# --- partition paths ----------------------------------------------------------------------


def test_default_partition_for_null_and_empty_values():
    batch = pa.table({"id": [1, 2, 3], "city": ["sf", None, ""]})
    assert generator({RK: "id", PP: "city"}).partition_paths(batch).to_pylist() == [
        "sf",
        "__HIVE_DEFAULT_PARTITION__",
        "__HIVE_DEFAULT_PARTITION__",
    ]
    assert generator({RK: "id", PP: "city", HIVE: "true"}).partition_paths(batch).to_pylist() == [
        "city=sf",
        "city=__HIVE_DEFAULT_PARTITION__",
        "city=__HIVE_DEFAULT_PARTITION__",
    ]


def test_several_partition_fields_join_with_slashes():
    batch = pa.table({"id": [1, 2], "country": ["us", None], "day": [20230401, 20230402]})
    kg = generator({RK: "id", PP: "country,day"})
    assert type(kg) is ComplexKeyGenerator
    assert kg.partition_paths(batch).to_pylist() == [
        "us/20230401",
        "__HIVE_DEFAULT_PARTITION__/20230402",
    ]
    hive = generator({RK: "id", PP: "country,day", HIVE: "true"})
    assert hive.partition_paths(batch).to_pylist() == [
        "country=us/day=20230401",
        "country=__HIVE_DEFAULT_PARTITION__/day=20230402",
    ]


def test_url_encoding_uses_hives_escape_set():
    values = [
        "a/b",
        "100%",
        "k=v:w?",
        "x#y*z",
        "q'\"\\",
        "{[]}^",
        "tab\there",
        "\x7f",
        "ok-_.~ é",
        "",
    ]
    batch = pa.table({"id": list(range(len(values))), "p": values})
    kg = generator({RK: "id", PP: "p", ENCODE: "true", HIVE: "true"})
    assert kg.partition_paths(batch).to_pylist() == [
        "p=a%2Fb",
        "p=100%25",
        "p=k%3Dv%3Aw%3F",
        "p=x%23y%2Az",
        "p=q%27%22%5C",
        "p=%7B%5B%5D}%5E",
        "p=tab%09here",
        "p=%7F",
        "p=ok-_.~ é",
        "p=__HIVE_DEFAULT_PARTITION__",
    ]
    plain = generator({RK: "id", PP: "p"})
    assert plain.partition_paths(batch.slice(0, 1)).to_pylist() == ["a/b"]  # not escaped


def test_missing_partition_column_is_an_error():
    with pytest.raises(RecordKeyError, match="partition path field 'region' is not in the batch"):
        generator({RK: "uuid", PP: "region"}).partition_paths(TRIPS)


def test_partition_values_are_written_like_keys():
    batch = pa.table(
        {
            "id": [1, 2],
            "d": pa.array([datetime.date(2023, 4, 1), None]),
            "f": [1.0, 2.5e-5],
            "b": [True, None],
        }
    )
    kg = generator({RK: "id", PP: "d,f,b"})
    assert kg.partition_paths(batch).to_pylist() == [
        "2023-04-01/1.0/true",
        "__HIVE_DEFAULT_PARTITION__/2.5E-5/__HIVE_DEFAULT_PARTITION__",
    ]


def test_custom_generator_mixes_simple_and_timestamp_parts():
    batch = pa.table(
        {"uuid": ["a", "b"], "city": ["sf", None], "ts": pa.array([1680350460, None], pa.int64())}
    )
    kg = generator(
        {
            RK: "uuid",
            PP: "city:SIMPLE,ts:timestamp",
            HIVE: "true",
            "hoodie.keygen.timebased.timestamp.type": "UNIX_TIMESTAMP",
            "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd",
        }
    )
    assert kg.class_name == KG + "CustomKeyGenerator"
    assert kg.partition_path_fields == ["city", "ts"]
    assert kg.record_keys(batch).to_pylist() == ["a", "b"]
    assert kg.partition_paths(batch).to_pylist() == [
        "city=sf/ts=2023-04-01",
        "city=__HIVE_DEFAULT_PARTITION__/ts=1970-01-01",
    ]
    two_keys = generator({RK: "uuid,city", PP: "city:SIMPLE"})
    assert two_keys.record_keys(batch.slice(0, 1)).to_pylist() == ["uuid:a,city:sf"]


def test_timestamp_generator_uses_the_simple_record_key():
    kg = generator(
        {
            RK: "uuid",
            PP: "ts",
            CLS: KG + "TimestampBasedKeyGenerator",
            "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
            "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
        }
    )
    assert type(kg) is TimestampBasedKeyGenerator
    assert kg.record_keys(TRIPS).to_pylist() == ["a1", "b2", "c3"]
    assert kg.partition_paths(TRIPS).to_pylist() == ["1970/01/01"] * 3
