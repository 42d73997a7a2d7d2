"""The Hudi log format: log files as a sequence of framed blocks.

A block, all integers big-endian:

    magic '#HUDI#' | int64 size | int32 format version (1) | int32 block type | header map |
    int64 content length | content | footer map | int64 total length

`size` counts every byte after itself, the trailing long included; the trailing total length
counts from the magic to the end of the footer (so it is size + 6). A map is an int32 entry
count, then per entry an int32 key, an int32 length and that many UTF-8 bytes.

Reading follows Apache Hudi: a block whose size runs past the file, whose trailing length
does not match, or which is not followed by another magic (or the end of the file) is corrupt;
the reader then resumes at the next magic, so the blocks after a damaged one are still read.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import IntEnum
from typing import cast

import pyarrow as pa

from hudi_core.errors import CorruptFileError
from hudi_core.storage import Storage

MAGIC = b"#HUDI#"
LOG_FORMAT_VERSION = 1
_LONG = struct.Struct(">q")
_INT = struct.Struct(">i")
_SCAN_CHUNK = 1 << 20  # bytes read at a time while looking for the next magic
_HEADER_PROBE = 1 << 16  # bytes read to parse a header without the content


class BlockType(IntEnum):
    COMMAND = 0
    DELETE = 1
    CORRUPT = 2
    AVRO_DATA = 3
    HFILE_DATA = 4
    PARQUET_DATA = 5
    CDC_DATA = 6


class HeaderKey(IntEnum):
    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6


ROLLBACK_COMMAND = "0"  # COMMAND_BLOCK_TYPE of a rollback block


@dataclass(frozen=True)
class LogBlock:
    block_type: BlockType
    header: dict[HeaderKey, str] = field(default_factory=dict)
    content: bytes = b""
    footer: dict[HeaderKey, str] = field(default_factory=dict)
    content_span: tuple[int, int] | None = None  # (position, length) when content is not read

    @property
    def instant_time(self) -> str | None:
        return self.header.get(HeaderKey.INSTANT_TIME)

    @property
    def is_rollback(self) -> bool:
        return (
            self.block_type is BlockType.COMMAND
            and self.header.get(HeaderKey.COMMAND_BLOCK_TYPE) == ROLLBACK_COMMAND
        )

    def to_bytes(self) -> bytes:
        body = b"".join(
            [
                _INT.pack(LOG_FORMAT_VERSION),
                _INT.pack(int(self.block_type)),
                _map_bytes(self.header),
                _LONG.pack(len(self.content)),
                self.content,
                _map_bytes(self.footer),
            ]
        )
        size = len(body) + _LONG.size  # everything after the size field, trailing long included
        return MAGIC + _LONG.pack(size) + body + _LONG.pack(size + len(MAGIC))


def _map_bytes(entries: dict[HeaderKey, str]) -> bytes:
    parts = [_INT.pack(len(entries))]
    for key, value in entries.items():
        encoded = value.encode()
        parts += [_INT.pack(int(key)), _INT.pack(len(encoded)), encoded]
    return b"".join(parts)


def write_log_file(storage: Storage, path: str, blocks: list[LogBlock]) -> int:
    """Writes a new log file holding `blocks`; returns its size."""
    data = log_file_bytes(blocks)
    storage.write_bytes(path, data)
    return len(data)


def log_file_bytes(blocks: list[LogBlock]) -> bytes:
    """The content of a log file holding `blocks`, in order."""
    return b"".join(block.to_bytes() for block in blocks)


def read_log_blocks(storage: Storage, path: str) -> Iterator[LogBlock]:
    """The blocks of a log file in order, damaged stretches as CORRUPT blocks."""
    with storage.fs.open_input_file(storage.full_path(path)) as source:
        yield from _BlockReader(source, source.size()).blocks()


def read_log_block_headers(storage: Storage, path: str) -> list[LogBlock]:
    """The blocks of a log file without their content (see `load_content`), so that a scan
    can decide which blocks count before it decodes any."""
    with storage.fs.open_input_file(storage.full_path(path)) as source:
        return list(_BlockReader(source, source.size(), with_content=False).blocks())


def load_content(storage: Storage, path: str, block: LogBlock) -> LogBlock:
    """`block` (from read_log_block_headers) with its content read."""
    if block.content_span is None:
        return block
    position, length = block.content_span
    with storage.fs.open_input_file(storage.full_path(path)) as source:
        content = source.read_at(length, position)
    return LogBlock(block.block_type, block.header, content, block.footer)


class _BlockReader:
    def __init__(self, source: pa.NativeFile, length: int, with_content: bool = True) -> None:
        self.source = source
        self.length = length
        self.with_content = with_content

    def _read(self, position: int, count: int) -> bytes:
        return cast(bytes, self.source.read_at(count, position))

    def blocks(self) -> Iterator[LogBlock]:
        position = 0
        while position + len(MAGIC) <= self.length:  # a shorter tail cannot hold a block
            if self._read(position, len(MAGIC)) != MAGIC:
                position = self._next_magic(position + 1)  # bytes no block claims
                yield LogBlock(BlockType.CORRUPT)
                continue
            block, end = self._block_at(position)
            if block is None:
                end = self._next_magic(position + len(MAGIC))
                block = LogBlock(BlockType.CORRUPT)
            yield block
            position = end

    def _block_at(self, start: int) -> tuple[LogBlock | None, int]:
        """The block starting at `start` and where the next begins, or None if it is damaged."""
        size_at = start + len(MAGIC)
        if size_at + _LONG.size > self.length:
            return None, 0
        (size,) = _LONG.unpack(self._read(size_at, _LONG.size))
        end = size_at + _LONG.size + size
        if size < 4 + 4 + 4 + 8 + 4 + 8 or end > self.length:
            return None, 0
        (trailing,) = _LONG.unpack(self._read(end - _LONG.size, _LONG.size))
        if trailing != size + len(MAGIC):
            return None, 0
        if end + len(MAGIC) <= self.length and self._read(end, len(MAGIC)) != MAGIC:
            return None, 0  # as Apache Hudi: the next bytes must start a block, or end the file
        body_at = size_at + _LONG.size
        try:
            if self.with_content:
                block = _parse_block(self._read(body_at, size - _LONG.size))
            else:
                block = self._parse_without_content(body_at, size - _LONG.size)
        except (struct.error, ValueError, UnicodeDecodeError, CorruptFileError):
            return None, 0
        return block, end

    def _parse_without_content(self, body_at: int, body_length: int) -> LogBlock:
        """Header and footer of the block whose body starts at `body_at`; content skipped."""
        prefix = self._read(body_at, min(body_length, _HEADER_PROBE))
        try:
            _, kind, header, offset = _parse_head(prefix)
        except (struct.error, ValueError, CorruptFileError):  # a header past the probe: read all
            return _parse_block(self._read(body_at, body_length))
        if offset + _LONG.size <= len(prefix):
            (content_length,) = _LONG.unpack_from(prefix, offset)
        else:
            (content_length,) = _LONG.unpack(self._read(body_at + offset, _LONG.size))
        footer_at = offset + _LONG.size + content_length
        if content_length < 0 or footer_at > body_length:
            raise CorruptFileError("content runs past the block")
        footer, end = _parse_map(self._read(body_at + footer_at, body_length - footer_at), 0)
        if footer_at + end != body_length:
            raise CorruptFileError("block length does not match its parts")
        span = (body_at + offset + _LONG.size, content_length)
        return LogBlock(BlockType(kind), header, b"", footer, span)

    def _next_magic(self, position: int) -> int:
        """The position of the next magic at or after `position`, or the end of the file."""
        while position < self.length:
            chunk = self._read(position, _SCAN_CHUNK + len(MAGIC) - 1)
            found = chunk.find(MAGIC)
            if found >= 0:
                return position + found
            position += _SCAN_CHUNK
        return self.length


def _parse_head(body: bytes) -> tuple[int, int, dict[HeaderKey, str], int]:
    """Format version, block type and header of a block body, and where its header ends."""
    (version,) = _INT.unpack_from(body, 0)
    if version != LOG_FORMAT_VERSION:
        raise CorruptFileError(f"log format version {version} is not supported")
    (kind,) = _INT.unpack_from(body, 4)
    header, offset = _parse_map(body, 8)
    return version, kind, header, offset


def _parse_block(body: bytes) -> LogBlock:
    """A block from the bytes between its size field and its trailing length."""
    _, kind, header, offset = _parse_head(body)
    (content_length,) = _LONG.unpack_from(body, offset)
    offset += _LONG.size
    if content_length < 0 or offset + content_length > len(body):
        raise CorruptFileError("content runs past the block")
    content = body[offset : offset + content_length]
    footer, offset = _parse_map(body, offset + content_length)
    if offset != len(body):
        raise CorruptFileError("block length does not match its parts")
    return LogBlock(BlockType(kind), header, content, footer)


def _parse_map(body: bytes, offset: int) -> tuple[dict[HeaderKey, str], int]:
    (count,) = _INT.unpack_from(body, offset)
    offset += _INT.size
    if count < 0:
        raise CorruptFileError("negative map size")
    entries = {}
    for _ in range(count):
        key, length = struct.unpack_from(">ii", body, offset)
        offset += 8
        if length < 0 or offset + length > len(body):
            raise CorruptFileError("map entry runs past the block")
        value = body[offset : offset + length].decode()
        offset += length
        if key in HeaderKey._value2member_map_:  # keys of newer versions are skipped
            entries[HeaderKey(key)] = value
    return entries, offset
