"""TimestampBasedKeyGenerator: Java Hudi's time types, Joda-Time patterns, zones and defaults."""

from __future__ import annotations

import datetime
import decimal

import pyarrow as pa
import pytest

from hudi_core.config.option import Options
from hudi_core.errors import InvalidOptionError, RecordKeyError
from hudi_core.keygen import key_generator_for
from hudi_core.keygen.joda import JodaFormatter, JodaParser
from hudi_core.keygen.zones import java_time_zone

TB = "hoodie.keygen.timebased."
KEYGEN = "org.apache.hudi.keygen."


def paths(values: pa.Array | list, timestamp_type: str, output: str, **settings: str) -> list:
    """Partition paths of `values` in field `ts`; settings name hoodie.keygen.timebased.* keys
    with dots written as underscores (input_dateformat=...)."""
    values = values if isinstance(values, pa.Array) else pa.array(values)
    batch = pa.table({"id": pa.array(range(len(values)), pa.int64()), "ts": values})
    options = {
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "ts",
        "hoodie.datasource.write.keygenerator.class": KEYGEN + "TimestampBasedKeyGenerator",
        TB + "timestamp.type": timestamp_type,
        TB + "output.dateformat": output,
    }
    for key, value in settings.items():
        options[key if key.startswith("hoodie.") else TB + key.replace("_", ".")] = value
    return key_generator_for(Options(options)).partition_paths(batch).to_pylist()


ISO_MILLIS = "yyyy-MM-dd'T'HH:mm:ss.SSSZ"


# --- DATE_STRING ----------------------------------------------------------------------------


def test_date_strings_keep_their_own_offset_without_an_output_zone():
    values = [
        "2023-04-01T12:01:00.123Z",
        "2023-04-01T12:01:00.123+05:30",
        "2023-04-01T23:59:00.000-0800",
    ]
    assert paths(values, "DATE_STRING", "yyyy/MM/dd/HH", input_dateformat=ISO_MILLIS) == [
        "2023/04/01/12",
        "2023/04/01/12",
        "2023/04/01/23",
    ]
    assert paths(
        values, "DATE_STRING", "yyyy/MM/dd/HH", input_dateformat=ISO_MILLIS, output_timezone="UTC"
    ) == ["2023/04/01/12", "2023/04/01/06", "2023/04/02/07"]


def test_input_timezone_applies_to_strings_without_offset():
    values = ["2023-04-01 12:00:00"]
    fmt = "yyyy-MM-dd HH:mm:ss"
    assert paths(
        values,
        "DATE_STRING",
        "yyyy-MM-dd HH:mm",
        input_dateformat=fmt,
        input_timezone="Asia/Kolkata",
    ) == ["2023-04-01 12:00"]
    assert paths(
        values,
        "DATE_STRING",
        "yyyy-MM-dd HH:mm",
        input_dateformat=fmt,
        input_timezone="Asia/Kolkata",
        output_timezone="UTC",
    ) == ["2023-04-01 06:30"]
    # Without any zone Hudi falls back to the JVM zone, taken here as UTC.
    assert paths(values, "DATE_STRING", "yyyy-MM-dd HH:mm", input_dateformat=fmt) == [
        "2023-04-01 12:00"
    ]


def test_input_zone_wins_over_the_parsed_offset_for_printing():
    assert paths(
        ["2023-04-01T12:00:00.000Z"],
        "DATE_STRING",
        "HH:mm ZZ",
        input_dateformat=ISO_MILLIS,
        input_timezone="Asia/Tokyo",
    ) == ["21:00 +09:00"]


def test_deprecated_timezone_sets_input_and_output():
    assert paths([0], "UNIX_TIMESTAMP", "yyyy-MM-dd HH ZZZ", timezone="GMT+8") == [
        "1970-01-01 08 +08:00"
    ]
    assert paths([0], "UNIX_TIMESTAMP", "HH", timezone="GMT+8", output_timezone="UTC") == [
        "08"
    ]  # the deprecated option wins


def test_first_matching_input_format_wins():
    values = ["2023-04-01", "2023-04-01T23:00:00+0100"]
    assert paths(
        values, "DATE_STRING", "yyyyMMdd", input_dateformat="yyyy-MM-dd'T'HH:mm:ssZ,yyyy-MM-dd"
    ) == ["20230401", "20230401"]
    assert paths(
        ["2023-04-01"], "MIXED", "yyyy-MM-dd", input_dateformat="yyyy-dd-MM,yyyy-MM-dd"
    ) == ["2023-01-04"]


def test_input_format_list_delimiter_is_a_regex():
    assert paths(
        ["2023/04/01", "01.04.2023"],
        "DATE_STRING",
        "yyyy-MM-dd",
        input_dateformat="yyyy/MM/dd | dd.MM.yyyy",
        input_dateformat_list_delimiter_regex=r"\s*\|\s*",
    ) == ["2023-04-01", "2023-04-01"]


def test_null_date_string_uses_hudis_default_instant():
    assert paths(
        [None, "2023-04-01T12:01:00.123Z"],
        "DATE_STRING",
        "yyyy/MM/dd/HH",
        input_dateformat=ISO_MILLIS,
    ) == ["1970/01/01/00", "2023/04/01/12"]
    # The default (epoch + 1 ms) is printed with the first input format in the input zone ...
    assert paths(
        pa.array([None], pa.string()),
        "DATE_STRING",
        "yyyy-MM-dd HH",
        input_dateformat="yyyy-MM-dd HH:mm:ss",
        input_timezone="America/New_York",
    ) == ["1969-12-31 19"]
    # ... else in the output zone, then parsed back (here as UTC wall time), as Java does.
    assert paths(
        pa.array([None], pa.string()),
        "DATE_STRING",
        "yyyy-MM-dd HH",
        input_dateformat="yyyy-MM-dd HH:mm:ss",
        output_timezone="Asia/Kolkata",
    ) == ["1970-01-01 11"]


def test_unparseable_and_out_of_range_strings():
    with pytest.raises(RecordKeyError) as error:
        paths(
            ["2023-04-01", "2023/04/01", "x"], "DATE_STRING", "yyyy", input_dateformat="yyyy-MM-dd"
        )
    assert str(error.value) == (
        "partition path field 'ts' does not match the input date format(s) 'yyyy-MM-dd' "
        "in 2 rows; first at row 1 (value '2023/04/01')"
    )
    with pytest.raises(RecordKeyError, match="out of range in 1 row; first at row 1"):
        paths(["2024-02-29", "2023-02-29"], "DATE_STRING", "yyyy", input_dateformat="yyyy-MM-dd")
    with pytest.raises(RecordKeyError, match="out of range"):
        paths(["2023-04-01 24:00"], "DATE_STRING", "yyyy", input_dateformat="yyyy-MM-dd HH:mm")


def test_daylight_saving_gap_and_overlap():
    fmt, zone = "yyyy-MM-dd HH:mm:ss", "America/New_York"
    with pytest.raises(RecordKeyError, match="daylight-saving gap of America/New_York"):
        paths(
            ["2023-03-12 02:30:00"],
            "DATE_STRING",
            "yyyy",
            input_dateformat=fmt,
            input_timezone=zone,
        )
    # In the autumn overlap Joda takes the earlier instant (still daylight time, -04:00).
    assert paths(
        ["2023-11-05 01:30:00"],
        "DATE_STRING",
        "yyyy-MM-dd HH:mm",
        input_dateformat=fmt,
        input_timezone=zone,
        output_timezone="UTC",
    ) == ["2023-11-05 05:30"]


def test_strings_need_a_string_timestamp_type_and_the_reverse():
    with pytest.raises(InvalidOptionError, match="holds strings, but .*UNIX_TIMESTAMP"):
        paths(["1680350460"], "UNIX_TIMESTAMP", "yyyy")
    with pytest.raises(InvalidOptionError, match="holds int64 values, but .*DATE_STRING"):
        paths([1680350460], "DATE_STRING", "yyyy", input_dateformat="yyyy")
    # Columns holding only nulls take the default, whatever their type.
    assert paths(
        pa.array([None], pa.int64()), "DATE_STRING", "yyyy-MM-dd", input_dateformat="yyyy-MM-dd"
    ) == ["1970-01-01"]
    assert paths(pa.array([None], pa.string()), "UNIX_TIMESTAMP", "HH:mm:ss") == ["00:00:01"]


# --- numbers, dates and timestamps ----------------------------------------------------------


def test_numeric_timestamp_types():
    out = "yyyy-MM-dd HH:mm:ss.SSS"
    assert paths(pa.array([1680350460, None], pa.int64()), "UNIX_TIMESTAMP", out) == [
        "2023-04-01 12:01:00.000",
        "1970-01-01 00:00:01.000",
    ]
    assert paths(pa.array([1680350460123, None], pa.int64()), "EPOCHMILLISECONDS", out) == [
        "2023-04-01 12:01:00.123",
        "1970-01-01 00:00:00.001",
    ]
    assert paths(pa.array([1680350460123456, None]), "EPOCHMICROSECONDS", out) == [
        "2023-04-01 12:01:00.123",
        "1970-01-01 00:00:00.000",
    ]
    assert paths(pa.array([1680350460], pa.int32()), "SCALAR", out) == ["2023-04-01 12:01:00.000"]


@pytest.mark.parametrize(
    ("unit", "value", "expected"),
    [
        ("DAYS", 19448, "2023-04-01 00:00:00.000"),
        ("HOURS", None, "1970-01-01 01:00:00.000"),
        ("MINUTES", 1, "1970-01-01 00:01:00.000"),
        ("MILLISECONDS", -1, "1969-12-31 23:59:59.999"),
        ("MICROSECONDS", -1500, "1969-12-31 23:59:59.999"),  # truncated toward zero
        ("NANOSECONDS", 1_680_350_460_123_999_999, "2023-04-01 12:01:00.123"),
    ],
)
def test_scalar_time_units(unit, value, expected):
    values = pa.array([value], pa.int64())
    assert paths(values, "SCALAR", "yyyy-MM-dd HH:mm:ss.SSS", timestamp_scalar_time_unit=unit) == [
        expected
    ]


def test_floats_and_decimals_are_truncated_to_longs():
    assert paths([1680350460.9, -0.5, float("nan")], "UNIX_TIMESTAMP", "yyyy-MM-dd HH:mm:ss") == [
        "2023-04-01 12:01:00",
        "1970-01-01 00:00:00",
        "1970-01-01 00:00:00",
    ]
    money = pa.array([decimal.Decimal("1680350460.99")], pa.decimal128(12, 2))
    assert paths(money, "UNIX_TIMESTAMP", "HH:mm:ss") == ["12:01:00"]


def test_dates_are_epoch_days_in_the_configured_unit():
    dates = pa.array([datetime.date(2023, 4, 1)])
    assert paths(dates, "SCALAR", "yyyy/MM/dd", timestamp_scalar_time_unit="DAYS") == ["2023/04/01"]
    # Hudi reads the epoch day as a number of the type's unit, even seconds.
    assert paths(dates, "UNIX_TIMESTAMP", "yyyy-MM-dd HH:mm:ss") == ["1970-01-01 05:24:08"]


def test_timestamp_columns_are_raw_counts_unless_consistent():
    micros = pa.array([1680350460123456], pa.timestamp("us", tz="UTC"))
    assert paths(micros, "EPOCHMICROSECONDS", "yyyy-MM-dd HH:mm") == ["2023-04-01 12:01"]
    consistent = "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled"
    assert paths(micros, "UNIX_TIMESTAMP", "yyyy-MM-dd HH:mm", **{consistent: "true"}) == [
        "2023-04-01 12:01"
    ]
    millis = pa.array([1680350460123, None], pa.timestamp("ms"))
    assert paths(millis, "EPOCHMILLISECONDS", "yyyy-MM-dd HH:mm:ss.SSS") == [
        "2023-04-01 12:01:00.123",
        "1970-01-01 00:00:00.001",
    ]


def test_output_zone_with_daylight_saving():
    values = pa.array([1680350460, 1672574460], pa.int64())  # 2023-04-01 / 2023-01-01 12:01Z
    assert paths(
        values, "UNIX_TIMESTAMP", "yyyy-MM-dd HH:mm Z ZZ ZZZ", output_timezone="America/Los_Angeles"
    ) == [
        "2023-04-01 05:01 -0700 -07:00 America/Los_Angeles",
        "2023-01-01 04:01 -0800 -08:00 America/Los_Angeles",
    ]
    assert paths(values, "UNIX_TIMESTAMP", "HH ZZZ", output_timezone="EST") == [
        "08 America/New_York",
        "07 America/New_York",
    ]


def test_hive_style_and_url_encoding_of_timestamp_paths():
    values = pa.array([1680350460], pa.int64())
    assert paths(
        values,
        "UNIX_TIMESTAMP",
        "yyyy/MM/dd",
        **{
            "hoodie.datasource.write.hive_style_partitioning": "true",
        },
    ) == ["ts=2023/04/01"]
    assert paths(
        values,
        "UNIX_TIMESTAMP",
        "yyyy/MM/dd",
        **{
            "hoodie.datasource.write.hive_style_partitioning": "true",
            "hoodie.datasource.write.partitionpath.urlencode": "true",
        },
    ) == ["ts=2023%2F04%2F01"]


def test_unsupported_value_types():
    with pytest.raises(RecordKeyError, match="Arrow type bool"):
        paths([True], "UNIX_TIMESTAMP", "yyyy")


# --- options --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"output.dateformat": "yyyy-MM-dd'T'HH:mm:ssXXX"},
            "'XXX' is not a Joda-Time pattern letter",
        ),
        ({"output.dateformat": "uuuu"}, "'uuuu' is not a Joda-Time pattern letter"),
        ({"output.dateformat": "yyyy zzz"}, "'zzz' is not supported for formatting"),
        ({"output.dateformat": ""}, "needs a Joda-Time date pattern"),
        (
            {"timestamp.type": "DATE_STRING", "input.dateformat": "EEE yyyy"},
            "'EEE' is not supported for parsing",
        ),
        ({"timestamp.type": "DATE_STRING"}, "needs option hoodie.keygen.timebased.input"),
        ({"timestamp.type": "HOURLY"}, "is not one of"),
        ({"output.timezone": "Mars/Olympus"}, "'Mars/Olympus' is not a time zone Java knows"),
        ({"output.timezone": "GMT+25"}, "not a valid GMT offset"),
        ({"timestamp.type": "SCALAR", "timestamp.scalar.time.unit": "WEEKS"}, "is not one of"),
    ],
)
def test_invalid_timestamp_options(settings, message):
    base = {"timestamp.type": "UNIX_TIMESTAMP", "output.dateformat": "yyyy"} | settings
    options = {
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "ts",
        "hoodie.datasource.write.keygenerator.class": KEYGEN + "TimestampBasedKeyGenerator",
    } | {TB + key: value for key, value in base.items()}
    with pytest.raises(InvalidOptionError, match=message.replace("+", r"\+")):
        key_generator_for(Options(options))


def test_deltastreamer_option_names_are_alternatives():
    options = {
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "ts",
        "hoodie.datasource.write.keygenerator.class": KEYGEN + "TimestampBasedAvroKeyGenerator",
        "hoodie.deltastreamer.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
        "hoodie.deltastreamer.keygen.timebased.output.dateformat": "yyyy",
    }
    batch = pa.table({"id": [1], "ts": [1680350460123]})
    assert key_generator_for(Options(options)).partition_paths(batch).to_pylist() == ["2023"]


# --- Joda-Time patterns and Java zones ------------------------------------------------------


def _format(pattern: str, utc_ms: int, offset_ms: int = 0, zone_id: str | None = "UTC") -> str:
    local = pa.array([utc_ms + offset_ms], pa.int64())
    return JodaFormatter(pattern, "k").format(local, pa.array([offset_ms]), zone_id)[0].as_py()


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("EEE, dd MMM yyyy hh:mm:ss a", "Sat, 01 Apr 2023 03:04:05 PM"),
        ("EEEE d MMMM yy", "Saturday 1 April 23"),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "2023-04-01T15:04:05.678+0000"),
        ("S SS SSSS", "6 67 6780"),
        ("D DDDD e w x", "91 0091 6 13 2023"),
        ("'at' H 'o''clock' ''", "at 15 o'clock '"),
        ("yyyyy M/d", "02023 4/1"),
        ("ZZZ", "UTC"),
    ],
)
def test_joda_output_patterns(pattern, expected):
    assert _format(pattern, 1680361445678) == expected


def test_joda_hours_around_midnight_and_offsets():
    assert _format("H k K h a", 1680307200000) == "0 24 0 12 AM"
    assert _format("HH:mm Z ZZ ZZZ", 0, offset_ms=19_800_000, zone_id=None) == (
        "05:30 +0530 +05:30 +05:30"
    )
    assert _format("Z ZZ", 0, offset_ms=-3_600_000) == "-0100 -01:00"


def test_joda_parsing():
    parser = JodaParser("dd MMM yy h:mm a", "k", today=datetime.date(2025, 6, 1))
    parsed = parser.parse(
        pa.array(
            [
                "01 APR 23 12:05 am",
                "1 april 45 1:05 PM",
                "01 Apr 44 1:05 pm",
                "01 Apr 2023 1:05 pm",
                "01 aPr 23 1:05 pm",
            ]
        )
    )
    assert parsed.matched.tolist() == [True, True, True, True, False]
    expected = [
        datetime.datetime(2023, 4, 1, 0, 5),
        datetime.datetime(1945, 4, 1, 13, 5),
        datetime.datetime(2044, 4, 1, 13, 5),
        datetime.datetime(2023, 4, 1, 13, 5),
    ]
    epoch = datetime.datetime(1970, 1, 1)
    assert parsed.local_ms[:4].tolist() == [
        (d - epoch) // datetime.timedelta(milliseconds=1) for d in expected
    ]


def test_joda_offsets_fractions_and_literals():
    parser = JodaParser("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "k")
    parsed = parser.parse(
        pa.array(
            [
                "2023-04-01T12:01:00.1z",
                "2023-04-01t12:01:00.12+05:30",
                "2023-04-01T12:01:00.123-0800",
                "2023-04-01T12:01:00.123+05",
                "2023-04-01T12:01:00.123+24:00",
                "2023-04-01T12:01:00.1234Z",
            ]
        )
    )
    assert parsed.matched.tolist() == [True, True, True, True, False, False]
    assert parsed.offset_ms[:4].tolist() == [0, 19_800_000, -28_800_000, 18_000_000]
    assert (parsed.local_ms[:3] % 1000).tolist() == [100, 120, 123]


def test_joda_two_digit_year_next_to_numbers_is_strict():
    parser = JodaParser("yyMMdd", "k", today=datetime.date(2025, 6, 1))
    parsed = parser.parse(pa.array(["230401", "20230401"]))
    assert parsed.matched.tolist() == [True, False]
    assert parsed.local_ms[0] == 1680307200000


@pytest.mark.parametrize(
    ("zone_id", "joda_id", "arrow_tz"),
    [
        ("UTC", "UTC", "UTC"),
        ("GMT", "UTC", "UTC"),
        ("GMT+8", "+08:00", "+08:00"),
        ("GMT-0530", "-05:30", "-05:30"),
        ("GMT+05:30", "+05:30", "+05:30"),
        ("GMT+0", "UTC", "UTC"),
        ("EST", "America/New_York", "America/New_York"),
        ("IST", "Asia/Kolkata", "Asia/Kolkata"),
        ("Europe/Paris", "Europe/Paris", "Europe/Paris"),
    ],
)
def test_java_zone_ids(zone_id, joda_id, arrow_tz):
    zone = java_time_zone(zone_id, "k")
    assert (zone.joda_id, zone.arrow_tz) == (joda_id, arrow_tz)
