"""Avro's zigzag varints (ints, longs, lengths, counts, union indexes), many at once.

A long is zigzag-mapped to an unsigned value (0, -1, 1, -2 ... -> 0, 1, 2, 3 ...) and written
7 bits at a time, least significant first, the high bit of each byte saying another follows;
an int is the same for values that fit 32 bits. Ten bytes hold any long.
"""

from __future__ import annotations

import numpy as np

from hudi_core.errors import CorruptFileError

MAX_VARINT_BYTES = 10
_U64 = np.uint64


def zigzag(values: np.ndarray) -> np.ndarray:
    """int64 -> uint64 with small magnitudes small."""
    v = values.astype(np.int64, copy=False)
    return ((v << 1) ^ (v >> 63)).view(_U64)


def unzigzag(raw: np.ndarray) -> np.ndarray:
    """uint64 -> int64, the inverse of `zigzag`."""
    return ((raw >> _U64(1)) ^ (_U64(0) - (raw & _U64(1)))).view(np.int64)


def varint_cells(values: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """The zigzag varint of every value, as a (rows, width) byte matrix and the mask of the
    bytes in use (None when every row uses the full width)."""
    z = zigzag(values)
    if len(z) == 0:
        return np.zeros((0, 1), np.uint8), None
    top = int(z.max())
    width = max(1, (top.bit_length() + 6) // 7)
    if width == 1:
        return z.astype(np.uint8).reshape(-1, 1), None
    nbytes = np.ones(len(z), np.int64)
    for k in range(1, width):
        nbytes += z >= _U64(1 << (7 * k))
    matrix = np.empty((len(z), width), np.uint8)
    for k in range(width):
        low7 = ((z >> _U64(7 * k)) & _U64(0x7F)).astype(np.uint8)
        matrix[:, k] = low7 | ((nbytes > k + 1).astype(np.uint8) << 7)
    if int(nbytes.min()) == width:
        return matrix, None
    return matrix, np.arange(width) < nbytes[:, None]


def read_longs(buf: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int64 values, positions after them) of the zigzag varints at `pos`.

    Running off the buffer or past ten bytes is corruption.
    """
    if not len(pos):
        return np.zeros(0, np.int64), pos.copy()
    check_readable(buf, pos, 1)
    byte = buf[pos]
    if int(byte.max()) < 0x80:  # all one byte long: the common case for lengths and counts
        small = byte.astype(np.int64)
        return (small >> 1) ^ -(small & 1), pos + 1
    raw, end = _read_rest(buf, pos, byte)
    return unzigzag(raw), end


def _read_rest(buf: np.ndarray, pos: np.ndarray, byte: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(raw unsigned values, positions after) of varints whose first bytes, at `pos`, are
    `byte`: each pass reads one more byte of only the varints still going."""
    raw = (byte & 0x7F).astype(_U64)
    end = pos + 1
    going = None  # the rows whose varint goes on; None while that is every row
    for shift in range(7, 7 * MAX_VARINT_BYTES + 7, 7):
        more = byte >= 0x80
        if going is not None:
            going = going[more]
        elif not more.all():
            going = np.flatnonzero(more)
        if going is not None and not going.size:
            break
        if shift == 7 * MAX_VARINT_BYTES:
            raise CorruptFileError("an Avro varint runs longer than 10 bytes")
        at = end if going is None else end[going]
        check_readable(buf, at, 1)
        byte = buf[at]
        if shift == 63 and np.any(byte & 0x7E):
            raise CorruptFileError("an Avro varint overflows 64 bits")
        bits = (byte & 0x7F).astype(_U64) << _U64(shift)
        if going is None:  # whole-array operations while every varint is still going
            raw |= bits
            end += 1
        else:
            raw[going] |= bits
            end[going] = at + 1
    return raw, end


def check_readable(buf: np.ndarray, pos: np.ndarray, width: int | np.ndarray) -> None:
    """Raises CorruptFileError unless `width` bytes can be read at every position."""
    if not len(pos):
        return
    furthest = int(pos.max()) + width if isinstance(width, int) else int(np.max(pos + width))
    if furthest > len(buf):
        raise CorruptFileError(
            f"an Avro datum runs past the end of its {len(buf)}-byte buffer; the data is "
            "truncated or does not match the schema"
        )
