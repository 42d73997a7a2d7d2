"""Decimal bytes: Arrow's little-endian two's complement <-> Avro's big-endian forms.

Arrow holds a decimal's unscaled value as a 16-byte (decimal128) or 32-byte (decimal256)
little-endian two's complement integer. Avro's `fixed` form is the big-endian value in exactly
`size` bytes; its `bytes` form is the shortest big-endian value (Java's BigInteger.toByteArray:
at least one byte, a leading 0x00/0xFF only where the sign needs it). Rows are matrix rows.
"""

from __future__ import annotations

import numpy as np

from hudi_core.errors import CorruptFileError, SchemaError


def to_fixed(little: np.ndarray, size: int, path: str) -> np.ndarray:
    """(rows, size) big-endian bytes of (rows, width) little-endian values."""
    width = little.shape[1]
    sign = _sign_bytes(little[:, width - 1])
    if size >= width:
        padding = np.repeat(sign[:, None], size - width, axis=1)
        return np.hstack([padding, little[:, ::-1]])
    if np.any(little[:, size:] != sign[:, None]) or np.any(
        _sign_bytes(little[:, size - 1]) != sign
    ):
        raise SchemaError(f"field '{path}' has a decimal too large for its {size}-byte Avro fixed")
    return np.ascontiguousarray(little[:, size - 1 :: -1])


def to_minimal(little: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(big-endian (rows, width) bytes, bytes used per row): a row's shortest form is its last
    `used` bytes."""
    width = little.shape[1]
    magnitude = little ^ _sign_bytes(little[:, width - 1])[:, None]  # negatives: ~value
    nonzero = magnitude != 0
    top = width - 1 - np.argmax(nonzero[:, ::-1], axis=1)  # highest byte that is not sign
    top_byte = magnitude[np.arange(len(little)), top]
    used = np.where(nonzero.any(axis=1), top + 1 + (top_byte >= 0x80), 1)
    return np.ascontiguousarray(little[:, ::-1]), used.astype(np.int64)


def from_fixed(big: np.ndarray, width: int) -> np.ndarray:
    """(rows, width) little-endian values of (rows, size) big-endian ones."""
    size = big.shape[1]
    if size == 0:
        return np.zeros((len(big), width), np.uint8)
    sign = _sign_bytes(big[:, 0])
    if size <= width:
        padding = np.repeat(sign[:, None], width - size, axis=1)
        return np.hstack([big[:, ::-1], padding])
    kept = big[:, size - width :]
    if np.any(big[:, : size - width] != sign[:, None]) or np.any(_sign_bytes(kept[:, 0]) != sign):
        raise CorruptFileError(f"an Avro decimal of {size} bytes overflows {width * 8} bits")
    return np.ascontiguousarray(kept[:, ::-1])


def from_minimal(window: np.ndarray, used: np.ndarray) -> np.ndarray:
    """(rows, width) little-endian values of big-endian ones in the first `used` bytes of
    each (rows, width) window row; no bytes means zero."""
    width = window.shape[1]
    source = used[:, None] - 1 - np.arange(width)  # column of the window each byte comes from
    gathered = np.take_along_axis(window, np.clip(source, 0, width - 1), axis=1)
    sign = np.where(used > 0, _sign_bytes(window[:, 0]), 0).astype(np.uint8)
    return np.where(source >= 0, gathered, sign[:, None]).astype(np.uint8)


def _sign_bytes(top: np.ndarray) -> np.ndarray:
    """0xFF where the byte holding the sign bit is negative, else 0x00."""
    return np.where(top >= 0x80, 0xFF, 0).astype(np.uint8)
