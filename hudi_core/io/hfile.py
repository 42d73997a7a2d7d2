"""HFile: the sorted key-value file format of HBase (version 3), which Apache Hudi uses for
its bootstrap index and its metadata table.

Layout, front to back:

- data blocks (`DATABLK*`) of about `block_size` bytes, each cell a KeyValue: int32 key
  length, int32 value length, the key, the value, then a one-byte memstore timestamp (a
  Hadoop vlong, always 0 here). The key is HBase's: int16 row length, the row (the user's
  key), int8 family length (0, no family, no qualifier), int64 timestamp (Long.MAX_VALUE,
  "latest") and the type byte (4, Put).
- the load-on-open section: the root data index (`IDXROOT2`: per data block its int64
  offset, int32 on-disk size and first key, Hadoop-vint length prefixed), an empty meta
  index (`IDXROOT2` too) and the file info (`FILEINF2`: "PBUF" and a length-delimited
  protobuf of byte-string pairs).
- a fixed 4096-byte trailer: `TRABLK"$`, a length-delimited protobuf of offsets and counts,
  zero padding and, in the last four bytes, the version (minor in the top byte, major 3).

Every block starts with a 33-byte header (magic, sizes, previous block offset, checksum
type, bytes per checksum, on-disk data size) and ends with one 4-byte checksum per 16 KiB
chunk. The writer declares checksum type NULL and leaves those bytes zero, as Apache Hudi's
own HFile writer does; readers (Hudi's and HBase's) skip the check for that type. This
reader does not verify checksums of any type.

The writer compresses nothing (codec NONE); the reader also reads GZ blocks, the codec
Apache Hudi's metadata table writes, and multi-level data indexes that HBase writes for
large files.
"""

from __future__ import annotations

import io
import struct
import time
import zlib
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol

from hudi_core.errors import CorruptFileError, InternalError, UnsupportedTableFeatureError

# ---- format constants

DEFAULT_BLOCK_SIZE = 64 * 1024
TRAILER_SIZE = 4096
HEADER_SIZE = 33
BYTES_PER_CHECKSUM = 16 * 1024
CHECKSUM_SIZE = 4
CHECKSUM_TYPE_NULL = 0
MAJOR_VERSION = 3
MINOR_VERSION = 3  # what HBase 2.4 writes; Hudi's own writer writes 0, and readers ignore it
COMPRESSION_GZ = 1
COMPRESSION_NONE = 2
MAX_ROW_LENGTH = 32767
LATEST_TIMESTAMP = 2**63 - 1
TYPE_PUT = 4
DEFAULT_COMPARATOR = "org.apache.hudi.io.storage.HoodieHBaseKVComparator"

MAGIC_DATA = b"DATABLK*"
MAGIC_LEAF_INDEX = b"IDXLEAF2"
MAGIC_INTERMEDIATE_INDEX = b"IDXINTE2"
MAGIC_ROOT_INDEX = b"IDXROOT2"
MAGIC_FILE_INFO = b"FILEINF2"
MAGIC_TRAILER = b'TRABLK"$'
PB_MAGIC = b"PBUF"

LAST_KEY = b"hfile.LASTKEY"
AVG_KEY_LEN = b"hfile.AVG_KEY_LEN"
AVG_VALUE_LEN = b"hfile.AVG_VALUE_LEN"
CREATE_TIME_TS = b"hfile.CREATE_TIME_TS"
MAX_TAGS_LEN = b"hfile.MAX_TAGS_LEN"
KEY_VALUE_VERSION = b"KEY_VALUE_VERSION"
MAX_MEMSTORE_TS_KEY = b"MAX_MEMSTORE_TS_KEY"
RESERVED_PREFIX = b"hfile."
KEY_VALUE_VERSION_WITH_MEMSTORE_TS = 1

_HEADER = struct.Struct(">8siiqbii")
_KV_LENGTHS = struct.Struct(">ii")
_INDEX_ENTRY = struct.Struct(">qi")
_INT16 = struct.Struct(">H")
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")
_KEY_SUFFIX = struct.pack(">bqB", 0, LATEST_TIMESTAMP, TYPE_PUT)  # family length, ts, type
_U64 = 2**64


class _Sink(Protocol):
    def write(self, data: bytes, /) -> object: ...


# Makes the CorruptFileError of one file from a description of what is wrong with it.
_Corrupt = Callable[[str], CorruptFileError]


# ---- the trailer


@dataclass(frozen=True)
class HFileTrailer:
    """The trailer's fields, named after HBase's `FileTrailerProto`."""

    file_info_offset: int
    load_on_open_data_offset: int
    uncompressed_data_index_size: int
    total_uncompressed_bytes: int
    data_index_count: int
    meta_index_count: int
    entry_count: int
    num_data_index_levels: int
    first_data_block_offset: int
    last_data_block_offset: int
    comparator_class_name: str
    compression_codec: int
    major_version: int = MAJOR_VERSION
    minor_version: int = MINOR_VERSION


# Protobuf field numbers of the trailer message, in field order.
_TRAILER_FIELDS = (
    ("file_info_offset", 1),
    ("load_on_open_data_offset", 2),
    ("uncompressed_data_index_size", 3),
    ("total_uncompressed_bytes", 4),
    ("data_index_count", 5),
    ("meta_index_count", 6),
    ("entry_count", 7),
    ("num_data_index_levels", 8),
    ("first_data_block_offset", 9),
    ("last_data_block_offset", 10),
    ("comparator_class_name", 11),
    ("compression_codec", 12),
)
_SIGNED_TRAILER_FIELDS = {"first_data_block_offset", "last_data_block_offset"}  # -1: no data


def encode_trailer(trailer: HFileTrailer) -> bytes:
    """The trailer's TRAILER_SIZE bytes."""
    message = b"".join(
        _pb_bytes(number, trailer.comparator_class_name.encode())
        if name == "comparator_class_name"
        else _pb_uint(number, getattr(trailer, name))
        for name, number in _TRAILER_FIELDS
    )
    body = MAGIC_TRAILER + _varint(len(message)) + message
    version = struct.pack(">B", trailer.minor_version) + trailer.major_version.to_bytes(3, "big")
    return body.ljust(TRAILER_SIZE - len(version), b"\0") + version


def decode_trailer(data: bytes, source: str = "HFile") -> HFileTrailer:
    """The trailer at the end of a whole HFile's bytes."""
    corrupt = _corrupter(source, data)
    if len(data) < TRAILER_SIZE:
        raise corrupt(f"it is shorter than the {TRAILER_SIZE}-byte trailer (truncated?)")
    tail = data[-TRAILER_SIZE:]
    major = int.from_bytes(tail[-3:], "big")
    if major == 2:
        raise UnsupportedTableFeatureError(
            f"{source} is an HFile of format version 2; only version 3, which HBase 1.x and later "
            "and every Apache Hudi write, is read: rewrite the file with Apache Hudi"
        )
    if major != MAJOR_VERSION:
        raise corrupt(f"its last 4 bytes do not end with HFile version 3 (found {major})")
    if not tail.startswith(MAGIC_TRAILER):
        raise corrupt(f"its trailer does not start with {MAGIC_TRAILER!r} (truncated?)")
    length, start = _read_varint(tail, len(MAGIC_TRAILER), corrupt)
    if start + length > TRAILER_SIZE - 4:
        raise corrupt("its trailer's protobuf runs past the trailer")
    fields = dict(_pb_items(tail[start : start + length], corrupt))
    values = {name: _trailer_value(name, fields.get(number)) for name, number in _TRAILER_FIELDS}
    return HFileTrailer(**values, major_version=major, minor_version=tail[-4])  # type: ignore[arg-type]


def _trailer_value(name: str, raw: int | bytes | None) -> int | str:
    """A trailer field as read; absent fields take HBase's defaults (0, "", codec NONE)."""
    if name == "comparator_class_name":
        return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else ""
    if not isinstance(raw, int):
        return COMPRESSION_NONE if name == "compression_codec" else 0
    return raw - _U64 if name in _SIGNED_TRAILER_FIELDS and raw >= 2**63 else raw


# ---- blocks


@dataclass(frozen=True)
class BlockHeader:
    """The 33 bytes in front of every block."""

    magic: bytes
    on_disk_size_without_header: int  # payload + checksums
    uncompressed_size_without_header: int
    prev_block_offset: int
    checksum_type: int
    bytes_per_checksum: int
    on_disk_data_size_with_header: int  # header + payload

    @property
    def on_disk_size_with_header(self) -> int:
        return HEADER_SIZE + self.on_disk_size_without_header


@dataclass(frozen=True)
class BlockIndexEntry:
    """A root (or leaf) index entry: where a block is, and the row of its first key (HBase may
    store a shorter "fake" key between the previous block's last row and this first row)."""

    offset: int
    on_disk_size: int
    first_key: bytes


def encode_block(magic: bytes, payload: bytes, prev_block_offset: int = -1) -> bytes:
    """A block: header, payload, and its (zero, type NULL) checksum chunks."""
    data_size = HEADER_SIZE + len(payload)
    checksums = -(-data_size // BYTES_PER_CHECKSUM) * CHECKSUM_SIZE
    header = _HEADER.pack(
        magic,
        len(payload) + checksums,
        len(payload),
        prev_block_offset,
        CHECKSUM_TYPE_NULL,
        BYTES_PER_CHECKSUM,
        data_size,
    )
    return header + payload + bytes(checksums)


def read_block_header(data: bytes, offset: int, source: str = "HFile") -> BlockHeader:
    """The header of the block at `offset`, checked to fit in `data`."""
    corrupt = _corrupter(source, data)
    if offset < 0 or offset + HEADER_SIZE > len(data):
        raise corrupt(f"a block header at offset {offset} lies outside the file")
    header = BlockHeader(*_HEADER.unpack_from(data, offset))
    sizes = (header.on_disk_size_without_header, header.uncompressed_size_without_header)
    if min(sizes) < 0 or header.on_disk_data_size_with_header < HEADER_SIZE:
        raise corrupt(f"the block at offset {offset} has negative sizes")
    if offset + header.on_disk_size_with_header > len(data):
        raise corrupt(f"the block at offset {offset} runs past the end of the file (truncated?)")
    return header


def encode_cell(key: bytes, value: bytes) -> bytes:
    """One KeyValue of a data block, memstore timestamp byte included."""
    cell_key = encode_key(key)
    return _KV_LENGTHS.pack(len(cell_key), len(value)) + cell_key + value + b"\0"


def encode_key(row: bytes) -> bytes:
    """HBase's KeyValue key of a row with no family or qualifier, latest timestamp, Put."""
    return _INT16.pack(len(row)) + row + _KEY_SUFFIX


def row_of(cell_key: bytes) -> bytes:
    """The row (the user's key) of a KeyValue key: the bytes its leading int16 counts."""
    (length,) = _INT16.unpack_from(cell_key)
    return cell_key[2 : 2 + length]


# ---- writing


class HFileWriter:
    """Writes an HFile to `sink` (anything with `write(bytes)`; the caller closes it).

    Keys go in strictly increasing byte order, each a row of at most 32767 bytes. `close`
    writes the index, the file info and the trailer.
    """

    def __init__(
        self,
        sink: _Sink,
        block_size: int = DEFAULT_BLOCK_SIZE,
        comparator: str = DEFAULT_COMPARATOR,
        created_ms: int | None = None,
    ) -> None:
        self._sink = sink
        self._block_size = block_size
        self._comparator = comparator
        self._created_ms = int(time.time() * 1000) if created_ms is None else created_ms
        self._offset = 0
        self._cells: list[bytes] = []
        self._cells_size = 0
        self._first_key = b""
        self._last_key: bytes | None = None
        self._index: list[BlockIndexEntry] = []
        self._file_info: dict[bytes, bytes] = {}
        self._entry_count = 0
        self._key_bytes = 0
        self._value_bytes = 0
        self._uncompressed_bytes = 0
        self._closed = False

    def append(self, key: bytes, value: bytes) -> None:
        self._check_open()
        if len(key) > MAX_ROW_LENGTH:
            raise InternalError(
                f"HFile key of {len(key)} bytes is longer than the {MAX_ROW_LENGTH} HBase allows"
            )
        if self._last_key is not None and key <= self._last_key:
            raise InternalError(
                f"HFile keys must be appended in strictly increasing byte order: {key!r} came "
                f"after {self._last_key!r}; sort the entries (and drop duplicates) first"
            )
        if not self._cells:
            self._first_key = key
        cell = encode_cell(key, value)
        self._cells.append(cell)
        self._cells_size += len(cell)
        self._last_key = key
        self._entry_count += 1
        self._key_bytes += len(key) + len(_KEY_SUFFIX) + 2
        self._value_bytes += len(value)
        if self._cells_size >= self._block_size:
            self._finish_data_block()

    def add_file_info(self, key: bytes, value: bytes) -> None:
        """An application entry of the file info (Hudi's INDEX_INFO, say)."""
        self._check_open()
        if key.startswith(RESERVED_PREFIX) or key in (KEY_VALUE_VERSION, MAX_MEMSTORE_TS_KEY):
            raise InternalError(f"HFile file info key {key!r} is reserved for the writer itself")
        self._file_info[key] = value

    def close(self) -> None:
        """Writes what remains; a second call does nothing."""
        if self._closed:
            return
        self._finish_data_block()
        root_index = self._write(MAGIC_ROOT_INDEX, _root_index_payload(self._index))
        self._write(MAGIC_ROOT_INDEX, b"", prev_block_offset=root_index, counted=True)
        info = encode_file_info(self._finished_file_info())
        file_info_offset = self._write(MAGIC_FILE_INFO, info, counted=True)
        trailer = HFileTrailer(
            file_info_offset=file_info_offset,
            load_on_open_data_offset=root_index,
            uncompressed_data_index_size=len(_root_index_payload(self._index)),
            total_uncompressed_bytes=self._uncompressed_bytes + TRAILER_SIZE,
            data_index_count=len(self._index),
            meta_index_count=0,
            entry_count=self._entry_count,
            num_data_index_levels=1,
            first_data_block_offset=self._index[0].offset if self._index else -1,
            last_data_block_offset=self._index[-1].offset if self._index else -1,
            comparator_class_name=self._comparator,
            compression_codec=COMPRESSION_NONE,
        )
        self._sink.write(encode_trailer(trailer))
        self._closed = True

    def _finished_file_info(self) -> dict[bytes, bytes]:
        count = self._entry_count
        info = dict(self._file_info)
        if self._last_key is not None:
            info[LAST_KEY] = encode_key(self._last_key)
        info[AVG_KEY_LEN] = _INT32.pack(self._key_bytes // count if count else 0)
        info[AVG_VALUE_LEN] = _INT32.pack(self._value_bytes // count if count else 0)
        info[CREATE_TIME_TS] = _INT64.pack(self._created_ms)
        info[KEY_VALUE_VERSION] = _INT32.pack(KEY_VALUE_VERSION_WITH_MEMSTORE_TS)
        info[MAX_MEMSTORE_TS_KEY] = _INT64.pack(0)
        return info

    def _finish_data_block(self) -> None:
        if not self._cells:
            return
        prev = self._index[-1].offset if self._index else -1
        offset = self._write(
            MAGIC_DATA, b"".join(self._cells), prev_block_offset=prev, counted=True
        )
        self._index.append(BlockIndexEntry(offset, self._offset - offset, self._first_key))
        self._cells = []
        self._cells_size = 0

    def _write(
        self, magic: bytes, payload: bytes, prev_block_offset: int = -1, counted: bool = False
    ) -> int:
        """Writes a block; returns its offset. `counted` blocks add to the trailer's
        total_uncompressed_bytes, as HBase counts them (data, meta index, file info)."""
        block = encode_block(magic, payload, prev_block_offset)
        offset = self._offset
        self._sink.write(block)
        self._offset += len(block)
        if counted:
            self._uncompressed_bytes += HEADER_SIZE + len(payload)
        return offset

    def _check_open(self) -> None:
        if self._closed:
            raise InternalError("HFileWriter is already closed")


def write_hfile(
    entries: Iterable[tuple[bytes, bytes]],
    file_info: Mapping[bytes, bytes] | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    comparator: str = DEFAULT_COMPARATOR,
    created_ms: int | None = None,
) -> bytes:
    """The bytes of an HFile holding `entries` (sorted by key) and `file_info`."""
    out = io.BytesIO()
    writer = HFileWriter(out, block_size, comparator, created_ms)
    for key, value in entries:
        writer.append(key, value)
    for key, value in (file_info or {}).items():
        writer.add_file_info(key, value)
    writer.close()
    return out.getvalue()


def _root_index_payload(index: list[BlockIndexEntry]) -> bytes:
    """Per data block: int64 offset, int32 on-disk size, then its first key (as a whole
    KeyValue key, as HBase writes it) prefixed with its Hadoop-vint length."""
    parts = []
    for entry in index:
        key = encode_key(entry.first_key)
        parts.append(_INDEX_ENTRY.pack(entry.offset, entry.on_disk_size) + _vint(len(key)) + key)
    return b"".join(parts)


def encode_file_info(info: Mapping[bytes, bytes]) -> bytes:
    """The file info block's payload: PBUF, then a length-delimited message of repeated
    (first, second) byte pairs (field 1), sorted by key as HBase keeps them."""
    pairs = b"".join(
        _pb_bytes(1, _pb_bytes(1, key) + _pb_bytes(2, info[key])) for key in sorted(info)
    )
    return PB_MAGIC + _varint(len(pairs)) + pairs


# ---- reading


class HFileReader:
    """Reads an HFile held in memory: its trailer, file info, entries and point lookups."""

    def __init__(self, data: bytes, source: str = "HFile") -> None:
        self._data = bytes(data)
        self._source = source
        self.trailer = decode_trailer(self._data, source)
        codec = self.trailer.compression_codec
        if codec not in (COMPRESSION_NONE, COMPRESSION_GZ):
            raise UnsupportedTableFeatureError(
                f"{source} is compressed with HBase codec #{codec}; only NONE and GZ are read"
            )
        # The load-on-open section: root data index, meta index, file info, back to back.
        root_offset = self.trailer.load_on_open_data_offset
        root = _root_index_entries(self._payload(root_offset, MAGIC_ROOT_INDEX), self.trailer, self)
        self.index = self._data_index(root)
        info_offset = self._after(self._after(root_offset))
        self.file_info = _decode_file_info(self._payload(info_offset, MAGIC_FILE_INFO), self)
        self._tags = MAX_TAGS_LEN in self.file_info
        version = self.file_info.get(KEY_VALUE_VERSION, b"")
        self._memstore_ts = version == _INT32.pack(KEY_VALUE_VERSION_WITH_MEMSTORE_TS)
        self._first_keys = [entry.first_key for entry in self.index]

    def __len__(self) -> int:
        return self.trailer.entry_count

    def entries(self) -> Iterator[tuple[bytes, bytes]]:
        """Every (key, value), in key order."""
        for block in range(len(self.index)):
            yield from self._cells(block)

    def get(self, key: bytes) -> bytes | None:
        """The value of `key`, or None: the index names the one block that can hold it."""
        block = bisect_right(self._first_keys, key) - 1
        if block < 0:
            return None
        for found, value in self._cells(block):
            if found >= key:
                return value if found == key else None
        return None

    def _cells(self, block: int) -> Iterator[tuple[bytes, bytes]]:
        """(row, value) of each KeyValue of a data block."""
        payload = self._payload(self.index[block].offset, MAGIC_DATA)
        pos, end = 0, len(payload)
        while pos < end:
            if pos + _KV_LENGTHS.size > end:
                raise self._bad_cell(block)
            key_length, value_length = _KV_LENGTHS.unpack_from(payload, pos)
            key_start = pos + _KV_LENGTHS.size
            value_start = key_start + key_length
            pos = value_start + value_length
            if key_length < 2 or value_length < 0 or pos > end:
                raise self._bad_cell(block)
            row = row_of(payload[key_start:value_start])
            value = payload[value_start:pos]
            if self._tags:  # int16 tags length, then the tags
                if pos + 2 > end:
                    raise self._bad_cell(block)
                pos += 2 + _INT16.unpack_from(payload, pos)[0]
            if self._memstore_ts:  # a Hadoop vlong
                if pos >= end:
                    raise self._bad_cell(block)
                pos += _vint_size(payload[pos])
            if pos > end:
                raise self._bad_cell(block)
            yield row, value

    def _payload(self, offset: int, magic: bytes) -> bytes:
        """A block's uncompressed payload, checked to carry `magic`."""
        header = read_block_header(self._data, offset, self._source)
        if header.magic != magic:
            found = header.magic
            raise self.corrupt(f"expected a {magic!r} block at offset {offset}, found {found!r}")
        payload = self._data[offset + HEADER_SIZE : offset + header.on_disk_data_size_with_header]
        if self.trailer.compression_codec == COMPRESSION_GZ and payload:
            try:
                payload = zlib.decompress(payload, wbits=47)  # gzip (or zlib) framing
            except zlib.error as exc:
                raise self.corrupt(f"the block at offset {offset} is not gzip ({exc})") from exc
        if len(payload) != header.uncompressed_size_without_header:
            raise self.corrupt(f"the block at offset {offset} is not the size its header says")
        return payload

    def _after(self, offset: int) -> int:
        """Where the block after the one at `offset` starts."""
        return offset + read_block_header(self._data, offset, self._source).on_disk_size_with_header

    def _data_index(self, root: list[BlockIndexEntry]) -> list[BlockIndexEntry]:
        """The data blocks' entries: the root's, or those its intermediate and leaf index
        blocks list when the index has several levels."""
        entries = root
        for _ in range(self.trailer.num_data_index_levels - 1):
            entries = [
                child
                for entry in entries
                for child in _non_root_index_entries(self._index_block(entry.offset), self)
            ]
        return entries

    def _index_block(self, offset: int) -> bytes:
        magic = read_block_header(self._data, offset, self._source).magic
        if magic not in (MAGIC_LEAF_INDEX, MAGIC_INTERMEDIATE_INDEX):
            raise self.corrupt(f"no leaf or intermediate index block at offset {offset}")
        return self._payload(offset, magic)

    def _bad_cell(self, block: int) -> CorruptFileError:
        where = f"data block #{block} (offset {self.index[block].offset})"
        return self.corrupt(f"{where} holds a cell that runs past its end")

    def corrupt(self, problem: str) -> CorruptFileError:
        """The error for this file: which file, what is wrong, what to do."""
        return _corrupter(self._source, self._data)(problem)


def _root_index_entries(
    payload: bytes, trailer: HFileTrailer, reader: HFileReader
) -> list[BlockIndexEntry]:
    """A root index block: per entry int64 offset, int32 on-disk size, then the key with its
    Hadoop-vint length."""
    entries = []
    pos = 0
    try:
        for _ in range(trailer.data_index_count):
            offset, size = _INDEX_ENTRY.unpack_from(payload, pos)
            length, pos = _read_vint(payload, pos + _INDEX_ENTRY.size, reader.corrupt)
            key = payload[pos : pos + length]
            if len(key) != length:
                raise reader.corrupt("a root data index key runs past its block")
            entries.append(BlockIndexEntry(offset, size, row_of(key)))
            pos += length
    except struct.error as exc:
        raise reader.corrupt(f"its root data index is damaged ({exc})") from exc
    return entries


def _non_root_index_entries(payload: bytes, reader: HFileReader) -> list[BlockIndexEntry]:
    """A leaf or intermediate index block: int32 count, count + 1 int32 entry offsets (from
    the end of that list), then per entry int64 offset, int32 size and the key."""
    try:
        (count,) = _INT32.unpack_from(payload)
        offsets = struct.unpack_from(f">{count + 1}i", payload, 4)
        base = 4 * (count + 2)
        entries = []
        for i in range(count):
            start, end = base + offsets[i], base + offsets[i + 1]
            offset, size = _INDEX_ENTRY.unpack_from(payload, start)
            entries.append(BlockIndexEntry(offset, size, row_of(payload[start + 12 : end])))
    except (struct.error, ValueError) as exc:
        raise reader.corrupt(f"a data index block is damaged ({exc})") from exc
    return entries


def _decode_file_info(payload: bytes, reader: HFileReader) -> dict[bytes, bytes]:
    """The file info block's pairs (see encode_file_info)."""
    if not payload.startswith(PB_MAGIC):
        raise reader.corrupt("its file info block does not start with PBUF")
    length, start = _read_varint(payload, len(PB_MAGIC), reader.corrupt)
    info = {}
    for field, pair in _pb_items(payload[start : start + length], reader.corrupt):
        if field == 1 and isinstance(pair, bytes):
            parts = dict(_pb_items(pair, reader.corrupt))
            key, value = parts.get(1, b""), parts.get(2, b"")
            if isinstance(key, bytes) and isinstance(value, bytes):
                info[key] = value
    return info


# ---- small codecs: protobuf varints and fields, Hadoop's vints


def _varint(value: int) -> bytes:
    """Protobuf's unsigned varint (a negative int64 as its two's complement)."""
    value &= _U64 - 1
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _read_varint(buf: bytes, pos: int, corrupt: _Corrupt) -> tuple[int, int]:
    """(value, position after it) of the protobuf varint at `pos`."""
    value = shift = 0
    for i in range(pos, min(pos + 10, len(buf))):
        value |= (buf[i] & 0x7F) << shift
        shift += 7
        if buf[i] < 0x80:
            return value, i + 1
    raise corrupt("a protobuf varint is cut short")


def _pb_uint(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _pb_bytes(number: int, value: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def _pb_items(message: bytes, corrupt: _Corrupt) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) of each varint or length-delimited field of a message."""
    pos = 0
    while pos < len(message):
        tag, pos = _read_varint(message, pos, corrupt)
        value, pos = _read_varint(message, pos, corrupt)
        if tag & 7 == 0:
            yield tag >> 3, value
        elif tag & 7 == 2 and pos + value <= len(message):
            yield tag >> 3, message[pos : pos + value]
            pos += value
        else:
            raise corrupt(f"a protobuf field (wire type {tag & 7}) does not fit its message")


def _vint(value: int) -> bytes:
    """Hadoop's WritableUtils vint of a non-negative value: one byte up to 127, else a byte
    counting the big-endian bytes that follow."""
    if value <= 127:
        return bytes([value])
    size = (value.bit_length() + 7) // 8
    return struct.pack(">b", -112 - size) + value.to_bytes(size, "big")


def _vint_size(first: int) -> int:
    """How many bytes a Hadoop vint whose first (unsigned) byte is `first` takes."""
    signed = first - 256 if first > 127 else first
    if signed >= -112:
        return 1
    return (-119 - signed) if signed < -120 else (-111 - signed)


def _read_vint(buf: bytes, pos: int, corrupt: _Corrupt) -> tuple[int, int]:
    """(value, position after it) of the Hadoop vint at `pos`."""
    first = struct.unpack_from(">b", buf, pos)[0]
    size = _vint_size(buf[pos])
    if size == 1:
        return first, pos + 1
    if pos + size > len(buf):
        raise corrupt("a Hadoop vint runs past its block")
    value = int.from_bytes(buf[pos + 1 : pos + size], "big")
    return (~value if first < -120 else value), pos + size


def _corrupter(source: str, data: bytes) -> _Corrupt:
    def corrupt(problem: str) -> CorruptFileError:
        return CorruptFileError(
            f"{source} ({len(data)} bytes) is not a readable HFile: {problem}; restore it from "
            "a backup, or write it anew"
        )

    return corrupt
