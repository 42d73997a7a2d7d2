"""Reading a byte buffer at many positions at once: words, fixed windows and byte ranges.

Byte ranges (strings, bytes) are copied out by Arrow in C++, since numpy would need an index
per byte. Ranges in buffer order (the usual case: datums decoded in order) are the even elements
of one binary array over the buffer whose offsets alternate range starts and ends; Arrow's
`take` keeps those. Ranges in any other order become binary views: 16 bytes each, an int32
length then either the bytes themselves (12 or fewer) or a 4-byte prefix, an int32 buffer
index and an int32 offset, which numpy writes for all ranges at once and Arrow's cast copies.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from numpy.lib.stride_tricks import as_strided, sliding_window_view

from hudi_core.errors import CorruptFileError

INLINE_BYTES = 12
# Views address a buffer with an int32 offset: a large buffer is offered as overlapping parts,
# one starting every PART_STEP bytes, each long enough for any range starting inside it.
PART_STEP = 1 << 30
MAX_RANGE = (1 << 31) - 1 - PART_STEP
_U64 = np.uint64
_LOW32 = _U64(0xFFFFFFFF)
_32 = _U64(32)


class Source:
    """A byte buffer read at many positions at once.

    `u32`/`u64` gather the little-endian word starting at each position through a view whose
    elements overlap (stride one byte): one 1-D gather instead of a per-byte index.
    """

    def __init__(self, data: np.ndarray) -> None:
        self.data = data
        self.size = len(data)
        padded = data if len(data) >= 8 else np.concatenate([data, np.zeros(8, np.uint8)])
        self._u64 = _overlapping(padded, np.uint64)
        self._u32 = _overlapping(padded, np.uint32)

    def u32(self, pos: np.ndarray) -> np.ndarray:
        """The 4 bytes at each position, which must all lie inside the buffer."""
        words: np.ndarray = self._u32[pos]
        return words

    def u64(self, pos: np.ndarray) -> np.ndarray:
        """The 8 bytes at each position, which must all lie inside the buffer."""
        words: np.ndarray = self._u64[pos]
        return words

    def head12(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(bytes 0-7, bytes 8-11) from each position; zeros past the end of the buffer."""
        if self.size >= INLINE_BYTES:
            safe = np.minimum(pos, self.size - INLINE_BYTES)
            low, high = self._u64[safe], self._u32[safe + 8].astype(_U64)
        else:
            low, high = np.zeros(len(pos), _U64), np.zeros(len(pos), _U64)
        tail = np.flatnonzero(pos > self.size - INLINE_BYTES)
        if tail.size:  # the last few: clip a per-byte index rather than read past the end
            window = windows(self.data, pos[tail], 16).view(_U64)
            low[tail], high[tail] = window[:, 0], window[:, 1] & _LOW32
        return low, high


def _overlapping(data: np.ndarray, dtype: type) -> np.ndarray:
    width = np.dtype(dtype).itemsize
    words: np.ndarray = np.frombuffer(data, dtype, count=len(data) // width)
    return as_strided(words, shape=(len(data) - width + 1,), strides=(1,), writeable=False)


def windows(data: np.ndarray, starts: np.ndarray, width: int) -> np.ndarray:
    """(rows, width) bytes starting at each of `starts`; zeros past the end of `data`."""
    if len(data) < width:
        data = np.concatenate([data, np.zeros(width - len(data), np.uint8)])
    last = len(data) - width
    out: np.ndarray = sliding_window_view(data, width)[np.minimum(starts, last)]
    tail = np.flatnonzero(starts > last)
    if tail.size:
        index = starts[tail, None] + np.arange(width)
        out[tail] = np.where(index < len(data), data[np.minimum(index, len(data) - 1)], 0)
    return out


def fill_views(
    views: np.ndarray,
    source: Source,
    starts: np.ndarray,
    lengths: np.ndarray,
    part: int | np.ndarray = 0,
    offsets: np.ndarray | None = None,
) -> None:
    """Writes into `views` ((rows, 2) uint64) the views of the ranges at `starts`.

    A long range's bytes are addressed as buffer `part` at `offsets` (default `starts`),
    which must fit int32; the ranges must lie inside the source.
    """
    low, high = source.head12(starts)
    views[:, 0] = lengths.astype(_U64) | (low << _32)
    inline = (low >> _32) | (high << _32)
    where = (starts if offsets is None else offsets).astype(_U64) << _32
    views[:, 1] = np.where(lengths > INLINE_BYTES, where | _U64(part), inline)


def ranges_to_array(
    source: Source,
    starts: np.ndarray,
    lengths: np.ndarray,
    arrow_type: pa.DataType,
    valid: np.ndarray | None = None,
) -> pa.Array:
    """The array of the source's byte ranges [starts[i], starts[i] + lengths[i]) as
    `arrow_type` (a binary or string type; strings must be UTF-8).

    With `valid`, the ranges are those of the valid rows only and the others are null.
    """
    if len(starts) and int(lengths.max()) > MAX_RANGE:
        raise CorruptFileError(f"an Avro string or bytes value is over {MAX_RANGE} bytes long")
    ends = starts + lengths
    if np.all(starts[1:] >= ends[:-1]):
        result = _take_ranges(source.data, starts, ends, arrow_type, valid)
    else:
        result = _view_ranges(source, starts, lengths, arrow_type, valid)
    if _is_text(arrow_type):
        try:
            result.validate(full=True)
        except pa.ArrowInvalid as exc:
            raise CorruptFileError(f"an Avro string is not valid UTF-8: {exc}") from exc
    return result


def _take_ranges(
    data: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    arrow_type: pa.DataType,
    valid: np.ndarray | None,
) -> pa.Array:
    """Ranges in buffer order, none overlapping: taken from the buffer seen as an array whose
    elements alternate ranges and the gaps between them."""
    n = len(starts)
    if n == 0:
        return pa.nulls(0 if valid is None else len(valid), arrow_type)
    first, last = int(starts[0]), int(ends[-1])
    bounds = np.empty(2 * n, np.int64)  # range k is element 2k; gap k is element 2k + 1
    bounds[0::2] = starts
    bounds[1::2] = ends
    bounds -= first
    small = last - first <= MAX_RANGE
    offsets = bounds.astype(np.int32) if small else bounds
    alternating_type = _offset_variant(arrow_type, large=not small)
    alternating = pa.Array.from_buffers(
        alternating_type, 2 * n - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data[first:last])]
    )
    index = np.arange(0, 2 * n, 2, dtype=np.int32 if small else np.int64)
    if valid is not None:
        spread = np.zeros(len(valid), index.dtype)
        spread[valid] = index
        index = pa.array(spread, mask=~valid)
    taken = alternating.take(index)
    return taken if taken.type == arrow_type else taken.cast(arrow_type)


def _is_text(arrow_type: pa.DataType) -> bool:
    return bool(pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type))


def _offset_variant(arrow_type: pa.DataType, large: bool) -> pa.DataType:
    if _is_text(arrow_type):
        return pa.large_string() if large else pa.string()
    return pa.large_binary() if large else pa.binary()


def _view_ranges(
    source: Source,
    starts: np.ndarray,
    lengths: np.ndarray,
    arrow_type: pa.DataType,
    valid: np.ndarray | None,
) -> pa.Array:
    """Ranges in any order, even overlapping: binary views of them, cast to `arrow_type`."""
    if valid is not None:
        starts, lengths = _spread(starts, valid), _spread(lengths, valid)
    n = len(starts)
    views = np.empty((n, 2), _U64)
    data = source.data
    if len(data) <= MAX_RANGE:
        parts = [data]
        fill_views(views, source, starts, lengths)
    else:
        parts = [data[i : i + PART_STEP + MAX_RANGE] for i in range(0, len(data), PART_STEP)]
        part = starts // PART_STEP
        fill_views(views, source, starts, lengths, part, starts - part * PART_STEP)
    validity = None if valid is None else pa.py_buffer(np.packbits(valid, bitorder="little"))
    buffers = [validity, pa.py_buffer(views), *(pa.py_buffer(p) for p in parts)]
    null_count = 0 if valid is None else n - int(np.count_nonzero(valid))
    views_array = pa.Array.from_buffers(pa.binary_view(), n, buffers, null_count=null_count)
    binary = views_array.cast(pa.binary())  # no UTF-8 check here: the caller makes it
    return (
        binary.view(pa.string()).cast(arrow_type)
        if _is_text(arrow_type)
        else binary.cast(arrow_type)
    )


def _spread(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    full = np.zeros(len(valid), values.dtype)
    full[valid] = values
    return full
