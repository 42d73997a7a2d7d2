"""TimestampBasedKeyGenerator's partition values (TimestampBasedAvroKeyGenerator,
HoodieDateTimeParser, TimestampKeyGeneratorConfig of Hudi 0.14/0.15).

A value becomes epoch millis: numbers (and dates, as epoch days; timestamps, as their raw Avro
count unless consistent logical timestamps are on, then as epoch millis) through the time unit
of the timestamp type; strings through the input date formats. The millis are printed with the
output date format in the output zone. When no output zone is configured, a string value keeps
the zone it was parsed in (the input zone, else its own offset); everything else falls to the
JVM's zone, taken here as UTC. A null value is replaced by Hudi's default first: 1 in the time
unit for numeric types, or for DATE_STRING/MIXED the instant 1 ms after the epoch printed with
the first input format (in the input zone, else the output zone, else GMT) and parsed back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.config import keygen_options as ko
from hudi_core.config.option import ConfigOption, Options
from hudi_core.errors import InvalidOptionError, RecordKeyError
from hudi_core.keygen.columns import bad_row_summary, rows_phrase
from hudi_core.keygen.joda import JodaFormatter, JodaParser
from hudi_core.keygen.render import avro_timestamp_count, epoch_millis
from hudi_core.keygen.zones import UTC, Zone, java_time_zone

_TYPE_UNITS = {
    "UNIX_TIMESTAMP": "SECONDS",
    "EPOCHMILLISECONDS": "MILLISECONDS",
    "EPOCHMICROSECONDS": "MICROSECONDS",
}
# TimeUnit -> (multiply, divide) to reach millis, as MILLISECONDS.convert does.
_TO_MILLIS = {
    "NANOSECONDS": (1, 1_000_000),
    "MICROSECONDS": (1, 1_000),
    "MILLISECONDS": (1, 1),
    "SECONDS": (1_000, 1),
    "MINUTES": (60_000, 1),
    "HOURS": (3_600_000, 1),
    "DAYS": (86_400_000, 1),
}
_LONG_MAX = np.iinfo(np.int64).max
_LONG_MIN = np.iinfo(np.int64).min
_DEFAULT_PARSER = "org.apache.hudi.keygen.parser.HoodieDateTimeParser"


@dataclass(frozen=True)
class TimestampSettings:
    timestamp_type: str
    time_unit: str | None
    first_input_pattern: str | None
    parsers: tuple[JodaParser, ...]
    input_zone: Zone | None
    output_zone: Zone | None
    output_format: JodaFormatter
    consistent_timestamps: bool

    @property
    def parses_strings(self) -> bool:
        return self.timestamp_type in ("DATE_STRING", "MIXED")

    @classmethod
    def from_options(cls, options: Options) -> TimestampSettings:
        parser_class = options.get_option(ko.DATE_TIME_PARSER_CLASS)
        if parser_class != _DEFAULT_PARSER:
            raise InvalidOptionError(
                f"option {ko.DATE_TIME_PARSER_CLASS.key}={parser_class!r}: only Hudi's default "
                f"{_DEFAULT_PARSER} is supported"
            )
        timestamp_type = options.get_option(ko.TIMESTAMP_TYPE)
        if timestamp_type is None:
            raise InvalidOptionError(
                f"TimestampBasedKeyGenerator needs option {ko.TIMESTAMP_TYPE.key} (one of "
                f"{', '.join(ko.TIMESTAMP_TYPES)}); Hudi does not keep it in hoodie.properties, "
                "so pass the value the table was written with"
            )
        input_zone, output_zone = _zones(options)
        patterns = _input_patterns(options) if timestamp_type in ("DATE_STRING", "MIXED") else []
        return cls(
            timestamp_type=timestamp_type,
            time_unit=_time_unit(options, timestamp_type),
            first_input_pattern=patterns[0] if patterns else None,
            parsers=tuple(JodaParser(p.strip(), ko.INPUT_DATE_FORMAT.key) for p in patterns),
            input_zone=input_zone,
            output_zone=output_zone,
            output_format=_output_format(options),
            consistent_timestamps=options.get_option(ko.CONSISTENT_LOGICAL_TIMESTAMP),
        )


def _time_unit(options: Options, timestamp_type: str) -> str | None:
    if timestamp_type == "SCALAR":
        return options.get_option(ko.SCALAR_TIME_UNIT)
    return _TYPE_UNITS.get(timestamp_type)


def _output_format(options: Options) -> JodaFormatter:
    if not options.is_set(ko.OUTPUT_DATE_FORMAT):
        raise InvalidOptionError(
            f"TimestampBasedKeyGenerator needs option {ko.OUTPUT_DATE_FORMAT.key}, e.g. yyyy/MM/dd"
        )
    return JodaFormatter(options.get_option(ko.OUTPUT_DATE_FORMAT), ko.OUTPUT_DATE_FORMAT.key)


def _input_patterns(options: Options) -> list[str]:
    """The input formats, split like Java's String.split(delimiterRegex) (trailing empties go)."""
    listed = options.get_option(ko.INPUT_DATE_FORMAT)
    if not listed:
        raise InvalidOptionError(
            f"timestamp type DATE_STRING/MIXED needs option {ko.INPUT_DATE_FORMAT.key}, "
            "e.g. yyyy-MM-dd'T'HH:mm:ss.SSSZ"
        )
    delimiter = options.get_option(ko.INPUT_DATE_FORMAT_LIST_DELIMITER).strip() or ","
    try:
        patterns = re.split(delimiter, listed)
    except re.error as exc:
        raise InvalidOptionError(
            f"option {ko.INPUT_DATE_FORMAT_LIST_DELIMITER.key}={delimiter!r} is not a valid "
            f"regular expression: {exc}"
        ) from exc
    while patterns and not patterns[-1]:
        patterns.pop()
    return patterns or [""]


def _zones(options: Options) -> tuple[Zone | None, Zone | None]:
    """Input and output zones; the deprecated single timezone option wins when set."""
    if options.is_set(ko.TIMEZONE):
        both = _zone(options, ko.TIMEZONE)
        return both, both
    return _zone(options, ko.INPUT_TIMEZONE), _zone(options, ko.OUTPUT_TIMEZONE)


def _zone(options: Options, option: ConfigOption[str]) -> Zone | None:
    # Hudi reads these with an explicit "" fallback: unset means "no zone", not the doc default.
    if not options.is_set(option):
        return None
    zone_id = options.get_option(option)
    return java_time_zone(zone_id, option.key) if zone_id.strip() else None


# --- values to partition text -------------------------------------------------------------


def timestamp_partition_text(values: pa.Array, label: str, settings: TimestampSettings) -> pa.Array:
    """The output-format text of every value (before url-encoding and hive style)."""
    if settings.parses_strings:
        text = _string_input(values, label, settings)
        instants, zone, offsets = _parse_instants(text, label, settings)
    else:
        instants = _numeric_millis(values, label, settings)
        zone, offsets = settings.output_zone or UTC, None
    try:
        return _format(instants, zone, offsets, settings.output_format)
    except (pa.ArrowInvalid, OverflowError) as exc:
        raise RecordKeyError(f"{label}: a time value is out of range to format: {exc}") from exc


def _string_input(values: pa.Array, label: str, settings: TimestampSettings) -> pa.Array:
    is_text = (
        pa.types.is_string(values.type)
        or pa.types.is_large_string(values.type)
        or (pa.types.is_string_view(values.type))
    )
    if not is_text and values.null_count < len(values) and not pa.types.is_null(values.type):
        raise InvalidOptionError(
            f"{label} holds {values.type} values, but {ko.TIMESTAMP_TYPE.key}="
            f"{settings.timestamp_type} parses strings; use UNIX_TIMESTAMP, EPOCHMILLISECONDS, "
            "EPOCHMICROSECONDS or SCALAR for numbers, dates and timestamps"
        )
    text = values.cast(pa.string()) if is_text else pa.nulls(len(values), pa.string())
    if text.null_count:
        text = pc.fill_null(text, _default_date_string(settings))
    return text


def _default_date_string(settings: TimestampSettings) -> str:
    """Hudi's stand-in for a null date string: epoch + 1 ms in the first input format."""
    zone = settings.input_zone or settings.output_zone or UTC
    formatter = JodaFormatter(settings.first_input_pattern or "", ko.INPUT_DATE_FORMAT.key)
    instants = np.array([1], np.int64)
    return str(_format(instants, zone, None, formatter)[0].as_py())


def _parse_instants(
    text: pa.Array, label: str, settings: TimestampSettings
) -> tuple[np.ndarray, Zone | None, np.ndarray | None]:
    """Epoch millis of each string, and the zone (or per-row offsets) it is printed in."""
    n = len(text)
    local = np.zeros(n, np.int64)
    offsets = np.zeros(n, np.int64)
    has_offset = np.zeros(n, bool)
    pending = np.ones(n, bool)
    invalid = np.zeros(n, bool)
    for parser in settings.parsers:  # first format that consumes the whole text wins
        parsed = parser.parse(text)
        taken = pending & parsed.matched
        local = np.where(taken, parsed.local_ms, local)
        invalid |= taken & ~parsed.valid
        if parsed.offset_ms is not None:
            offsets = np.where(taken, parsed.offset_ms, offsets)
            has_offset |= taken
        pending &= ~taken
    _raise_for_rows(
        pending,
        text,
        label,
        "does not match the input date format(s) "
        + " / ".join(repr(p.pattern) for p in settings.parsers),
    )
    _raise_for_rows(invalid, text, label, "has a date or time field out of range")
    zone_in = settings.input_zone or UTC
    zoned = _local_to_instant(local, ~has_offset, zone_in, text, label)
    instants = np.where(has_offset, local - offsets, zoned)
    if settings.output_zone is not None:
        return instants, settings.output_zone, None
    if settings.input_zone is not None:
        return instants, settings.input_zone, None
    return instants, None, np.where(has_offset, offsets, 0)


def _local_to_instant(
    local: np.ndarray, rows: np.ndarray, zone: Zone, text: pa.Array, label: str
) -> np.ndarray:
    """Wall-clock millis in `zone` to instants; Joda takes the earlier instant in an overlap
    and rejects times in a gap (checked for `rows`, those without their own offset)."""
    if zone.fixed_offset_ms is not None:
        return local - zone.fixed_offset_ms
    wall = pa.array(local, pa.timestamp("ms"))
    early = pc.assume_timezone(wall, zone.arrow_tz, ambiguous="earliest", nonexistent="earliest")
    late = pc.assume_timezone(wall, zone.arrow_tz, ambiguous="earliest", nonexistent="latest")
    early_ms = np.asarray(early.view(pa.int64()))
    gap = rows & (early_ms != np.asarray(late.view(pa.int64())))
    _raise_for_rows(gap, text, label, f"falls in a daylight-saving gap of {zone.joda_id}")
    return early_ms


def _raise_for_rows(mask: np.ndarray, text: pa.Array, label: str, problem: str) -> None:
    if not mask.any():
        return
    count, first = bad_row_summary(pa.array(mask))
    raise RecordKeyError(
        f"{label} {problem} in {rows_phrase(count, first)} (value {text[first].as_py()!r})"
    )


def _numeric_millis(values: pa.Array, label: str, settings: TimestampSettings) -> np.ndarray:
    """Epoch millis of numbers, dates and timestamps, nulls replaced by Hudi's default 1."""
    unit = settings.time_unit or "SECONDS"
    kind = values.type
    if pa.types.is_timestamp(kind) and settings.consistent_timestamps:
        millis = epoch_millis(values)  # java.sql.Timestamp.getTime(): no unit conversion
        default = _to_millis(np.array([1], np.int64), unit)[0]
        return np.asarray(pc.fill_null(millis, default))
    counts = _java_longs(values, label, settings)
    valid = np.asarray(counts.is_valid())
    filled = np.asarray(pc.fill_null(counts, 1))  # Hudi's default partition value is 1L
    return _to_millis(np.where(valid, filled, 1), unit)


def _java_longs(values: pa.Array, label: str, settings: TimestampSettings) -> pa.Array:
    """The Java long Hudi takes from each value (longValue(), epoch day, raw Avro count)."""
    kind = values.type
    if pa.types.is_null(kind):
        return pa.nulls(len(values), pa.int64())
    if pa.types.is_integer(kind):
        return values.cast(pa.int64(), safe=False)
    if pa.types.is_floating(kind):
        return _double_to_long(values)
    if pa.types.is_decimal(kind):
        return pc.cast(values, pa.int64(), safe=False)  # BigDecimal.longValue truncates
    if pa.types.is_date(kind):
        return values.cast(pa.date32()).view(pa.int32()).cast(pa.int64())
    if pa.types.is_timestamp(kind):
        return avro_timestamp_count(values)
    is_text = (
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or (pa.types.is_string_view(kind))
    )
    if is_text and values.null_count == len(values):
        return pa.nulls(len(values), pa.int64())
    if is_text:
        raise InvalidOptionError(
            f"{label} holds strings, but {ko.TIMESTAMP_TYPE.key}={settings.timestamp_type} "
            f"reads numbers; use DATE_STRING with {ko.INPUT_DATE_FORMAT.key}"
        )
    raise RecordKeyError(
        f"{label} has Arrow type {kind}; TimestampBasedKeyGenerator takes numbers, strings, "
        "dates and timestamps"
    )


def _double_to_long(values: pa.Array) -> pa.Array:
    """Java's (long) cast: truncate, NaN to 0, saturate at the long range."""
    raw = np.asarray(pc.fill_null(values.cast(pa.float64()), 0.0))
    raw = np.nan_to_num(raw, nan=0.0, posinf=np.inf, neginf=-np.inf)
    high, low = raw >= 2.0**63, raw <= -(2.0**63)
    longs = np.trunc(np.where(high | low, 0.0, raw)).astype(np.int64)
    longs = np.where(high, _LONG_MAX, np.where(low, _LONG_MIN, longs))
    return pa.array(longs, pa.int64(), mask=np.asarray(values.is_null()))


def _to_millis(counts: np.ndarray, unit: str) -> np.ndarray:
    """TimeUnit.MILLISECONDS.convert: truncating division, saturating multiplication."""
    multiply, divide = _TO_MILLIS[unit]
    if divide > 1:
        quotient: np.ndarray = counts // divide + ((counts % divide != 0) & (counts < 0))
        return quotient
    if multiply == 1:
        return counts
    limit = _LONG_MAX // multiply
    scaled = np.where(np.abs(counts) > limit, 0, counts) * multiply
    return np.where(counts > limit, _LONG_MAX, np.where(counts < -limit, _LONG_MIN, scaled))


def _format(
    instants: np.ndarray, zone: Zone | None, offsets: np.ndarray | None, formatter: JodaFormatter
) -> pa.Array:
    """Print instants in `zone`, or, when zone is None, each at its own fixed `offsets`."""
    if zone is None:
        offset_ms = pa.array(offsets, pa.int64())
        zone_id = None
    elif zone.fixed_offset_ms is not None:
        offset_ms = pa.repeat(pa.scalar(zone.fixed_offset_ms, pa.int64()), len(instants))
        zone_id = zone.joda_id
    else:
        aware = pa.array(instants, pa.timestamp("ms", tz=zone.arrow_tz))
        wall = pc.local_timestamp(aware).view(pa.int64())
        offset_ms = pc.subtract(wall, pa.array(instants, pa.int64()))
        zone_id = zone.joda_id
    local = pc.add_checked(pa.array(instants, pa.int64()), offset_ms)
    return formatter.format(local, offset_ms, zone_id)
