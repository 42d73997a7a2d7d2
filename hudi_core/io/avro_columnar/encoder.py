"""Arrow columns -> schemaless Avro binary datums, every row at once.

Each value encodes to a list of segments, each holding one piece of every row's bytes:
`Cells` for small pieces built in numpy (a byte matrix and the mask of bytes in use: varints,
union indexes, fixed-width values) and `Span` for variable-length bytes already back to back
(strings, whole arrays). A record is its fields' segments in order; a row's datum is its pieces
of all segments in order. Assembling compacts each run of adjacent cells with one boolean mask,
then interleaves the spans row by row with one Arrow `take`, which copies variable-length
pieces in C++ where numpy would need an index per byte.

An array or map encodes all rows' items as one column first; a row's items are then one
contiguous piece of that column, so nesting costs one level of assembly, not a loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.errors import SchemaError
from hudi_core.io.avro_columnar import decimals
from hudi_core.io.avro_columnar.schema import (
    Array,
    Binary,
    Boolean,
    Decimal,
    Enum,
    Fixed,
    Floating,
    Integer,
    Map,
    Node,
    Null,
    Nullable,
    Record,
)
from hudi_core.io.avro_columnar.varint import varint_cells

_VARIABLE_OFFSETS = {pa.string(): np.int32, pa.binary(): np.int32}


@dataclass(frozen=True)
class Cells:
    """A piece of every row, at most `matrix.shape[1]` bytes: row i is matrix[i][mask[i]]."""

    matrix: np.ndarray  # (rows, width) uint8
    mask: np.ndarray | None  # (rows, width) bool; None: every byte is in use


@dataclass(frozen=True)
class Span:
    """A piece of every row, back to back: row i is data[offsets[i]:offsets[i + 1]]."""

    data: np.ndarray  # uint8
    offsets: np.ndarray  # int64, rows + 1


Segment = Cells | Span


def encode_rows(root: Record, columns: list[pa.Array]) -> list[Span]:
    """The pieces of the datums of the rows whose top-level columns are `columns`: a row's
    datum is its piece of every span in order (see `join_rows`)."""
    segments: list[Segment] = []
    for name, node, column in zip(root.names, root.fields, columns, strict=True):
        segments += encode(node, column, name)
    return _compact(segments, len(columns[0]) if columns else 0)


def encode(node: Node, array: pa.Array, path: str) -> list[Segment]:
    """The segments of `array`'s values written as `node`."""
    if isinstance(node, Nullable):
        return _nullable(node, array, path)
    if isinstance(node, Null):
        return []
    if array.null_count:
        raise SchemaError(
            f"field '{path}' has {array.null_count} nulls but its Avro type is not nullable"
        )
    if isinstance(node, Record):
        segments: list[Segment] = []
        for i, (name, field) in enumerate(zip(node.names, node.fields, strict=True)):
            segments += encode(field, array.field(i), f"{path}.{name}")
        return segments
    if isinstance(node, Array):
        return _blocked(node.item, array, path)
    if isinstance(node, Map):
        return _blocked(node.entry, array, path)
    return _leaf(node, array, path)


def _leaf(node: Node, array: pa.Array, path: str) -> list[Segment]:
    if isinstance(node, Integer):
        return [Cells(*varint_cells(_values(array, f"<i{node.width}", node.width)))]
    if isinstance(node, Floating):
        return [Cells(_values(array, np.uint8, node.width), None)]
    if isinstance(node, Boolean):
        return [Cells(_booleans(array).reshape(-1, 1), None)]
    if isinstance(node, Binary):
        span = _span_of(array)
        return [Cells(*varint_cells(np.diff(span.offsets))), span]
    if isinstance(node, Fixed):
        return [Cells(_values(array, np.uint8, node.size), None)]
    if isinstance(node, Enum):
        return [Cells(*varint_cells(_enum_indexes(node, array, path)))]
    if isinstance(node, Decimal):
        return _decimal(node, array, path)
    raise SchemaError(f"field '{path}': no columnar Avro encoding for {type(node).__name__}")


def _nullable(node: Nullable, array: pa.Array, path: str) -> list[Segment]:
    """The branch index, then (for valid rows only) the value."""
    null_byte, value_byte = (0, 2) if node.null_index == 0 else (2, 0)  # zigzag of 0 and 1
    if array.null_count == 0:
        index = np.full((len(array), 1), value_byte, np.uint8)
        return [Cells(index, None), *encode(node.value, array, path)]
    valid = array.is_valid().to_numpy(zero_copy_only=False)
    index = np.where(valid, value_byte, null_byte).astype(np.uint8).reshape(-1, 1)
    values = encode(node.value, pc.drop_null(array), path)
    return [Cells(index, None), *(_spread(segment, valid) for segment in values)]


def _spread(segment: Segment, valid: np.ndarray) -> Segment:
    """A segment of the valid rows only, as one of all rows: empty pieces for the others."""
    if isinstance(segment, Span):
        lengths = np.zeros(len(valid), np.int64)
        lengths[valid] = np.diff(segment.offsets)
        return Span(segment.data, _offsets(lengths, segment.offsets[0]))
    matrix = np.zeros((len(valid), segment.matrix.shape[1]), np.uint8)
    matrix[valid] = segment.matrix
    mask = np.zeros(matrix.shape, bool)
    mask[valid] = True if segment.mask is None else segment.mask
    return Cells(matrix, mask)


def _blocked(item: Node, array: pa.Array, path: str) -> list[Segment]:
    """An array or map: its item count, its items' bytes, then a zero count if it had items.

    The items of all rows encode as one column; a row's items are back to back in it.
    """
    bounds = np.asarray(array.offsets, dtype=np.int64)
    items = array.values.slice(bounds[0], bounds[-1] - bounds[0])
    data, item_offsets = encode_rows_of(item, items, path)
    counts = np.diff(bounds)
    terminator = Cells(np.zeros((len(counts), 1), np.uint8), (counts > 0).reshape(-1, 1))
    span = Span(data, item_offsets[bounds - bounds[0]])
    return [Cells(*varint_cells(counts)), span, terminator]


def encode_rows_of(node: Node, array: pa.Array, path: str) -> tuple[np.ndarray, np.ndarray]:
    """(data, offsets) of every value of `array` written as `node`."""
    return join_rows(_compact(encode(node, array, path), len(array)), len(array))


def _decimal(node: Decimal, array: pa.Array, path: str) -> list[Segment]:
    width = array.type.byte_width
    little = _values(array, np.uint8, width)
    if node.size is not None:
        return [Cells(decimals.to_fixed(little, node.size, path), None)]
    big, used = decimals.to_minimal(little)
    return [Cells(*varint_cells(used)), Cells(big, np.arange(width) >= width - used[:, None])]


def _enum_indexes(node: Enum, array: pa.Array, path: str) -> np.ndarray:
    indexes = pc.index_in(array, value_set=pa.array(node.symbols, pa.string()))
    if indexes.null_count:
        bad = array.filter(indexes.is_null())[0]
        raise SchemaError(f"field '{path}' holds {bad.as_py()!r}, not a symbol of its Avro enum")
    symbols: np.ndarray = indexes.to_numpy()
    return symbols


# ---------------------------------------------------------------- reading Arrow buffers


def _values(array: pa.Array, dtype: type | str, width: int) -> np.ndarray:
    """The values of a fixed-width array in place: (rows,) of `dtype`, or (rows, width) bytes.

    Values under nulls are whatever the buffer holds; callers only read valid rows."""
    n, start = len(array), array.offset
    buffer = array.buffers()[1]
    raw = np.frombuffer(buffer, np.uint8) if buffer is not None else np.zeros(0, np.uint8)
    raw = raw[start * width : (start + n) * width]
    if np.dtype(dtype) == np.uint8:
        return raw.reshape(n, width)
    return raw.view(dtype)


def _booleans(array: pa.Array) -> np.ndarray:
    bits = np.frombuffer(array.buffers()[1], np.uint8) if len(array) else np.zeros(0, np.uint8)
    return np.unpackbits(bits, bitorder="little")[array.offset : array.offset + len(array)]


def _span_of(array: pa.Array) -> Span:
    """The bytes of a string/binary array in place: no copy."""
    n, start = len(array), array.offset
    offset_type = _VARIABLE_OFFSETS.get(array.type, np.int64)
    _, offsets_buffer, data_buffer = array.buffers()
    if n == 0 or offsets_buffer is None:
        return Span(np.zeros(0, np.uint8), np.zeros(n + 1, np.int64))
    offsets = np.frombuffer(offsets_buffer, offset_type)[start : start + n + 1]
    data = (
        np.frombuffer(data_buffer, np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    )
    return Span(data, offsets.astype(np.int64))


# ---------------------------------------------------------------- assembling rows


def _compact(segments: list[Segment], rows: int) -> list[Span]:
    """Segments as spans: each run of adjacent cells becomes one span."""
    spans: list[Span] = []
    run: list[Cells] = []
    for segment in [*segments, None]:
        if isinstance(segment, Cells):
            run.append(segment)
            continue
        if run:
            spans.append(_cells_to_span(run, rows))
            run = []
        if segment is not None:
            spans.append(segment)
    return spans


def _cells_to_span(run: list[Cells], rows: int) -> Span:
    """The cells side by side as one matrix, compacted row by row by their masks."""
    width = sum(cells.matrix.shape[1] for cells in run)
    matrix = run[0].matrix if len(run) == 1 else np.empty((rows, width), np.uint8)
    mask = None if all(cells.mask is None for cells in run) else np.ones((rows, width), bool)
    column = 0
    for cells in run:
        end = column + cells.matrix.shape[1]
        if len(run) > 1:
            matrix[:, column:end] = cells.matrix
        if cells.mask is not None and mask is not None:  # mask exists when any cells have one
            mask[:, column:end] = cells.mask
        column = end
    if mask is None:
        return Span(matrix.reshape(-1), np.arange(rows + 1, dtype=np.int64) * width)
    return Span(matrix[mask], _offsets(np.count_nonzero(mask, axis=1), 0))


def join_rows(spans: list[Span], rows: int) -> tuple[np.ndarray, np.ndarray]:
    """(data, offsets) of rows made of their piece of every span in order, back to back.

    All pieces, span by span, form one binary array; one Arrow take reads it row by row,
    copying the variable-length pieces in C++.
    """
    if rows == 0 or not spans or all(span.offsets[-1] == span.offsets[0] for span in spans):
        return np.zeros(0, np.uint8), np.zeros(rows + 1, np.int64)  # every datum is empty
    if len(spans) == 1:
        first, last = int(spans[0].offsets[0]), int(spans[0].offsets[-1])
        return spans[0].data[first:last], spans[0].offsets - first
    parts, offsets, size = [], [], 0
    for span in spans:
        first, last = int(span.offsets[0]), int(span.offsets[-1])
        parts.append(span.data[first:last])
        offsets.append(span.offsets[:-1] + (size - first))
        size += last - first
    offsets.append(np.array([size]))
    buffers = [None, pa.py_buffer(np.concatenate(offsets)), pa.py_buffer(np.concatenate(parts))]
    pieces = pa.Array.from_buffers(pa.large_binary(), rows * len(spans), buffers)
    order = (np.arange(len(spans)) * rows)[None, :] + np.arange(rows)[:, None]  # row-major
    _, piece_offsets, data = pieces.take(pa.array(order.reshape(-1))).buffers()
    row_offsets = np.frombuffer(piece_offsets, np.int64)[:: len(spans)]
    return np.frombuffer(data, np.uint8)[:size], row_offsets


def _offsets(lengths: np.ndarray, first: int | np.integer) -> np.ndarray:
    offsets = np.empty(len(lengths) + 1, np.int64)
    offsets[0] = first
    np.cumsum(lengths, out=offsets[1:])
    offsets[1:] += first
    return offsets
