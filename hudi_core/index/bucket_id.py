"""Apache Hudi's bucket of a record key, and the file ids of bucket file groups.

A key's bucket is Java's `List<String>.hashCode()` of its hash-field values, `&
Integer.MAX_VALUE`, modulo the number of buckets. The values come from the record key string
as Apache Hudi 0.14/0.15 split it (KeyGenUtils.extractRecordKeysByFields): parts by ",", each
part "field:value" kept when its field is a hash field (a part without ":" is kept whole);
`__null__` is a null value, `__empty__` an empty one. Java hashes strings over their UTF-16
code units in 32-bit arithmetic; everything here is computed the same way, vectorized.

A bucket's file group has a file id whose first 8 characters are the zero-padded bucket
number, the rest of a new random file id.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.arrow_utils import single_chunk

NULL_VALUE = "__null__"
EMPTY_VALUE = "__empty__"
_INT_MAX = np.uint32(0x7FFFFFFF)


def bucket_ids(
    record_keys: pa.Array | pa.ChunkedArray, hash_fields: Sequence[str], buckets: int
) -> np.ndarray:
    """The bucket (0 .. buckets-1) of each record key, as Apache Hudi computes it."""
    hashes = list_hash_codes(hash_values(record_keys, hash_fields))
    return ((hashes.view(np.uint32) & _INT_MAX) % np.uint32(buckets)).astype(np.int32)


def bucket_file_id(bucket: int) -> str:
    """A new file id of a bucket's file group: the bucket number over a new file id's start."""
    return f"{bucket:08d}{str(uuid.uuid4())[8:]}-0"


def fixed_bucket_file_id(bucket: int) -> str:
    """The one file id a bucket's file group has under non-blocking concurrency control, as
    Apache Hudi names it there: writers that create a bucket at once create the same group."""
    return f"{bucket:08d}-0000-0000-0000-000000000000-0"


def bucket_of_file_id(file_id: str) -> int | None:
    """The bucket a file id names (its first 8 characters), None if it names none."""
    prefix = file_id[:8]
    return int(prefix) if len(prefix) == 8 and prefix.isdigit() else None


# ---- the hash-field values of each key


def hash_values(
    record_keys: pa.Array | pa.ChunkedArray, hash_fields: Sequence[str]
) -> pa.ListArray:
    """Each key's hash-field values, as KeyGenUtils.extractRecordKeysByFields returns them."""
    keys = single_chunk(record_keys).cast(pa.string())
    if not _holds_separators(keys):
        return pa.ListArray.from_arrays(pa.array(np.arange(len(keys) + 1, dtype=np.int32)), keys)
    parts = pc.split_pattern(keys, ",")
    flat = parts.flatten()
    owner = pc.list_parent_indices(parts).to_numpy()
    starts = parts.offsets.to_numpy()[:-1] - parts.offsets[0].as_py()
    position = np.arange(len(flat)) - starts[owner]
    kept = _without_trailing_empties(flat, owner, position, len(keys), keys)
    named = pc.match_substring(flat, ":")
    field = pc.replace_substring_regex(flat, "(?s):.*", "", max_replacements=1)
    value = pc.replace_substring_regex(flat, "(?s)^[^:]*:", "", max_replacements=1)
    if hash_fields:
        wanted = pc.is_in(field, value_set=pa.array(list(hash_fields), pa.string()))
        kept &= pc.or_(pc.invert(named), wanted).to_numpy(zero_copy_only=False)
    placeholder = {NULL_VALUE: pa.scalar(None, pa.string()), EMPTY_VALUE: pa.scalar("")}
    for text, meant in placeholder.items():
        value = pc.if_else(pc.and_(named, pc.equal(value, text)), meant, value)
    counts = np.bincount(owner[kept], minlength=len(keys))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), value.filter(pa.array(kept)))


def _holds_separators(keys: pa.Array) -> bool:
    """Whether any key has a "," or ":" (else each key is its one value), from its bytes."""
    offsets_buffer, data_buffer = keys.buffers()[1:3]
    if data_buffer is None or len(keys) == 0:
        return False
    offsets = np.frombuffer(offsets_buffer, np.int32)[keys.offset : keys.offset + len(keys) + 1]
    data = np.frombuffer(data_buffer, np.uint8)[offsets[0] : offsets[-1]]
    return bool(((data == ord(",")) | (data == ord(":"))).any())


def _without_trailing_empties(
    parts: pa.Array, owner: np.ndarray, position: np.ndarray, keys: int, whole: pa.Array
) -> np.ndarray:
    """Java's String.split drops the trailing empty parts (an empty key stays one part)."""
    nonempty = pc.greater(pc.binary_length(parts), 0).to_numpy(zero_copy_only=False)
    last = np.full(keys, -1, dtype=np.int64)
    np.maximum.at(last, owner[nonempty], position[nonempty])
    empty_key = pc.equal(pc.binary_length(whole), 0).to_numpy(zero_copy_only=False)
    kept: np.ndarray = (position <= last[owner]) | empty_key[owner]
    return kept


# ---- Java's hash codes


def string_hash_codes(strings: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Java's String.hashCode() of each string (int32; 0 for a null, as List.hashCode takes it)."""
    array = single_chunk(strings).cast(pa.large_string())
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64)[
        array.offset : array.offset + len(array) + 1
    ]
    data_buffer = array.buffers()[2]
    data = (
        np.frombuffer(data_buffer, dtype=np.uint8)
        if data_buffer is not None
        else np.empty(0, np.uint8)
    )
    data = data[offsets[0] : offsets[-1]]
    units, unit_offsets = _utf16_units(data, offsets - offsets[0])
    hashes = _polynomial(units, unit_offsets)
    if array.null_count:
        hashes[pc.is_null(array).to_numpy(zero_copy_only=False)] = 0
    return hashes.view(np.int32)


def list_hash_codes(lists: pa.ListArray) -> np.ndarray:
    """Java's List<String>.hashCode() of each list of strings (int32)."""
    offsets = lists.offsets.to_numpy().astype(np.int64)
    offsets = offsets - offsets[0]
    elements = string_hash_codes(lists.flatten()).view(np.uint32)
    lengths = np.diff(offsets)
    hashes = _polynomial(elements, offsets) + _powers_of_31(int(lengths.max(initial=0)))[lengths]
    codes: np.ndarray = hashes.view(np.int32)
    return codes


_INVERSE_OF_31 = np.uint32(pow(31, -1, 2**32))  # 31 is odd: invertible modulo 2^32


def _polynomial(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Σ v_i·31^(n-1-i) over each run [offsets[k], offsets[k+1]) of `values`, modulo 2^32.

    Computed as 31^(end-1) · Σ v_i·31^(-i) (31 has an inverse modulo 2^32): one running sum
    over all values, no per-value exponent to gather.
    """
    count = len(values)
    falling, rising = _power_tables(count + 1)
    running = np.empty(count + 1, np.uint32)
    running[0] = 0
    np.cumsum(
        np.multiply(values, falling[:count], dtype=np.uint32), dtype=np.uint32, out=running[1:]
    )
    sums = running[offsets[1:]] - running[offsets[:-1]]
    # an empty run sums to 0, whatever power it is scaled by
    result: np.ndarray = sums * rising[np.maximum(offsets[1:] - 1, 0)]
    return result


_KEPT_POWERS = 1 << 22  # power tables up to this size are kept for the next call (16 MB each)
_powers: tuple[np.ndarray, np.ndarray] = (np.ones(1, np.uint32), np.ones(1, np.uint32))


def _power_tables(size: int) -> tuple[np.ndarray, np.ndarray]:
    """(31^-i, 31^i) modulo 2^32 for i < size (at least; views of kept tables)."""
    global _powers
    falling, rising = _powers
    if len(falling) >= size:
        return falling, rising
    wanted = max(size, min(2 * len(falling), _KEPT_POWERS))
    falling = np.empty(wanted, np.uint32)
    rising = np.empty(wanted, np.uint32)
    falling[0] = rising[0] = 1
    np.cumprod(np.full(wanted - 1, _INVERSE_OF_31, np.uint32), dtype=np.uint32, out=falling[1:])
    np.cumprod(np.full(wanted - 1, 31, np.uint32), dtype=np.uint32, out=rising[1:])
    if wanted <= _KEPT_POWERS:
        _powers = (falling, rising)
    return falling, rising


def _powers_of_31(highest: int) -> np.ndarray:
    """31^0 .. 31^highest modulo 2^32."""
    return np.concatenate(
        [np.ones(1, np.uint32), np.cumprod(np.full(highest, 31, np.uint32), dtype=np.uint32)]
    )


def _utf16_units(data: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes as UTF-16 code units (what Java strings hold), and each string's offsets
    into them."""
    if not (data >= 0x80).any():
        return data, offsets  # ASCII: one code unit per byte
    leads = np.flatnonzero((data & 0xC0) != 0x80)
    padded = np.concatenate([data, np.zeros(3, np.uint8)]).astype(np.uint32)
    b0 = padded[leads]
    b1, b2, b3 = (padded[leads + k] & 0x3F for k in (1, 2, 3))
    code = np.select(
        [b0 < 0x80, b0 < 0xE0, b0 < 0xF0],
        [b0, ((b0 & 0x1F) << 6) | b1, ((b0 & 0x0F) << 12) | (b1 << 6) | b2],
        ((b0 & 0x07) << 18) | (b1 << 12) | (b2 << 6) | b3,
    )
    pair = code >= 0x10000
    width = 1 + pair.astype(np.int64)
    first = np.cumsum(width) - width
    units = np.empty(int(width.sum()), np.uint32)
    above = code - 0x10000
    units[first] = np.where(pair, 0xD800 + (above >> 10), code)
    units[first[pair] + 1] = 0xDC00 + (above[pair] & 0x3FF)
    before_byte = np.zeros(len(data) + 1, np.int64)
    before_byte[leads + 1] = width
    return units, np.cumsum(before_byte)[offsets]
