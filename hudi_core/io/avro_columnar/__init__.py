"""Vectorized Avro binary coding between Arrow columns and schemaless Avro datums.

Hudi's merge-on-read log blocks hold records as schemaless Avro binary datums. Coding them one
Python dict at a time is far too slow, so both directions work a column (and a schema field) at
a time over all rows, in numpy and Arrow:

- `encode_datums(table, schema)` -> (data, offsets): row i's datum is data[offsets[i]:offsets[i+1]].
- `decode_datums(buffer, starts, schema)` -> the table of the datums starting at `starts`;
  `decode_datums_with_ends` also gives where each datum ended, to check framing.

Covered: records (nested), unions of null and one type (either order), null, boolean, int,
long, float, double, bytes, string, fixed, enum, arrays and maps (any block layout on read),
named type references, and the logical types decimal (fixed and bytes), date,
(local-)timestamp-millis/micros/nanos, time-millis/micros and uuid. Other unions and the
duration logical type raise SchemaError; malformed datums raise CorruptFileError.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from hudi_core.errors import CorruptFileError
from hudi_core.io.avro_columnar.decoder import decode_fields
from hudi_core.io.avro_columnar.encoder import Span, encode_rows, join_rows
from hudi_core.io.avro_columnar.gather import Source
from hudi_core.io.avro_columnar.schema import compile_schema
from hudi_core.schema.evolution import cast_batch_to_schema

__all__ = ["decode_datums", "decode_datums_with_ends", "encode_datums"]

AvroSchema = dict[str, Any] | str

# Rows coded per pass: bounds the temporary arrays and keeps them in cache.
ENCODE_CHUNK_ROWS = 1 << 16
DECODE_CHUNK_ROWS = 1 << 14


def encode_datums(
    table: pa.Table | pa.RecordBatch, avro_schema: AvroSchema, length_prefixed: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """The schemaless Avro binary datum of every row of `table`.

    Returns (data: uint8 array of all datums back to back, offsets: int64 array of n+1
    positions, row i being data[offsets[i]:offsets[i+1]]). `table`'s columns must match the
    record's fields by name and cast to their types (missing nullable ones are written null).
    With `length_prefixed` each datum comes after its length as a big-endian int32 (as Hudi
    frames the records of a data block), the prefix counted in the row's bytes.
    """
    root, arrow_schema = compile_schema(avro_schema)
    conformed = cast_batch_to_schema(table, arrow_schema).combine_chunks()
    columns = [
        column.chunk(0) if column.num_chunks else pa.array([], column.type)
        for column in conformed.columns
    ]
    rows = conformed.num_rows
    pieces = []
    for first in range(0, max(rows, 1), ENCODE_CHUNK_ROWS):
        count = min(ENCODE_CHUNK_ROWS, rows - first)
        spans = encode_rows(root, [column.slice(first, count) for column in columns])
        if length_prefixed:
            spans = [_length_span(spans, count), *spans]
        pieces.append(join_rows(spans, count))
    return pieces[0] if len(pieces) == 1 else _concat(pieces)


def _length_span(spans: list[Span], rows: int) -> Span:
    """Each row's length over all `spans`, as a big-endian int32."""
    lengths = np.zeros(rows, np.int64)
    for span in spans:
        lengths += np.diff(span.offsets)
    prefixes = np.ascontiguousarray(lengths.astype(">i4")).view(np.uint8)
    return Span(prefixes, np.arange(rows + 1, dtype=np.int64) * 4)


def decode_datums(
    buffer: bytes | memoryview | np.ndarray, starts: np.ndarray, avro_schema: AvroSchema
) -> pa.Table:
    """The rows whose datums begin at `starts` (byte positions into `buffer`).

    The table's schema is exactly `avro_to_arrow(avro_schema)`.
    """
    return decode_datums_with_ends(buffer, starts, avro_schema)[0]


def decode_datums_with_ends(
    buffer: bytes | memoryview | np.ndarray, starts: np.ndarray, avro_schema: AvroSchema
) -> tuple[pa.Table, np.ndarray]:
    """`decode_datums`, and the position just past each datum (int64), to check framing."""
    root, arrow_schema = compile_schema(avro_schema)
    buf = _as_bytes(buffer)
    starts = np.asarray(starts, dtype=np.int64).reshape(-1)
    if len(starts) and (starts.min() < 0 or starts.max() > len(buf)):
        raise CorruptFileError(f"datum start positions fall outside the {len(buf)}-byte buffer")
    source, batches, ends = Source(buf), [], []
    for first in range(0, len(starts), DECODE_CHUNK_ROWS):
        arrays, end = decode_fields(root, source, starts[first : first + DECODE_CHUNK_ROWS])
        batches.append(pa.RecordBatch.from_arrays(arrays, schema=arrow_schema))
        ends.append(end)
    table = pa.Table.from_batches(batches, schema=arrow_schema)
    return table, np.concatenate(ends) if ends else np.zeros(0, np.int64)


def _concat(pieces: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """(data, offsets) of consecutive chunks of rows."""
    data = np.concatenate([chunk_data for chunk_data, _ in pieces])
    shifts = np.cumsum([0] + [len(chunk_data) for chunk_data, _ in pieces[:-1]])
    tails = [offsets[1:] + shift for (_, offsets), shift in zip(pieces, shifts, strict=True)]
    return data, np.concatenate([np.zeros(1, np.int64), *tails])


def _as_bytes(buffer: bytes | memoryview | np.ndarray) -> np.ndarray:
    if isinstance(buffer, np.ndarray):
        return np.ascontiguousarray(buffer).reshape(-1).view(np.uint8)
    return np.frombuffer(buffer, np.uint8)
