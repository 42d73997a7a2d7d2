"""The bloom filter Apache Hudi keeps in every parquet base file footer.

Byte-compatible with Java Hudi's SimpleBloomFilter ("SIMPLE") and
HoodieDynamicBoundedBloomFilter ("DYNAMIC_V0"), which follow Hadoop's
org.apache.hadoop.util.bloom filters:

- a key is its UTF-8 bytes; its k bit positions are |h_i mod size| where h_i is a
  32-bit hash of the key seeded with h_(i-1) (h_0 seeded with 0). Hudi always writes
  MurmurHash2 (hash type 1); Hadoop's Jenkins lookup3 (type 0) is read for old filters.
- a row of bits is written as Java DataOutput: int -1 (format version), int k,
  byte hash type, int size, then ceil(size / 8) bytes, bit i at mask 1 << (i % 8).
- DYNAMIC_V0 adds, after that header, int keys-per-row, int keys in the active row,
  int row count, then every row as above.
- the footer value is standard base64 (with padding) of those bytes.

Hashing runs across all keys at once in numpy uint32 arithmetic, one pass per hash. Once a
process has hashed enough to repay numba's start-up, MurmurHash runs compiled instead
(bloom_hash_compiled), if numba imports; both give the same bits.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, ClassVar, Protocol, TypeAlias

import numpy as np
import pyarrow as pa

from hudi_core.errors import CorruptFileError, InvalidOptionError, RecordKeyError

FOOTER_BLOOM_FILTER = "org.apache.hudi.bloomfilter"
FOOTER_LEGACY_BLOOM_FILTER = "com.uber.hoodie.bloomfilter"
FOOTER_BLOOM_FILTER_TYPE = "hoodie_bloom_filter_type_code"
FOOTER_MIN_RECORD_KEY = "hoodie_min_record_key"
FOOTER_MAX_RECORD_KEY = "hoodie_max_record_key"

SIMPLE = "SIMPLE"
DYNAMIC_V0 = "DYNAMIC_V0"
JENKINS_HASH = 0
MURMUR_HASH = 1

KeysLike: TypeAlias = pa.Array | pa.ChunkedArray | Iterable[str]

_VERSION = -1  # Hadoop's versioned layout; a positive first int is the older unversioned one
_ROW_HEADER = struct.Struct(">iibi")  # version, hash count, hash type, bits
_DYNAMIC_STATE = struct.Struct(">iii")  # keys per row, keys in the active row, row count
_INT = struct.Struct(">i")
_HASH_AND_TYPE = struct.Struct(">ib")
_MURMUR_M = np.uint32(0x5BD1E995)
_BATCH_CELLS = 1 << 21  # padded key bytes hashed per step: bounds memory, keeps arrays in cache
_PAD = 16  # zero bytes after the last key, so padded reads never run off the buffer
# MurmurHash hashes (keys x hashes per key) a process does on the numpy path before it
# switches to the compiled one (bloom_hash_compiled). Importing numba and loading the cached
# kernel costs ~0.45 s once per process; compiled hashing saves ~3.5 ns a hash (numpy ~7,
# numba ~3.5 at default sizes), so that cost is repaid after ~100M hashes (3.3M keys at
# the default 30 hashes). Like renting skis until rent has cost what buying would, numpy
# runs until its hashing has cost about numba's start-up: a process never pays much more
# than the better choice would have, and small writes (Airflow and Spark tasks) never import
# numba at all. Tests monkeypatch it to force either path.
_COMPILED_AFTER_HASHES = 100_000_000


# ---------------------------------------------------------------- sizing (Java int/double math)


def _java_int(value: float) -> int:
    """Java's (int) cast of a double: NaN is 0, out-of-range values saturate."""
    if math.isnan(value):
        return 0
    return int(max(-(2**31), min(2**31 - 1, value)))


def _int32(value: int) -> int:
    """Wraps like Java int arithmetic."""
    return (value + 2**31) % 2**32 - 2**31


def bloom_bit_size(num_entries: int, fpp: float) -> int:
    """Bits per filter row for num_entries keys at false-positive rate fpp, as Hudi sizes it."""
    log2_squared = math.log(2) * math.log(2)
    return _java_int(math.ceil(num_entries * (-math.log(fpp) / log2_squared)))


def bloom_num_hashes(bit_size: int, num_entries: int) -> int:
    """Hash functions per key for a row of bit_size bits sized for num_entries keys."""
    return _java_int(math.ceil(math.log(2) * bit_size / num_entries))


# ---------------------------------------------------------------- keys as bytes


def _as_binary_array(keys: KeysLike) -> pa.Array:
    if isinstance(keys, str | bytes):
        raise RecordKeyError("bloom filter keys must be an array of strings, not a single string")
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    elif not isinstance(keys, pa.Array):
        keys = pa.array(list(keys), type=pa.large_string())
    if pa.types.is_dictionary(keys.type):
        keys = keys.dictionary_decode()
    if pa.types.is_string_view(keys.type) or pa.types.is_binary_view(keys.type):
        keys = keys.cast(pa.large_binary())
    kind = keys.type
    if not (
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
    ):
        raise RecordKeyError(f"bloom filter keys must be strings, got {kind}")
    if keys.null_count:
        raise RecordKeyError(f"bloom filter keys must not be null; {keys.null_count} are")
    return keys


class _KeyBytes:
    """All keys' UTF-8 bytes back to back (zero padded at the end) and where each starts."""

    def __init__(self, keys: KeysLike) -> None:
        array = _as_binary_array(keys)
        self.count = len(array)
        if self.count == 0:
            self.offsets = self.lengths = np.zeros(0, dtype=np.int64)
            return
        large = pa.types.is_large_string(array.type) or pa.types.is_large_binary(array.type)
        _, offset_buffer, data_buffer = array.buffers()
        all_offsets = np.frombuffer(offset_buffer, dtype=np.int64 if large else np.int32)
        offsets = all_offsets[array.offset : array.offset + self.count + 1].astype(np.int64)
        first, last = int(offsets[0]), int(offsets[-1])
        self.data = np.zeros(last - first + _PAD, dtype=np.uint8)
        if last > first:
            self.data[: last - first] = np.frombuffer(data_buffer, dtype=np.uint8)[first:last]
        self.offsets = offsets - first
        self.lengths = np.diff(self.offsets)
        if not self.lengths.all():
            # Hadoop's hash function rejects empty keys outright.
            raise RecordKeyError("bloom filter keys must not be empty strings")

    def by_length(self) -> np.ndarray:
        """Key indices, keys of one count of 4-byte blocks together, for the compiled path."""
        blocks = self.lengths // 4
        if blocks.min() == blocks.max():
            return np.arange(self.count)
        # Sorting 16-bit numbers is a radix sort, linear; keys over 256 KB share the last value.
        return np.argsort(np.minimum(blocks, 0xFFFF).astype(np.uint16), kind="stable")

    def batches(self, hasher: type[_PreparedKeys]) -> Iterator[tuple[np.ndarray, _PreparedKeys]]:
        """Yields (key indices, keys readied for hashing) in batches of one hash block count."""
        groups = hasher.group_of(self.lengths)
        uniform = bool(groups.min() == groups.max())
        order = np.arange(self.count) if uniform else np.argsort(groups, kind="stable")
        cuts = np.flatnonzero(np.diff(groups[order])) + 1
        same_length = bool(self.lengths.min() == self.lengths.max())
        for members in np.split(order, cuts):
            width = hasher.width_of(int(groups[members[0]]))
            step = max(1, _BATCH_CELLS // width)
            for begin in range(0, len(members), step):
                index = members[begin : begin + step]
                matrix = self._matrix(index, width, contiguous=same_length)
                yield index, hasher.prepare(matrix, self.lengths[index])

    def _matrix(self, index: np.ndarray, width: int, contiguous: bool) -> np.ndarray:
        """Row i holds key index[i]'s bytes from column 0 on, followed by whatever comes next."""
        if contiguous:  # equal lengths in order: rows are overlapping windows of the buffer
            start, stride = int(self.offsets[index[0]]), int(self.lengths[0])
            return np.lib.stride_tricks.as_strided(
                self.data[start:], shape=(len(index), width), strides=(stride, 1), writeable=False
            )
        rows: np.ndarray = self.data[self.offsets[index][:, None] + np.arange(width)]
        return rows


# ---------------------------------------------------------------- hash functions, vectorized


class _PreparedKeys(Protocol):
    """A batch of keys readied for repeated seeded hashing."""

    @staticmethod
    def group_of(lengths: np.ndarray) -> np.ndarray: ...

    @staticmethod
    def width_of(group: int) -> int: ...

    @classmethod
    def prepare(cls, matrix: np.ndarray, lengths: np.ndarray) -> _PreparedKeys: ...

    def hash(self, seeds: np.ndarray) -> np.ndarray: ...

    def select(self, keep: np.ndarray) -> _PreparedKeys: ...


@dataclass(frozen=True)
class _MurmurKeys:
    """Keys readied for Hadoop's MurmurHash2. Block mixing does not depend on the seed, so it
    runs once for all k passes; each pass then costs one multiply and xor per 4-byte block."""

    mixed: np.ndarray  # (blocks, keys) uint32, each block already mixed with the constant
    lengths: np.ndarray  # uint32
    tail: np.ndarray  # uint32 folded from the last 1-3 bytes, 0 when there are none
    tail_mult: np.ndarray  # the multiplier applied after the tail: M, or 1 when there is none

    @staticmethod
    def group_of(lengths: np.ndarray) -> np.ndarray:
        return lengths // 4

    @staticmethod
    def width_of(group: int) -> int:
        return 4 * group + 3

    @classmethod
    def prepare(cls, matrix: np.ndarray, lengths: np.ndarray) -> _MurmurKeys:
        body = (matrix.shape[1] - 3) // 4 * 4
        words = np.ascontiguousarray(matrix[:, :body]).view("<u4").astype(np.uint32, copy=False)
        mixed = words.T.copy()
        mixed *= _MURMUR_M
        mixed ^= mixed >> 24
        mixed *= _MURMUR_M
        tail, tail_mult = _murmur_tail(matrix[:, body : body + 3], lengths - body)
        return cls(mixed, lengths.astype(np.uint32), tail, tail_mult)

    def hash(self, seeds: np.ndarray) -> np.ndarray:
        h: np.ndarray = seeds ^ self.lengths
        for block in self.mixed:
            h *= _MURMUR_M
            h ^= block
        h ^= self.tail
        h *= self.tail_mult
        h ^= h >> 13
        h *= _MURMUR_M
        h ^= h >> 15
        return h

    def select(self, keep: np.ndarray) -> _MurmurKeys:
        return _MurmurKeys(
            self.mixed[:, keep], self.lengths[keep], self.tail[keep], self.tail_mult[keep]
        )


def _murmur_tail(tail_bytes: np.ndarray, left: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hadoop folds the trailing bytes first-byte-highest (unlike reference MurmurHash2) and
    reads them as signed Java bytes, so bytes >= 0x80 carry sign bits into the upper half."""
    signed = tail_bytes.view(np.int8).astype(np.int32).view(np.uint32)
    b0, b1, b2 = signed[:, 0], signed[:, 1], signed[:, 2]
    tail = np.select(
        [left == 1, left == 2, left == 3],
        [b0, (b0 << 8) ^ b1, (b0 << 16) ^ (b1 << 8) ^ b2],
        default=np.uint32(0),
    ).astype(np.uint32)
    tail_mult = np.where(left > 0, _MURMUR_M, np.uint32(1)).astype(np.uint32)
    return tail, tail_mult


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << r) | (x >> (32 - r))


# lookup3's mix and final steps over registers (a, b, c) = (0, 1, 2):
# mix is (target, source, next, rotation), final is (target, source, rotation).
_JENKINS_MIX = (
    (0, 2, 1, 4),
    (1, 0, 2, 6),
    (2, 1, 0, 8),
    (0, 2, 1, 16),
    (1, 0, 2, 19),
    (2, 1, 0, 4),
)
_JENKINS_FINAL = ((2, 1, 14), (0, 2, 11), (1, 0, 25), (2, 1, 16), (0, 2, 4), (1, 0, 14), (2, 1, 24))


@dataclass(frozen=True)
class _JenkinsKeys:
    """Keys readied for Hadoop's Jenkins lookup3 hashlittle (12-byte blocks, zero padded)."""

    words: np.ndarray  # (3 * blocks, keys) uint32 little-endian words, zero past each key's end
    lengths: np.ndarray  # uint32

    @staticmethod
    def group_of(lengths: np.ndarray) -> np.ndarray:
        return (lengths - 1) // 12  # blocks mixed before the final, always non-empty, block

    @staticmethod
    def width_of(group: int) -> int:
        return 12 * group + 12

    @classmethod
    def prepare(cls, matrix: np.ndarray, lengths: np.ndarray) -> _JenkinsKeys:
        inside = np.arange(matrix.shape[1]) < lengths[:, None]
        clean = np.where(inside, matrix, 0).astype(np.uint8)
        words = clean.view("<u4").astype(np.uint32, copy=False)
        return cls(words.T.copy(), lengths.astype(np.uint32))

    def hash(self, seeds: np.ndarray) -> np.ndarray:
        a: np.ndarray = self.lengths + seeds
        a += np.uint32(0xDEADBEEF)
        regs = [a, a.copy(), a.copy()]
        blocks = len(self.words) // 3
        for block in range(blocks):
            for reg in range(3):
                regs[reg] += self.words[3 * block + reg]
            steps = _JENKINS_MIX if block < blocks - 1 else ()
            for target, source, after, rot in steps:
                regs[target] -= regs[source]
                regs[target] ^= _rotl(regs[source], rot)
                regs[source] += regs[after]
        for target, source, rot in _JENKINS_FINAL:
            regs[target] ^= regs[source]
            regs[target] -= _rotl(regs[source], rot)
        return regs[2]

    def select(self, keep: np.ndarray) -> _JenkinsKeys:
        return _JenkinsKeys(self.words[:, keep], self.lengths[keep])


_HASHERS: dict[int, type[_PreparedKeys]] = {MURMUR_HASH: _MurmurKeys, JENKINS_HASH: _JenkinsKeys}


_compiled_module: ModuleType | None = None
_compiled_failed = False
_numpy_hashes = 0  # MurmurHash hashes this process did on the numpy path (threads may race)


def _compiled(hash_type: int, hashes: int) -> ModuleType | None:
    """The compiled kernels for a batch of `hashes` hashes, or None for the numpy path: the
    hash is not MurmurHash, numba cannot be imported, or the numpy path has not yet cost
    this process what importing numba would (see _COMPILED_AFTER_HASHES)."""
    global _compiled_module, _compiled_failed, _numpy_hashes
    if hash_type != MURMUR_HASH or not hashes or _compiled_failed:
        return None
    if _compiled_module is None:
        if _numpy_hashes + hashes < _COMPILED_AFTER_HASHES:
            _numpy_hashes += hashes
            return None
        try:
            from hudi_core.io import bloom_hash_compiled
        except Exception:  # numba missing, too old or new for this numpy, or cannot cache
            _compiled_failed = True
            return None
        _compiled_module = bloom_hash_compiled
    return _compiled_module


def hash_keys(keys: KeysLike, seed: int = 0, hash_type: int = MURMUR_HASH) -> np.ndarray:
    """Hadoop's 32-bit hash (as Java int32) of each key's UTF-8 bytes with one seed."""
    key_bytes = _KeyBytes(keys)
    out = np.zeros(key_bytes.count, dtype=np.uint32)
    compiled = _compiled(hash_type, key_bytes.count)
    if compiled is not None:
        compiled.murmur_hashes(
            key_bytes.data, key_bytes.offsets, key_bytes.by_length(), seed % 2**32, out
        )
    elif key_bytes.count:
        for index, prepared in key_bytes.batches(_HASHERS[hash_type]):
            seeds = np.full(len(index), _int32(seed), dtype=np.int32).view(np.uint32)
            out[index] = prepared.hash(seeds)
    return out.view(np.int32)


def _bit_positions(hashes: np.ndarray, vector_size: int) -> np.ndarray:
    # Java's Math.abs(h % size) on int h; |h| taken as uint32 is exact even for Integer.MIN_VALUE.
    positions = np.abs(hashes.view(np.int32)).view(np.uint32) % np.uint32(vector_size)
    return positions.astype(np.intp)  # numpy indexes fastest with its native index type


# ---------------------------------------------------------------- filters


class BloomFilter(ABC):
    """A Hudi bloom filter: rows of bits sharing one size, hash count and hash type."""

    type_code: ClassVar[str]

    def __init__(
        self, vector_size: int, num_hashes: int, hash_type: int, rows: np.ndarray | _PackedRows
    ):
        self.vector_size = vector_size
        self.num_hashes = num_hashes
        self.hash_type = hash_type
        # (row count, vector_size) bool; as read from a footer, unpacked on first use: a
        # merge that adds no key writes the footer's string again and never needs the bits.
        self._bits = rows
        self._serialized: str | None = None  # as read from a footer, until keys are added

    @property
    def _rows(self) -> np.ndarray:
        if isinstance(self._bits, _PackedRows):
            self._bits = self._bits.unpacked(self.vector_size)
        return self._bits

    @_rows.setter
    def _rows(self, rows: np.ndarray) -> None:
        self._bits = rows

    @property
    def num_rows(self) -> int:
        if isinstance(self._bits, _PackedRows):
            return len(self._bits.rows)
        return int(self._bits.shape[0])

    def add_keys(self, keys: KeysLike) -> None:
        """Adds string keys (their UTF-8 bytes); nulls and empty strings are refused."""
        key_bytes = _KeyBytes(keys)
        if not key_bytes.count:
            return
        self._serialized = None
        row_of_key = self._claim_rows(key_bytes.count)
        compiled = _compiled(self.hash_type, key_bytes.count * self.num_hashes)
        if compiled is not None:
            order = key_bytes.by_length()
            compiled.set_bits(
                key_bytes.data, key_bytes.offsets, order, row_of_key, self.num_hashes, self._rows
            )
            return
        for index, prepared in key_bytes.batches(_HASHERS[self.hash_type]):
            self._set_bits(prepared, row_of_key[index])

    def might_contain(self, keys: KeysLike) -> np.ndarray:
        """False for keys certainly never added; True for added keys and rare false positives."""
        key_bytes = _KeyBytes(keys)
        found = np.zeros(key_bytes.count, dtype=bool)
        # Counted as one hash a key: most probed keys are absent and miss on their first bits.
        compiled = _compiled(self.hash_type, key_bytes.count)
        if compiled is not None:
            order = key_bytes.by_length()
            compiled.probe(
                key_bytes.data, key_bytes.offsets, order, self.num_hashes, self._rows, found
            )
        elif key_bytes.count:
            for index, prepared in key_bytes.batches(_HASHERS[self.hash_type]):
                found[index] = self._probe(prepared, len(index))
        return found

    def serialize(self) -> str:
        """The exact string Java Hudi stores under the footer key org.apache.hudi.bloomfilter."""
        if self._serialized is not None:  # unchanged since read: the same string again
            return self._serialized
        return base64.b64encode(self._payload()).decode("ascii")

    def _set_bits(self, prepared: _PreparedKeys, rows: np.ndarray) -> None:
        single = self.num_rows == 1
        target = self._rows[0] if single else self._rows.reshape(-1)
        base = None if single else rows.astype(np.int64) * self.vector_size
        seeds = np.zeros(len(rows), dtype=np.uint32)
        for _ in range(self.num_hashes):
            seeds = prepared.hash(seeds)
            positions = _bit_positions(seeds, self.vector_size)
            target[positions if single else base + positions] = True

    def _probe(self, prepared: _PreparedKeys, count: int) -> np.ndarray:
        """Keys whose bits are all set in some row; keys ruled out everywhere stop being hashed."""
        alive = np.arange(count)
        hits = np.ones((self.num_rows, count), dtype=bool)
        seeds = np.zeros(count, dtype=np.uint32)
        for _ in range(self.num_hashes):
            seeds = prepared.hash(seeds)
            hits &= np.take(self._rows, _bit_positions(seeds, self.vector_size), axis=1)
            keep: np.ndarray = hits[0] if self.num_rows == 1 else np.any(hits, axis=0)
            if np.count_nonzero(keep) < 0.75 * len(alive):
                alive, hits, seeds = alive[keep], hits[:, keep], seeds[keep]
                prepared = prepared.select(keep)
                if not len(alive):
                    break
        found = np.zeros(count, dtype=bool)
        found[alive[hits.any(axis=0)]] = True
        return found

    def _row_header(self) -> bytes:
        return _ROW_HEADER.pack(_VERSION, self.num_hashes, self.hash_type, self.vector_size)

    def _row_payload(self, row: int) -> bytes:
        return self._row_header() + np.packbits(self._rows[row], bitorder="little").tobytes()

    @abstractmethod
    def _claim_rows(self, count: int) -> np.ndarray:
        """The row each of count new keys goes into, in order; adds rows as needed."""

    @abstractmethod
    def _payload(self) -> bytes:
        """The DataOutput bytes Java writes for this filter."""


class SimpleBloomFilter(BloomFilter):
    """One fixed row of bits: Hudi's SimpleBloomFilter (Hadoop's BloomFilter)."""

    type_code = SIMPLE

    def _claim_rows(self, count: int) -> np.ndarray:
        return np.zeros(count, dtype=np.intp)

    def _payload(self) -> bytes:
        return self._row_payload(0)


class DynamicBloomFilter(BloomFilter):
    """Hudi's HoodieDynamicBoundedBloomFilter: a new row per num_entries keys until rows hold
    max_entries, then keys go round-robin over all rows (accuracy is no longer bounded)."""

    type_code = DYNAMIC_V0

    def __init__(
        self,
        vector_size: int,
        num_hashes: int,
        hash_type: int,
        rows: np.ndarray | _PackedRows,
        row_capacity: int,
        max_entries: int,
        active_count: int = 0,
    ):
        super().__init__(vector_size, num_hashes, hash_type, rows)
        self.row_capacity = row_capacity
        # Java does not serialize the bound, so a deserialized filter has 0 and cycles rows
        # as soon as its last row is full.
        self.max_entries = max_entries
        self._active_count = active_count  # keys in the last row; keeps counting once cycling
        self._cycling = False  # neither serialized: Java restarts them when it reads a filter
        self._next_row = 0

    def _claim_rows(self, count: int) -> np.ndarray:
        rows = np.empty(count, dtype=np.intp)
        row_count, done = self.num_rows, 0
        while done < count and not self._cycling:
            if self._active_count >= self.row_capacity:
                if _int32(row_count * self.row_capacity) < self.max_entries:
                    row_count, self._active_count = row_count + 1, 0
                    continue
                # Java hands row 0 the first key here and again at the start of the cycle.
                self._cycling = True
                rows[done] = 0
                done += 1
                self._active_count = _int32(self._active_count + 1)
                break
            take = min(count - done, self.row_capacity - self._active_count)
            rows[done : done + take] = row_count - 1
            done += take
            self._active_count = _int32(self._active_count + take)
        if done < count:
            rest = count - done
            rows[done:] = (self._next_row + np.arange(rest)) % row_count
            self._next_row += rest
            self._active_count = _int32(self._active_count + rest)
        self._grow(row_count)
        return rows

    def _grow(self, row_count: int) -> None:
        if row_count > self.num_rows:
            extra = np.zeros((row_count - self.num_rows, self.vector_size), dtype=bool)
            self._rows = np.concatenate([self._rows, extra])

    def _payload(self) -> bytes:
        state = _DYNAMIC_STATE.pack(self.row_capacity, self._active_count, self.num_rows)
        rows = b"".join(self._row_payload(row) for row in range(self.num_rows))
        return self._row_header() + state + rows


# ---------------------------------------------------------------- construction and reading


def _type_code(type_code: str | bytes | None, error: type[Exception]) -> str:
    if type_code is None:
        return SIMPLE  # footers of SIMPLE filters carry no type code at all
    if isinstance(type_code, bytes):
        type_code = type_code.decode("utf-8", errors="replace")
    code = type_code.strip().upper()
    if code not in (SIMPLE, DYNAMIC_V0):
        raise error(f"unknown bloom filter type code {type_code!r}; expected SIMPLE or DYNAMIC_V0")
    return code


def new_bloom_filter(type_code: str, num_entries: int, fpp: float, max_entries: int) -> BloomFilter:
    """An empty filter as Hudi's writers create it (MurmurHash, rows sized for num_entries)."""
    code = _type_code(type_code, InvalidOptionError)
    if not 0 < num_entries < 2**31:
        raise InvalidOptionError(
            f"bloom filter num_entries must be a positive int, got {num_entries}"
        )
    if not 0.0 < fpp < 1.0:
        raise InvalidOptionError(f"bloom filter fpp must be between 0 and 1, got {fpp}")
    vector_size = bloom_bit_size(num_entries, fpp)
    num_hashes = bloom_num_hashes(vector_size, num_entries)
    rows = np.zeros((1, vector_size), dtype=bool)
    if code == SIMPLE:
        return SimpleBloomFilter(vector_size, num_hashes, MURMUR_HASH, rows)
    return DynamicBloomFilter(
        vector_size, num_hashes, MURMUR_HASH, rows, num_entries, _int32(max_entries)
    )


def resume_bloom_filter(stored: BloomFilter | None, like: BloomFilter) -> BloomFilter | None:
    """A file's stored filter, ready to take more keys, if it is shaped as `like` (a new
    filter from the current settings); else None, and the caller builds a fresh one."""
    if stored is None or stored.type_code != like.type_code:
        return None
    if (stored.vector_size, stored.num_hashes, stored.hash_type) != (
        like.vector_size,
        like.num_hashes,
        like.hash_type,
    ):
        return None
    if isinstance(stored, DynamicBloomFilter):
        assert isinstance(like, DynamicBloomFilter)
        if stored.row_capacity != like.row_capacity:
            return None
        stored.max_entries = like.max_entries  # not serialized: restore the growth bound
    return stored


class _Reader:
    """Big-endian DataInput over the decoded bytes; running short means a corrupt filter."""

    def __init__(self, data: bytes) -> None:
        self._data, self._pos = data, 0

    def unpack(self, layout: struct.Struct) -> tuple[Any, ...]:
        return layout.unpack(self.take(layout.size))

    def take(self, size: int) -> bytes:
        if self._pos + size > len(self._data):
            raise CorruptFileError(
                f"bloom filter is truncated: needs {self._pos + size} bytes, has {len(self._data)}"
            )
        chunk = self._data[self._pos : self._pos + size]
        self._pos += size
        return chunk

    def expect_end(self) -> None:
        if self._pos != len(self._data):
            raise CorruptFileError(
                f"bloom filter has {len(self._data) - self._pos} unexpected trailing bytes "
                "(wrong type code for this filter?)"
            )


def _read_header(reader: _Reader) -> tuple[int, int, int]:
    """(vector size, hash count, hash type) of one Hadoop filter header."""
    (first,) = reader.unpack(_INT)
    if first > 0:  # unversioned layout: the first int is the hash count, hashing is Jenkins
        num_hashes, hash_type = first, JENKINS_HASH
    elif first == _VERSION:
        num_hashes, hash_type = reader.unpack(_HASH_AND_TYPE)
    else:
        raise CorruptFileError(f"unsupported bloom filter format version {first}")
    (vector_size,) = reader.unpack(_INT)
    if vector_size <= 0 or num_hashes <= 0 or hash_type not in _HASHERS:
        raise CorruptFileError(
            f"bloom filter header is invalid: {vector_size} bits, {num_hashes} hashes, "
            f"hash type {hash_type}"
        )
    return vector_size, num_hashes, hash_type


@dataclass(frozen=True)
class _PackedRows:
    """A filter's rows of bits as serialized (little-endian packed bytes, one per row)."""

    rows: list[bytes]

    def unpacked(self, vector_size: int) -> np.ndarray:
        packed = np.frombuffer(b"".join(self.rows), dtype=np.uint8).reshape(len(self.rows), -1)
        bits = np.unpackbits(packed, axis=1, count=vector_size, bitorder="little")
        return bits.view(bool)


def _read_bits(reader: _Reader, vector_size: int) -> bytes:
    return reader.take((vector_size + 7) // 8)


def _read_simple(reader: _Reader) -> SimpleBloomFilter:
    vector_size, num_hashes, hash_type = _read_header(reader)
    rows = _PackedRows([_read_bits(reader, vector_size)])
    return SimpleBloomFilter(vector_size, num_hashes, hash_type, rows)


def _read_dynamic(reader: _Reader) -> DynamicBloomFilter:
    header = _read_header(reader)
    row_capacity, active_count, row_count = reader.unpack(_DYNAMIC_STATE)
    if row_count <= 0:
        raise CorruptFileError(f"dynamic bloom filter has {row_count} rows")
    rows = []
    for row in range(row_count):
        if _read_header(reader) != header:
            raise CorruptFileError(f"dynamic bloom filter row {row} differs from its header")
        rows.append(_read_bits(reader, header[0]))
    return DynamicBloomFilter(
        *header, _PackedRows(rows), row_capacity, max_entries=0, active_count=active_count
    )


def _decode_base64(serialized: str | bytes) -> bytes:
    # binascii checks the alphabet in C; b64decode(validate=True) runs a regex over the
    # whole string first, a megabyte for a filter of a few rows.
    data = serialized.encode("ascii") if isinstance(serialized, str) else serialized
    try:
        return binascii.a2b_base64(data, strict_mode=True)
    except (binascii.Error, ValueError) as error:
        raise CorruptFileError(f"bloom filter is not valid base64: {error}") from error


def deserialize_bloom_filter(serialized: str | bytes, type_code: str | bytes | None) -> BloomFilter:
    """Reads a footer's bloom filter; type_code None (no footer entry) means SIMPLE.

    Stricter than Java, which ignores trailing bytes: they mean a wrong type code.
    """
    code = _type_code(type_code, CorruptFileError)
    payload = _decode_base64(serialized)
    reader = _Reader(payload)
    bloom = _read_simple(reader) if code == SIMPLE else _read_dynamic(reader)
    reader.expect_end()
    if payload[: _INT.size] == _INT.pack(_VERSION):  # the layout serialize() writes
        # Written again as read (a merge that adds no key keeps the file's filter): no
        # re-encoding of the bits.
        bloom._serialized = _text(serialized)
    return bloom


def bloom_filter_footer(bloom: BloomFilter) -> dict[str, str]:
    """Footer entries Hudi writes for a filter: the filter, plus its type code when dynamic."""
    entries = {FOOTER_BLOOM_FILTER: bloom.serialize()}
    if bloom.type_code != SIMPLE:
        entries[FOOTER_BLOOM_FILTER_TYPE] = bloom.type_code
    return entries


def bloom_filter_from_footer(
    metadata: Mapping[bytes, bytes] | Mapping[str, str] | None,
) -> BloomFilter | None:
    """The filter in a parquet footer's key-value metadata, or None if the file has none."""
    text = {_text(key): value for key, value in (metadata or {}).items()}
    serialized = text.get(FOOTER_BLOOM_FILTER) or text.get(FOOTER_LEGACY_BLOOM_FILTER)
    if serialized is None:
        return None
    return deserialize_bloom_filter(serialized, text.get(FOOTER_BLOOM_FILTER_TYPE))


def _text(value: str | bytes) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value


__all__ = [
    "DYNAMIC_V0",
    "FOOTER_BLOOM_FILTER",
    "FOOTER_BLOOM_FILTER_TYPE",
    "FOOTER_LEGACY_BLOOM_FILTER",
    "FOOTER_MAX_RECORD_KEY",
    "FOOTER_MIN_RECORD_KEY",
    "JENKINS_HASH",
    "MURMUR_HASH",
    "SIMPLE",
    "BloomFilter",
    "DynamicBloomFilter",
    "KeysLike",
    "SimpleBloomFilter",
    "bloom_bit_size",
    "bloom_filter_footer",
    "bloom_filter_from_footer",
    "bloom_num_hashes",
    "deserialize_bloom_filter",
    "hash_keys",
    "new_bloom_filter",
]
