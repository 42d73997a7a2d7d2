"""Schemaless Avro binary datums -> Arrow arrays, all rows in lockstep.

Every row has a cursor into the buffer; decoding a field reads it at all cursors at once and
moves them past it. A nullable union reads its index byte, then decodes only the rows holding
a value and spreads the result back over all rows. An array or map decodes item by item: step k
reads the k-th item of every row that has one, so the number of steps is the largest item
count (for items of a fixed width, such as doubles, a step reads whole blocks); the items are
then put back in row order.

Leaves read to raw numpy values first (`_read`) and become Arrow arrays afterwards (`_build`),
so a nullable leaf scatters plain numpy values instead of Arrow arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from hudi_core.errors import CorruptFileError, SchemaError
from hudi_core.io.avro_columnar import decimals
from hudi_core.io.avro_columnar.gather import Source, ranges_to_array, windows
from hudi_core.io.avro_columnar.schema import (
    LEAVES,
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
from hudi_core.io.avro_columnar.varint import check_readable, read_longs

_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
# Items that take no bytes (null, empty records) cannot be bounded by the buffer's size.
_MAX_EMPTY_ITEMS = 1 << 24


def decode_fields(root: Record, src: Source, pos: np.ndarray) -> tuple[list[pa.Array], np.ndarray]:
    """(one array per field of `root`, positions after each datum) for datums at `pos`."""
    arrays = []
    for field in root.fields:
        array, pos = decode(field, src, pos)
        arrays.append(array)
    return arrays, pos


def decode(node: Node, src: Source, pos: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    """(the values written as `node` at each of `pos`, positions after them)."""
    if isinstance(node, LEAVES):
        raw, end = _read(node, src, pos)
        return _build(node, raw, src), end
    if isinstance(node, Nullable):
        return _nullable(node, src, pos)
    if isinstance(node, Null):
        return pa.nulls(len(pos), node.arrow), pos
    if isinstance(node, Record):
        children, end = decode_fields(node, src, pos)
        return _struct(node.arrow, children, len(pos)), end
    if isinstance(node, Array):
        offsets, items, end = _blocked(node.item, src, pos)
        return pa.ListArray.from_arrays(offsets, items, type=node.arrow), end
    if isinstance(node, Map):
        offsets, entries, end = _blocked(node.entry, src, pos)
        keys, values = entries.field(0), entries.field(1)
        return pa.MapArray.from_arrays(offsets, keys, values, type=node.arrow), end
    raise SchemaError(f"no columnar Avro decoding for {type(node).__name__}")


def _struct(arrow: pa.StructType, children: list[pa.Array], rows: int) -> pa.Array:
    if not children:
        return pa.Array.from_buffers(arrow, rows, [None], children=[])
    return pa.StructArray.from_arrays(children, fields=list(arrow))


# ---------------------------------------------------------------- unions


def _nullable(node: Nullable, src: Source, pos: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    check_readable(src.data, pos, 1)
    index = src.data[pos]
    valid = index == (2 if node.null_index == 0 else 0)  # zigzag of the value branch's index
    count = int(np.count_nonzero(valid))
    end = pos + 1
    if count == len(pos):
        return decode(node.value, src, end)
    if np.any(index | 2 != 2):  # the index must be 0 or 1: one byte, zigzag 0 or 2
        bad = int(index[index | 2 != 2][0])
        raise CorruptFileError(f"Avro union index byte {bad:#04x} is not 0 or 1 (zigzag 0 or 2)")
    if count == 0:
        return pa.nulls(len(pos), node.arrow), end
    if isinstance(node.value, LEAVES):
        raw, end[valid] = _read(node.value, src, end[valid])
        return _build(node.value, raw, src, valid), end
    values, end[valid] = decode(node.value, src, end[valid])
    slots = np.cumsum(valid) - 1
    return values.take(pa.array(slots, mask=~valid)), end


# ---------------------------------------------------------------- arrays and maps


def _blocked(item: Node, src: Source, pos: np.ndarray) -> tuple[pa.Array, pa.Array, np.ndarray]:
    """(int32 offsets, items in row order, positions after) of arrays/maps at `pos`.

    Each step reads the next item of every row with one left in its current block, or, when
    items have a fixed width, the whole block (its items' positions are then known up front).
    """
    rows, width = len(pos), _fixed_width(item)
    left, end = _block_header(item, src, pos)  # items left in each row's current block
    done = np.zeros(rows, np.int64)  # items read so far, per row
    pieces, owners, ranks = [], [], []
    active = np.flatnonzero(left)
    while active.size:
        taken: int | np.ndarray
        if width is None:
            piece, end[active] = decode(item, src, end[active])
            owners.append(active)
            ranks.append(done[active])
            taken = 1
        else:
            taken = left[active]
            owner = np.repeat(active, taken)
            within = np.arange(len(owner)) - np.repeat(np.cumsum(taken) - taken, taken)
            piece, _ = decode(item, src, end[owner] + within * width)
            end[active] += taken * width
            owners.append(owner)
            ranks.append(done[owner] + within)
        pieces.append(piece)
        done[active] += taken
        left[active] -= taken
        finished = active[left[active] == 0]
        if finished.size:
            left[finished], end[finished] = _block_header(item, src, end[finished])
        active = active[left[active] > 0]
    offsets = np.zeros(rows + 1, np.int64)
    np.cumsum(done, out=offsets[1:])
    if offsets[-1] > _INT32_MAX:
        raise CorruptFileError(f"Avro arrays hold {offsets[-1]} items, more than Arrow lists can")
    items = _in_row_order(item, pieces, owners, ranks, offsets)
    return pa.array(offsets.astype(np.int32)), items, end


def _block_header(item: Node, src: Source, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(item count of the next block, position of its first item); count 0 ends the array.

    A negative count is followed by the block's byte size, which is skipped.
    """
    count, end = read_longs(src.data, pos)
    negative = np.flatnonzero(count < 0)
    if negative.size:
        size, end[negative] = read_longs(src.data, end[negative])
        count[negative] = -count[negative]
        if np.any(size < 0) or np.any(count[negative] < 0):
            raise CorruptFileError("an Avro array block has a negative byte size")
    smallest = _min_size(item)
    room = (src.size - end) // smallest if smallest else _MAX_EMPTY_ITEMS
    if np.any(count > room):
        raise CorruptFileError("an Avro array block claims more items than its buffer holds")
    return count, end


def _in_row_order(
    item: Node,
    pieces: list[pa.Array],
    owners: list[np.ndarray],
    ranks: list[np.ndarray],
    offsets: np.ndarray,
) -> pa.Array:
    """The items read step by step, reordered to row order (row i's k-th item at offsets[i]+k)."""
    if not pieces:
        return pa.array([], item.arrow)
    items = pa.concat_arrays(pieces) if len(pieces) > 1 else pieces[0]
    if len(pieces) == 1:
        return items
    target = offsets[np.concatenate(owners)] + np.concatenate(ranks)
    order = np.empty(len(target), np.int64)
    order[target] = np.arange(len(target))
    return items.take(pa.array(order))


def _min_size(node: Node) -> int:
    """The fewest bytes a value of `node` takes: bounds what a block count may claim."""
    if isinstance(node, Record):
        return sum(_min_size(field) for field in node.fields)
    width = _fixed_width(node)
    return 1 if width is None else width


def _fixed_width(node: Node) -> int | None:
    """The bytes every value of `node` takes, if that is fixed."""
    if isinstance(node, Null):
        return 0
    if isinstance(node, Boolean):
        return 1
    if isinstance(node, Floating):
        return node.width
    if isinstance(node, Fixed) or (isinstance(node, Decimal) and node.size is not None):
        return node.size
    if isinstance(node, Record):
        widths = [_fixed_width(field) for field in node.fields]
        known = [w for w in widths if w is not None]
        return sum(known) if len(known) == len(widths) else None
    return None


# ---------------------------------------------------------------- leaves


def _read(node: Node, src: Source, pos: np.ndarray) -> tuple[Any, np.ndarray]:
    """(raw values, positions after): numpy arrays with one row per position."""
    if isinstance(node, Integer):
        values, end = read_longs(src.data, pos)
        if node.width == 4 and len(values):
            if values.min() < _INT32_MIN or values.max() > _INT32_MAX:
                raise CorruptFileError("an Avro int holds a value outside 32 bits")
        return values, end
    if isinstance(node, Floating):
        check_readable(src.data, pos, node.width)
        words = src.u32(pos) if node.width == 4 else src.u64(pos)
        return words, pos + node.width
    if isinstance(node, Boolean):
        check_readable(src.data, pos, 1)
        values = src.data[pos]
        if np.any(values > 1):
            raise CorruptFileError("an Avro boolean byte is neither 0 nor 1")
        return values, pos + 1
    if isinstance(node, Binary):
        return _read_ranges(src, pos)
    if isinstance(node, Fixed):
        return _bytes_at(src, pos, node.size), pos + node.size
    if isinstance(node, Enum):
        values, end = read_longs(src.data, pos)
        if len(values) and (values.min() < 0 or values.max() >= len(node.symbols)):
            raise CorruptFileError(f"an Avro enum index is outside its {len(node.symbols)} symbols")
        return values, end
    assert isinstance(node, Decimal)
    return _read_decimal(node, src, pos)


def _read_ranges(src: Source, pos: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """((starts, lengths), positions after) of the length-prefixed byte ranges at `pos`."""
    lengths, start = read_longs(src.data, pos)
    if np.any(lengths < 0):
        raise CorruptFileError("an Avro string or bytes value has a negative length")
    check_readable(src.data, start, lengths)
    return (start, lengths), start + lengths


def _read_decimal(node: Decimal, src: Source, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    width = node.arrow.byte_width
    if node.size is not None:
        return decimals.from_fixed(_bytes_at(src, pos, node.size), width), pos + node.size
    (start, lengths), end = _read_ranges(src, pos)
    if len(lengths) and lengths.max() > width:
        raise CorruptFileError(f"an Avro decimal of {lengths.max()} bytes overflows {node.arrow}")
    return decimals.from_minimal(windows(src.data, start, width), lengths), end


def _bytes_at(src: Source, pos: np.ndarray, width: int) -> np.ndarray:
    """(rows, width) bytes at each position."""
    check_readable(src.data, pos, width)
    if width == 0:
        return np.zeros((len(pos), 0), np.uint8)
    return windows(src.data, pos, width)


def _build(node: Node, raw: Any, src: Source, valid: np.ndarray | None = None) -> pa.Array:
    """The Arrow array of raw values: of every row, or (with `valid`) of the valid rows only."""
    if isinstance(node, Binary):
        return ranges_to_array(src, raw[0], raw[1], node.arrow, valid)
    rows = len(raw) if valid is None else len(valid)
    if valid is not None:
        raw = _spread(raw, valid)
    if isinstance(node, Enum):
        mask = None if valid is None else ~valid
        symbols = pa.array(node.symbols, pa.string())
        return symbols.take(pa.array(raw, mask=mask))
    if isinstance(node, Boolean):
        values = pa.py_buffer(np.packbits(raw, bitorder="little"))
    elif isinstance(node, Integer):
        values = pa.py_buffer(raw.astype(f"<i{node.width}"))
    else:
        values = pa.py_buffer(np.ascontiguousarray(raw))
    validity = None if valid is None else pa.py_buffer(np.packbits(valid, bitorder="little"))
    nulls = 0 if valid is None else rows - int(np.count_nonzero(valid))
    return pa.Array.from_buffers(node.arrow, rows, [validity, values], null_count=nulls)


def _spread(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Values of the valid rows only, as values of all rows (zeros in the others)."""
    full = np.zeros((len(valid), *values.shape[1:]), values.dtype)
    full[valid] = values
    return full
