"""Key values as the strings Java Hudi writes for them.

Hudi turns a field into a key part with `String.valueOf` on the Avro value, after
`HoodieAvroUtils.convertValueForSpecificDataTypes` (dates become LocalDate, decimals
BigDecimal, timestamps java.sql.Timestamp only when consistent logical timestamps are on).
So, per Arrow type:

- strings as they are; booleans `true`/`false`; integers in decimal;
- float/double as Java's Float/Double.toString (shortest round-trip digits, plain notation for
  1e-3 <= |v| < 1e7, else `d.dddE<n>`; `NaN`, `Infinity`, `-0.0`);
- decimals as BigDecimal.toString (plain, or `1E-7` style when the adjusted exponent is < -6);
- dates as LocalDate.toString (`2023-04-01`);
- timestamps as the raw epoch count of their Avro logical type (millis for s/ms columns, micros for
  us/ns columns), or, with consistent logical timestamps on, as java.sql.Timestamp.toString
  (`2023-04-01 12:01:00.123`) in UTC (Java uses the JVM's zone; UTC is assumed here);
- time-of-day as its raw Avro count (millis for s/ms, micros for us/ns).

Binary, nested and other types have no stable Java string form, so they are refused.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.errors import RecordKeyError

_SHORTEST = r"^(?P<neg>-?)(?P<int>\d+)(?:\.(?P<frac>\d+))?(?:e(?P<exp>[+-]\d+))?$"


def java_strings(values: pa.Array, label: str, consistent_timestamps: bool) -> pa.Array:
    """`values` rendered like Java's String.valueOf of the Avro value; nulls stay null."""
    kind = values.type
    if pa.types.is_null(kind):
        return pa.nulls(len(values), pa.string())
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
        return values.cast(pa.string())
    if pa.types.is_boolean(kind) or pa.types.is_integer(kind) or pa.types.is_decimal(kind):
        # Arrow's decimal text follows BigDecimal.toString, exponent rule included.
        return values.cast(pa.string())
    if pa.types.is_floating(kind):
        return java_float_strings(values)
    if pa.types.is_date(kind):
        return values.cast(pa.date32()).cast(pa.string())
    if pa.types.is_timestamp(kind):
        if consistent_timestamps:
            return java_timestamp_strings(epoch_millis(values))
        return avro_timestamp_count(values).cast(pa.string())
    if pa.types.is_time(kind):
        return avro_time_count(values).cast(pa.string())
    raise RecordKeyError(
        f"{label} has Arrow type {kind}, which Hudi has no stable string form for; "
        "use a string, number, decimal, boolean, date or timestamp field"
    )


def java_float_strings(values: pa.Array) -> pa.Array:
    """Float/Double.toString: shortest digits, placed per Java's plain/scientific rule."""
    if values.type == pa.float16():
        values = values.cast(pa.float32())
    parts = pc.extract_regex(values.cast(pa.string()), _SHORTEST)
    negative = pc.equal(pc.struct_field(parts, "neg"), "-")
    integer = pc.struct_field(parts, "int")
    all_digits = pc.binary_join_element_wise(integer, pc.struct_field(parts, "frac"), "")
    unpadded = pc.utf8_ltrim(all_digits, "0")
    digits = pc.utf8_rtrim(unpadded, "0")
    leading_zeros = pc.subtract(pc.utf8_length(all_digits), pc.utf8_length(unpadded))
    exponent = pc.add(
        pc.subtract(pc.subtract(pc.utf8_length(integer), 1), leading_zeros),
        _exponent_value(pc.struct_field(parts, "exp")),
    )
    text = _scientific(digits, exponent)
    for power in range(-3, 7):  # Java writes 1e-3 <= |v| < 1e7 in plain notation
        text = pc.if_else(pc.equal(exponent, power), _plain(digits, power), text)
    text = pc.if_else(pc.equal(digits, ""), "0.0", text)
    text = pc.if_else(negative, pc.binary_join_element_wise("-", text, ""), text)
    return _special_floats(values, text)


def _exponent_value(exponent_text: pa.Array) -> pa.Array:
    unsigned = pc.utf8_ltrim(exponent_text, "+")
    present = pc.not_equal(unsigned, "")
    return pc.if_else(present, pc.cast(pc.if_else(present, unsigned, "0"), pa.int32()), 0)


def _scientific(digits: pa.Array, exponent: pa.Array) -> pa.Array:
    first = pc.utf8_slice_codeunits(digits, 0, 1)
    rest = pc.utf8_slice_codeunits(digits, 1)
    rest = pc.if_else(pc.equal(rest, ""), "0", rest)
    return pc.binary_join_element_wise(first, ".", rest, "E", exponent.cast(pa.string()), "")


def _plain(digits: pa.Array, power: int) -> pa.Array:
    if power < 0:
        return pc.binary_join_element_wise("0." + "0" * (-power - 1), digits, "")
    whole = pc.utf8_slice_codeunits(pc.utf8_rpad(digits, power + 1, "0"), 0, power + 1)
    fraction = pc.utf8_slice_codeunits(digits, power + 1)
    fraction = pc.if_else(pc.equal(fraction, ""), "0", fraction)
    return pc.binary_join_element_wise(whole, ".", fraction, "")


def _special_floats(values: pa.Array, text: pa.Array) -> pa.Array:
    text = pc.if_else(pc.is_nan(values), "NaN", text)
    infinite = pc.is_inf(values)
    signed = pc.if_else(pc.less(values, 0), "-Infinity", "Infinity")
    return pc.if_else(infinite, signed, text)


def epoch_millis(values: pa.Array) -> pa.Array:
    """Epoch millis of a timestamp column, as java.sql.Timestamp.getTime() sees it.

    Hudi builds `new Timestamp(micros / 1000)`: Java's division truncates toward zero, and so
    does Arrow's integer divide.
    """
    counts = values.view(pa.int64())
    unit = values.type.unit
    if unit == "s":
        return pc.multiply_checked(counts, 1000)
    divisor = {"ms": 1, "us": 1000, "ns": 1_000_000}[unit]
    return counts if divisor == 1 else pc.divide(counts, divisor)


def avro_timestamp_count(values: pa.Array) -> pa.Array:
    """The long an Avro record holds for this timestamp: millis for s/ms, micros for us/ns."""
    counts = values.view(pa.int64())
    if values.type.unit == "s":
        return pc.multiply_checked(counts, 1000)
    if values.type.unit == "ns":
        return pc.divide(counts, 1000)
    return counts


def avro_time_count(values: pa.Array) -> pa.Array:
    """The number an Avro record holds for a time of day: millis for s/ms, micros for us/ns."""
    unit = values.type.unit
    counts = values.cast(pa.int64()) if unit in ("s", "ms") else values.view(pa.int64())
    if unit == "s":
        return pc.multiply(counts, 1000)
    if unit == "ns":
        return pc.divide(counts, 1000)
    return counts


def java_timestamp_strings(millis: pa.Array) -> pa.Array:
    """java.sql.Timestamp.toString of epoch millis, in UTC: `yyyy-mm-dd hh:mm:ss.f...`."""
    instants = millis.cast(pa.int64()).cast(pa.timestamp("ms"))
    seconds = pc.floor_temporal(instants, unit="second").cast(pa.timestamp("s"))
    head = pc.strftime(seconds, format="%Y-%m-%d %H:%M:%S")
    fraction = pc.utf8_lpad(pc.millisecond(instants).cast(pa.string()), 3, "0")
    fraction = pc.utf8_rtrim(fraction, "0")  # Timestamp trims trailing zeros of the nanos
    fraction = pc.if_else(pc.equal(fraction, ""), "0", fraction)
    return pc.binary_join_element_wise(head, ".", fraction, "")
