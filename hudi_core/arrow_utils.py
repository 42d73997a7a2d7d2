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


def numbered_strings(prefix: str, length: int, start: int = 0) -> pa.Array:
    """`prefix` followed by a running number: prefix0, prefix1, ..."""
    numbers = pc.cast(row_numbers(length, start), pa.string())
    return pc.binary_join_element_wise(constant_strings(prefix, length), numbers, "")


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
