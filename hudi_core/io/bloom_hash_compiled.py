"""Hadoop's MurmurHash2 chain for bloom filters, compiled with numba.

The same hashing as the numpy path in bloom_filter.py (see its docstring for the layout):
hash i of a key is MurmurHash2 of its bytes seeded with hash i-1, and its bit is
|h mod size| of the row the key belongs to. Like the numpy path, keys go in chunks, pass by
pass: a key's 4-byte blocks are mixed once (that step does not depend on the seed), and
each pass runs over many independent keys, which keeps the CPU busy where one key's chain
of hashes would leave it waiting on each multiply.

Importing this module imports numba, and the first kernel call loads it from numba's cache:
together about half a second, so bloom_filter.py comes here only once a process has hashed
enough to repay that (see _COMPILED_AFTER_HASHES). cache=True keeps the compiled code on
disk (NUMBA_CACHE_DIR if set and writable, else __pycache__ next to this file, else a
per-user directory; with none writable numba refuses at import and bloom_filter stays on
numpy), so only the first process on a machine pays for compiling (~10 s).

numba widens 32-bit integer arithmetic to 64 bits: results are cast or masked back to 32
bits, and constants are numpy integers (a Python int mixed with a uint64 becomes a float).
Helpers are inlined: a call that passes arrays costs atomic reference counts on each, more
than the hash itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

_M = np.uint32(0x5BD1E995)
_LOW32 = np.uint64(0xFFFFFFFF)
_SIGN_BITS = np.uint64(0xFFFFFF00)  # a Java byte >= 0x80 read as an int
_CHUNK = 4096  # keys hashed together pass by pass; their mixed blocks stay in L1/L2 cache


@njit(cache=True, nogil=True, inline="always")
def _signed_byte(byte: np.uint8) -> np.uint64:
    """A byte as Java reads it (signed), widened to 32 bits."""
    value = np.uint64(byte)
    if value >= np.uint64(0x80):
        value |= _SIGN_BITS
    return value


@njit(cache=True, nogil=True)
def _prepare(
    data: np.ndarray, offsets: np.ndarray, order: np.ndarray, first: int, last: int
) -> tuple[Any, ...]:
    """Keys order[first..last-1] readied for seeded hashing, the chunk's j-th key at j:
    (mixed, blocks, lengths, tails, tail_mults). mixed[b, j] is key j's block b mixed with
    the constant (zero past its blocks), blocks its count of 4-byte blocks, tails its last
    1-3 bytes folded Hadoop's way and tail_mults the multiplier after the tail: M, or 1 when
    the key has no tail. Every key of a chunk is hashed over the longest key's blocks."""
    count = last - first
    lengths = np.empty(count, dtype=np.uint32)
    blocks = np.empty(count, dtype=np.uint32)
    for j in range(count):
        key = order[first + j]
        lengths[j] = offsets[key + 1] - offsets[key]
        blocks[j] = lengths[j] >> 2
    mixed = np.zeros((blocks.max(), count), dtype=np.uint32)
    tails = np.zeros(count, dtype=np.uint32)
    tail_mults = np.ones(count, dtype=np.uint32)
    for j in range(count):
        start = offsets[order[first + j]]
        for b in range(blocks[j]):
            i = start + 4 * b
            k = (
                np.uint64(data[i])
                | (np.uint64(data[i + 1]) << np.uint64(8))
                | (np.uint64(data[i + 2]) << np.uint64(16))
                | (np.uint64(data[i + 3]) << np.uint64(24))
            )
            k = (k * _M) & _LOW32
            k ^= k >> np.uint64(24)
            mixed[b, j] = (k * _M) & _LOW32
        end, left = start + lengths[j], lengths[j] & 3
        if left:  # Hadoop folds the tail first byte highest, as signed bytes
            tail = _signed_byte(data[end - 1])
            if left >= 2:
                tail ^= _signed_byte(data[end - 2]) << np.uint64(8)
            if left >= 3:
                tail ^= _signed_byte(data[end - 3]) << np.uint64(16)
            tails[j] = tail & _LOW32
            tail_mults[j] = _M
    return mixed, blocks, lengths, tails, tail_mults


@njit(cache=True, nogil=True, inline="always")
def _hash_all(
    hashes: np.ndarray,
    mixed: np.ndarray,
    blocks: np.ndarray,
    lengths: np.ndarray,
    tails: np.ndarray,
    tail_mults: np.ndarray,
    count: int,
) -> None:
    """hashes[j] = Hadoop's MurmurHash of prepared key j seeded with hashes[j], j < count.
    Written as plain loops over the keys, in 32-bit lanes over contiguous arrays, so LLVM
    turns them into SIMD: a short key keeps its hash while longer keys go on mixing blocks."""
    for j in range(count):
        hashes[j] ^= lengths[j]
    for b in range(mixed.shape[0]):
        for j in range(count):
            mixed_in = np.uint32((hashes[j] * _M) ^ mixed[b, j])
            hashes[j] = mixed_in if b < blocks[j] else hashes[j]
    for j in range(count):
        h = np.uint32((hashes[j] ^ tails[j]) * tail_mults[j])
        h ^= h >> np.uint32(13)
        h = np.uint32(h * _M)
        hashes[j] = h ^ (h >> np.uint32(15))


@njit(cache=True, nogil=True, inline="always")
def _bit(h: np.uint32, vector_size: int, inverse: float) -> np.int64:
    """Java's Math.abs(h % size) for h as an int32. A 64-bit division costs more than the
    whole hash, so the quotient comes from a multiply by 1 / size, off by at most one."""
    magnitude = np.int64(h) if h < np.uint64(0x80000000) else np.int64(0x100000000 - h)
    remainder = magnitude - np.int64(magnitude * inverse) * vector_size
    if remainder < 0:
        remainder += vector_size
    elif remainder >= vector_size:
        remainder -= vector_size
    return remainder


@njit(cache=True, nogil=True)
def murmur_hashes(
    data: np.ndarray, offsets: np.ndarray, order: np.ndarray, seed: int, out: np.ndarray
) -> None:
    """out[i] = MurmurHash of key i (data[offsets[i]:offsets[i + 1]]) with one 32-bit seed.
    Every kernel takes the keys in `order`, keys of about one length together (see
    _prepare: a chunk costs its longest key's blocks for every key)."""
    hashes = np.empty(_CHUNK, dtype=np.uint32)
    for first in range(0, len(out), _CHUNK):
        last = min(len(out), first + _CHUNK)
        hashes[:] = seed
        mixed, blocks, lengths, tails, tail_mults = _prepare(data, offsets, order, first, last)
        _hash_all(hashes, mixed, blocks, lengths, tails, tail_mults, last - first)
        for j in range(last - first):
            out[order[first + j]] = hashes[j]


@njit(cache=True, nogil=True)
def set_bits(
    data: np.ndarray,
    offsets: np.ndarray,
    order: np.ndarray,
    row_of_key: np.ndarray,
    num_hashes: int,
    bits: np.ndarray,
) -> None:
    """Sets key i's num_hashes bits in bits[row_of_key[i]] (bits: rows x vector size, bool)."""
    vector_size = bits.shape[1]
    inverse = 1.0 / vector_size
    hashes = np.empty(_CHUNK, dtype=np.uint32)
    for first in range(0, len(row_of_key), _CHUNK):
        last = min(len(row_of_key), first + _CHUNK)
        mixed, blocks, lengths, tails, tail_mults = _prepare(data, offsets, order, first, last)
        hashes[:] = 0
        for _ in range(num_hashes):
            _hash_all(hashes, mixed, blocks, lengths, tails, tail_mults, last - first)
            for j in range(last - first):
                bits[row_of_key[order[first + j]], _bit(hashes[j], vector_size, inverse)] = True


@njit(cache=True, nogil=True)
def probe(
    data: np.ndarray,
    offsets: np.ndarray,
    order: np.ndarray,
    num_hashes: int,
    bits: np.ndarray,
    found: np.ndarray,
) -> None:
    """found[i] = whether some row of bits has all of key i's bits set. A key ruled out in
    every row stops being hashed: most keys probed against a file are not in it, and miss
    on their first bits."""
    vector_size, row_count = bits.shape[1], bits.shape[0]
    inverse = 1.0 / vector_size
    hashes = np.empty(_CHUNK, dtype=np.uint32)
    keys = np.empty(_CHUNK, dtype=np.int64)  # chunk position of each key still in play
    positions = np.empty(_CHUNK, dtype=np.int64)
    hits = np.empty((row_count, _CHUNK), dtype=np.bool_)  # row holds all its bits so far
    for first in range(0, len(found), _CHUNK):
        last = min(len(found), first + _CHUNK)
        mixed, blocks, lengths, tails, tail_mults = _prepare(data, offsets, order, first, last)
        alive = last - first
        keys[:alive] = np.arange(alive)
        hashes[:alive] = 0
        hits[:] = True
        for _ in range(num_hashes):
            _hash_all(hashes, mixed, blocks, lengths, tails, tail_mults, alive)
            for j in range(alive):  # apart from the lookups below, so that it runs as SIMD
                positions[j] = _bit(hashes[j], vector_size, inverse)
            kept = 0
            for j in range(alive):
                in_some_row = False
                for row in range(row_count):
                    hits[row, j] &= bits[row, positions[j]]
                    in_some_row |= hits[row, j]
                if in_some_row:
                    if kept != j:  # compact: keys still in play stay at the front
                        keys[kept], hashes[kept], blocks[kept] = keys[j], hashes[j], blocks[j]
                        lengths[kept], tails[kept] = lengths[j], tails[j]
                        tail_mults[kept] = tail_mults[j]
                        # element by element: a slice is an array view, costlier than the copy
                        for block in range(mixed.shape[0]):
                            mixed[block, kept] = mixed[block, j]
                        for row in range(row_count):
                            hits[row, kept] = hits[row, j]
                    kept += 1
            alive = kept
            if not alive:
                break
        for j in range(alive):
            found[order[first + keys[j]]] = True
