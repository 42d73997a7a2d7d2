"""Small Arrow building blocks the write and read paths share."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def constant_strings(value: str, length: int) -> pa.Array:
    """A string array repeating `value`, built from buffers without a Python loop."""
    encoded = value.encode()
    offsets = np.arange(length + 1, dtype=np.int64) * len(encoded)
    if offsets[-1] < 2**31:
        return pa.StringArray.from_buffers(
            length, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(encoded * length)
        )
    return pa.LargeStringArray.from_buffers(
        length, pa.py_buffer(offsets), pa.py_buffer(encoded * length)
    ).cast(pa.string())


def row_numbers(length: int, start: int = 0) -> pa.Array:
    return pa.array(np.arange(start, start + length, dtype=np.int64))


def constant_dictionary(value: str, length: int) -> pa.DictionaryArray:
    """`value` repeated, dictionary-encoded: nothing is copied per row, and parquet writes it
    as one dictionary entry."""
    indices = pa.array(np.zeros(length, dtype=np.int32))
    return pa.DictionaryArray.from_arrays(indices, pa.array([value], pa.string()))


def numbered_strings(prefix: str, length: int, start: int = 0) -> pa.Array:
    """`prefix` followed by a running number: prefix0, prefix1, ...

    Consecutive numbers fall into runs of equal digit count; each run is one fixed-width byte
    matrix (prefix, then digits) built with numpy, and the runs are laid end to end.
    """
    head = np.frombuffer(prefix.encode(), dtype=np.uint8)
    blocks, offsets = [], [np.zeros(1, dtype=np.int64)]
    number, end = start, start + length
    while number < end:
        digits = len(str(number))
        run_end = min(end, 10**digits)
        block = _fixed_width_numbers(head, np.arange(number, run_end, dtype=np.uint64), digits)
        blocks.append(block.reshape(-1))
        steps = np.arange(1, len(block) + 1, dtype=np.int64) * block.shape[1]
        offsets.append(offsets[-1][-1] + steps)
        number = run_end
    data = np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.uint8)
    return pa.LargeStringArray.from_buffers(
        length, pa.py_buffer(np.concatenate(offsets)), pa.py_buffer(data)
    ).cast(pa.string())


def numbered_strings_at(prefix: str, numbers: np.ndarray) -> pa.Array:
    """`prefix` followed by each of `numbers` (ascending, not negative): numbered_strings
    for some positions only."""
    numbers = np.asarray(numbers, dtype=np.uint64)
    if len(numbers) == 0:
        return pa.array([], pa.string())
    head = np.frombuffer(prefix.encode(), dtype=np.uint8)
    widest = len(str(int(numbers[-1])))
    powers = np.array([10**d for d in range(1, widest)], dtype=np.uint64)
    bounds = [0, *np.searchsorted(numbers, powers).tolist(), len(numbers)]
    blocks, offsets = [], [np.zeros(1, dtype=np.int64)]
    for digits, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:], strict=True), start=1):
        if lo == hi:
            continue
        block = _fixed_width_numbers(head, numbers[lo:hi], digits)
        blocks.append(block.reshape(-1))
        steps = np.arange(1, len(block) + 1, dtype=np.int64) * block.shape[1]
        offsets.append(offsets[-1][-1] + steps)
    return pa.LargeStringArray.from_buffers(
        len(numbers), pa.py_buffer(np.concatenate(offsets)), pa.py_buffer(np.concatenate(blocks))
    ).cast(pa.string())


def _fixed_width_numbers(head: np.ndarray, values: np.ndarray, digits: int) -> np.ndarray:
    """Rows of `head` followed by the `digits` decimal digits of each value."""
    columns = np.empty((digits, len(values)), dtype=np.uint8)
    for position in range(digits - 1, -1, -1):
        values, digit = np.divmod(values, np.uint64(10))
        columns[position] = digit
    columns += ord("0")
    matrix = np.empty((len(columns[0]), len(head) + digits), dtype=np.uint8)
    matrix[:, : len(head)] = head
    matrix[:, len(head) :] = columns.T
    return matrix


def replaced_at(
    column: pa.ChunkedArray | pa.Array, positions: np.ndarray, values: pa.Array
) -> pa.ChunkedArray | pa.Array:
    """`column` with its values at `positions` (ascending) replaced by `values`.

    Fixed-width values are replaced under a mask, in place of a copy; variable-width ones
    (strings, nested), which a masked replace rebuilds value by value, are gathered from
    [column, values] by one take, about three times faster."""
    n = len(column)
    values = values.cast(column.type)
    if pa.types.is_primitive(column.type):
        mask = np.zeros(n, bool)
        mask[positions] = True
        try:
            return pc.replace_with_mask(column, pa.array(mask), values)
        except pa.ArrowNotImplementedError:
            pass
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    source = np.arange(n)
    source[positions] = n + np.arange(len(positions))
    return pa.chunked_array([*chunks, values], type=column.type).take(pa.array(source))


def run_boundaries(sorted_values: pa.Array | pa.ChunkedArray) -> list[tuple[int, int]]:
    """(start, end) of every run of equal values in a sorted array."""
    values = sorted_values
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    n = len(values)
    if n == 0:
        return []
    changes = pc.not_equal(values.slice(0, n - 1), values.slice(1)).to_numpy(zero_copy_only=False)
    starts = np.concatenate(([0], np.flatnonzero(changes) + 1))
    ends = np.concatenate((starts[1:], [n]))
    return list(zip(starts.tolist(), ends.tolist(), strict=True))


def stable_order(codes: np.ndarray, distinct: int) -> np.ndarray:
    """The row order that sorts integer codes in [0, distinct), ties kept in row order.

    numpy sorts 8- and 16-bit integers stably by radix, without comparisons: narrowed to
    those, the codes of a few partitions or buckets sort many times faster."""
    for narrow in (np.uint8, np.uint16):
        if distinct <= np.iinfo(narrow).max + 1:
            return np.argsort(codes.astype(narrow, copy=False), kind="stable")
    return np.argsort(codes, kind="stable")


def row_indices_by_value(values: pa.Array | pa.ChunkedArray) -> dict[str, np.ndarray]:
    """Row indices of each distinct value, in row order within a value."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    encoded = pc.dictionary_encode(values)
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    order = stable_order(codes, len(encoded.dictionary))
    bounds = np.cumsum(np.bincount(codes, minlength=len(encoded.dictionary)))
    parts = np.split(order, bounds[:-1])
    return {
        value: part
        for value, part in zip(encoded.dictionary.to_pylist(), parts, strict=True)
        if len(part)
    }


def single_chunk(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """An array as one contiguous Array (chunks combined)."""
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks() if values.num_chunks else pa.array([], values.type)
    return values


def positions_in(
    values: pa.Array | pa.ChunkedArray, value_set: pa.Array | pa.ChunkedArray
) -> pa.Array:
    """Each value's position in `value_set`, null where it is absent (pc.index_in).

    Both sides go in as one chunk: pyarrow's index_in over a chunked array (keys read from
    parquet are chunked) is about ten times slower than over the same values combined."""
    return pc.index_in(single_chunk(values), value_set=single_chunk(value_set))
