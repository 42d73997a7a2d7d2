"""Row orders for clustering's layouts (hoodie.layout.optimize.strategy): linear, z-order and
Hilbert curves over the sort columns.

A space-filling curve needs every sort column as an unsigned integer coordinate that keeps
the column's order. The "direct" build maps the values themselves, as Apache Hudi does:
integers and times with the sign bit flipped, floats by their IEEE bits made sortable,
strings and binaries by their first 8 bytes; a null takes the largest coordinate (level
with the type's largest value, if the column holds it). The "sample" build maps each value
to its rank in a sample of the column, so a skewed column spreads as evenly
over the curve as a uniform one. Each coordinate is then mapped linearly onto 64 / (number
of columns) bits, its range filling them, so that the whole curve index is one 64-bit word:
z-order interleaves the coordinates' bits (most significant first); Hilbert's curve
(Skilling's transform of the coordinates, then the same interleave) keeps consecutive rows
adjacent in every column. Rows sort stably by that index. A float column's direct
coordinates follow its exponent first (as Apache Hudi's do): use the sample build for floats
spread over a narrow range.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.errors import InvalidOptionError

LINEAR = "linear"
Z_ORDER = "z-order"
HILBERT = "hilbert"
STRATEGIES = (LINEAR, Z_ORDER, HILBERT)
DIRECT = "direct"
SAMPLE = "sample"
BUILD_METHODS = (DIRECT, SAMPLE)

_SIGN = np.uint64(1 << 63)
_NULL = np.uint64(2**64 - 1)  # nulls last, as a null's coordinate
_SAMPLE_SEED = 20_230_101  # a fixed sample: the same rows cluster the same way every time


def curve_order(
    table: pa.Table,
    columns: Sequence[str],
    strategy: str = Z_ORDER,
    build: str = DIRECT,
    sample_size: int = 200_000,
) -> np.ndarray:
    """Row indices of `table` in the order `strategy` lays them out over `columns`."""
    strategy = _choice(strategy.lower().replace("zorder", Z_ORDER), STRATEGIES, "strategy")
    build = _choice(build.lower(), BUILD_METHODS, "build method")
    missing = [c for c in columns if c not in table.column_names]
    if not columns or missing:
        raise InvalidOptionError(
            f"layout sort columns {list(columns)}: "
            + (f"{missing} are not columns of the rows" if missing else "none given")
        )
    if strategy == LINEAR or len(columns) == 1:  # one column: every curve is its sort order
        keys = [(name, "ascending") for name in columns]
        order: np.ndarray = pc.sort_indices(table, keys).to_numpy()  # nulls at the end
        return order
    bits = 64 // len(columns)
    coordinates = []
    for name in columns:
        coordinate = direct_coordinates(table.column(name), name)
        if build == SAMPLE:
            coordinate = _ranks(coordinate, sample_size)
        coordinates.append(_top_bits(coordinate, bits))
    if strategy == HILBERT:
        coordinates = hilbert_transpose(coordinates, bits)
    return np.argsort(interleave(coordinates, bits), kind="stable")


def _choice(value: str, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise InvalidOptionError(f"layout {what} {value!r} is not one of {', '.join(allowed)}")
    return value


# ---- coordinates


def direct_coordinates(values: pa.Array | pa.ChunkedArray, name: str = "") -> np.ndarray:
    """The column's values as uint64 coordinates in the values' order; nulls take the
    largest."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks else pa.array([], values.type)
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    kind = values.type
    if pa.types.is_boolean(kind):
        values, kind = values.cast(pa.uint8()), pa.uint8()
    if pa.types.is_decimal(kind):
        values, kind = values.cast(pa.float64()), pa.float64()
    if pa.types.is_unsigned_integer(kind):
        coordinates = _filled(values.cast(pa.uint64()), 0).astype(np.uint64)
    elif pa.types.is_integer(kind) or pa.types.is_temporal(kind):
        signed = _filled(_as_int64(values), 0).astype(np.int64)
        coordinates = signed.view(np.uint64) ^ _SIGN
    elif pa.types.is_floating(kind):
        ieee = _filled(values.cast(pa.float64()), 0.0).astype(np.float64).view(np.uint64)
        # Negative floats sort in reverse of their bits: invert them; set positives' sign bit.
        coordinates = np.where(ieee & _SIGN, ~ieee, ieee | _SIGN)
    elif pa.types.is_string(kind) or pa.types.is_large_string(kind) or _is_binary(kind):
        coordinates = _leading_bytes(values)
    else:
        raise InvalidOptionError(
            f"layout sort column {name!r} is of type {kind}, which has no curve coordinate: "
            "sort by numbers, times, strings or binaries"
        )
    if values.null_count:
        coordinates[values.is_null().to_numpy(zero_copy_only=False)] = _NULL
    return coordinates


def _is_binary(kind: pa.DataType) -> bool:
    return bool(
        pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
        or pa.types.is_fixed_size_binary(kind)
    )


def _as_int64(values: pa.Array) -> pa.Array:
    """Integers and times as int64 (times by their stored count of units)."""
    if pa.types.is_integer(values.type):
        return values.cast(pa.int64())
    width = 32 if pa.types.is_date32(values.type) or pa.types.is_time32(values.type) else 64
    return values.view(pa.int32() if width == 32 else pa.int64()).cast(pa.int64())


def _filled(values: pa.Array, fill: float) -> np.ndarray:
    filled: np.ndarray = values.fill_null(fill).to_numpy(zero_copy_only=False)
    return filled


def _leading_bytes(values: pa.Array) -> np.ndarray:
    """Each value's first 8 bytes as a big-endian number, zero padded (null: 0)."""
    binary = values.cast(pa.large_binary())
    sliced = pc.binary_slice(binary.fill_null(b""), 0, 8)
    _, offset_buffer, data_buffer = sliced.buffers()
    offsets = np.frombuffer(offset_buffer, dtype=np.int64)[
        sliced.offset : sliced.offset + len(sliced) + 1
    ]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer else np.zeros(0, np.uint8)
    data = np.concatenate([data, np.zeros(8, dtype=np.uint8)])  # padded reads stay inside
    lengths = np.diff(offsets)
    at = offsets[:-1, None] + np.arange(8)
    matrix = np.where(np.arange(8) < lengths[:, None], data[at], 0).astype(np.uint8)
    big_endian: np.ndarray = np.ascontiguousarray(matrix).view(">u8")[:, 0]
    return big_endian.astype(np.uint64)


def _ranks(coordinates: np.ndarray, sample_size: int) -> np.ndarray:
    """Each coordinate's rank in a sample of the column (how many sampled values are at most
    it): equal shares of the rows get equal shares of the curve, however skewed the values."""
    if len(coordinates) == 0:
        return coordinates
    sample = coordinates
    if len(coordinates) > sample_size:
        rng = np.random.default_rng(_SAMPLE_SEED)
        sample = rng.choice(coordinates, size=max(1, sample_size), replace=False)
    ranked: np.ndarray = np.searchsorted(np.sort(sample), coordinates, side="right")
    return ranked.astype(np.uint64)


def _top_bits(coordinates: np.ndarray, bits: int) -> np.ndarray:
    """Coordinates mapped linearly onto [0, 2**bits): the column's range fills each level of
    the curve evenly. (In float64: order is kept, values closer than 2**-53 of the range may
    meet.)"""
    if len(coordinates) == 0:
        return coordinates
    low = coordinates.min()
    span = float(coordinates.max() - low)
    if span == 0:
        return np.zeros(len(coordinates), dtype=np.uint64)
    fraction = (coordinates - low).astype(np.float64) / span
    top: np.ndarray = np.minimum(fraction * float(1 << bits), float((1 << bits) - 1))
    return top.astype(np.uint64)


# ---- curves


def interleave(coordinates: Sequence[np.ndarray], bits: int) -> np.ndarray:
    """The z-order index: bit b of coordinate j (of d) goes to bit b*d + (d-1-j), so the
    first coordinate's bit leads at each level. Spread a byte at a time through a table."""
    d = len(coordinates)
    spread = _spread_table(d)
    out = np.zeros(len(coordinates[0]) if d else 0, dtype=np.uint64)
    for j, coordinate in enumerate(coordinates):
        for byte in range(0, bits, 8):
            chunk = (coordinate >> np.uint64(byte)) & np.uint64(0xFF)
            out |= spread[chunk.astype(np.intp)] << np.uint64(byte * d + (d - 1 - j))
    return out


def _spread_table(d: int) -> np.ndarray:
    """For each byte value, its bits i placed at i*d."""
    values = np.arange(256, dtype=np.uint64)
    table = np.zeros(256, dtype=np.uint64)
    for i in range(8):
        table |= ((values >> np.uint64(i)) & np.uint64(1)) << np.uint64(i * d)
    return table


def hilbert_transpose(coordinates: Sequence[np.ndarray], bits: int) -> list[np.ndarray]:
    """Skilling's transform ("Programming the Hilbert curve", 2004) of `bits`-bit coordinates
    into the transposed Hilbert index, vectorized over rows; interleaved, it is the index.

    Branches become masks (all ones where a row takes the branch) and every step works in
    place, in 32-bit words when the coordinates fit: the transform is memory-bound."""
    dtype = np.uint32 if bits <= 32 else np.uint64
    x = [c.astype(dtype, copy=True) for c in coordinates]
    d = len(x)
    n = len(x[0]) if d else 0
    mask, t = np.empty(n, dtype), np.empty(n, dtype)
    for level in range(bits - 1, 0, -1):  # inverse undo of excess work
        p = dtype((1 << level) - 1)
        for i in range(d):
            np.right_shift(x[i], dtype(level), out=mask)
            np.bitwise_and(mask, dtype(1), out=mask)
            np.negative(mask, out=mask)  # all ones where bit `level` of x[i] is set
            # set: invert the low bits of the first coordinate
            np.bitwise_xor(x[0], np.bitwise_and(mask, p, out=t), out=x[0])
            # else: exchange the low bits of the first and this one
            np.bitwise_xor(x[0], x[i], out=t)
            np.bitwise_and(t, p, out=t)
            np.bitwise_and(t, np.invert(mask, out=mask), out=t)
            np.bitwise_xor(x[0], t, out=x[0])
            np.bitwise_xor(x[i], t, out=x[i])
    for i in range(1, d):  # Gray encode
        np.bitwise_xor(x[i], x[i - 1], out=x[i])
    flips = np.zeros(n, dtype)
    for level in range(bits - 1, 0, -1):
        np.right_shift(x[d - 1], dtype(level), out=mask)
        np.bitwise_and(mask, dtype(1), out=mask)
        np.negative(mask, out=mask)
        np.bitwise_xor(flips, np.bitwise_and(mask, dtype((1 << level) - 1), out=t), out=flips)
    return [np.bitwise_xor(xi, flips).astype(np.uint64) for xi in x]


__all__ = [
    "BUILD_METHODS",
    "DIRECT",
    "HILBERT",
    "LINEAR",
    "SAMPLE",
    "STRATEGIES",
    "Z_ORDER",
    "curve_order",
    "direct_coordinates",
    "hilbert_transpose",
    "interleave",
]
