"""HFile writer and reader: round trips, lookups, damage, and the on-disk layout Apache Hudi's
and HBase's readers expect."""

from __future__ import annotations

import io
import struct
import zlib

import pytest

from hudi_core.errors import CorruptFileError, InternalError, UnsupportedTableFeatureError
from hudi_core.io.hfile import (
    AVG_KEY_LEN,
    AVG_VALUE_LEN,
    CREATE_TIME_TS,
    DEFAULT_COMPARATOR,
    KEY_VALUE_VERSION,
    LAST_KEY,
    MAX_MEMSTORE_TS_KEY,
    HFileReader,
    HFileWriter,
    decode_trailer,
    encode_file_info,
    encode_trailer,
    read_block_header,
    write_hfile,
)


def _entries(n: int) -> list[tuple[bytes, bytes]]:
    return [(f"key-{i:06d}".encode(), f"value-{i}".encode() * (1 + i % 7)) for i in range(n)]


def _blocks(data: bytes) -> list[tuple[int, bytes]]:
    """(offset, magic) of every block, walked front to back up to the trailer."""
    blocks, offset = [], 0
    while offset < len(data) - 4096:
        header = read_block_header(data, offset)
        blocks.append((offset, header.magic))
        offset += header.on_disk_size_with_header
    assert offset == len(data) - 4096
    return blocks


# ---- round trips


def test_many_entries_round_trip_over_several_blocks():
    entries = _entries(2000)
    data = write_hfile(entries, block_size=1024)
    reader = HFileReader(data)
    assert list(reader.entries()) == entries
    assert len(reader) == reader.trailer.entry_count == 2000
    assert len(reader.index) > 20
    assert reader.trailer.data_index_count == len(reader.index)
    assert reader.index[0].offset == reader.trailer.first_data_block_offset == 0
    assert reader.index[-1].offset == reader.trailer.last_data_block_offset


def test_get_finds_every_key_and_misses_the_rest():
    entries = _entries(500)
    reader = HFileReader(write_hfile(entries, block_size=512))
    for key, value in entries:
        assert reader.get(key) == value
    first_keys = [entry.first_key for entry in reader.index]
    assert first_keys == [k for k, _ in entries if k in set(first_keys)]  # blocks' first keys
    for missing in (b"", b"a", b"key-", b"key-000001x", b"key-000499\x00", b"zzz"):
        assert reader.get(missing) is None


def test_writer_streams_to_any_sink_and_takes_binary_keys():
    sink = io.BytesIO()
    writer = HFileWriter(sink, block_size=64)
    keys = [b"\x00", b"\x00\x01", b"\x7f", b"\x80", b"\xff\xff"]  # unsigned byte order
    for key in keys:
        writer.append(key, key * 3)
    writer.close()
    writer.close()  # a second close writes nothing more
    reader = HFileReader(sink.getvalue())
    assert list(reader.entries()) == [(k, k * 3) for k in keys]
    assert reader.get(b"\x80") == b"\x80" * 3 and reader.get(b"\x81") is None


def test_file_info_holds_the_callers_entries_and_hbases_own():
    entries = _entries(10)
    data = write_hfile(entries, {b"INDEX_INFO": b"\x01\x02", b"zz": b""}, created_ms=1234)
    info = HFileReader(data).file_info
    assert info[b"INDEX_INFO"] == b"\x01\x02" and info[b"zz"] == b""
    # HFileWriterImpl (and HBase's) finish the file info with these; HFileInfo names them.
    assert info[LAST_KEY] == b"\x00\x0akey-000009\x00" + b"\x7f" + b"\xff" * 7 + b"\x04"
    assert info[CREATE_TIME_TS] == struct.pack(">q", 1234)
    assert info[KEY_VALUE_VERSION] == struct.pack(">i", 1)
    assert info[MAX_MEMSTORE_TS_KEY] == struct.pack(">q", 0)
    assert info[AVG_KEY_LEN] == struct.pack(">i", 10 + 12)  # the whole KeyValue key
    avg_value = sum(len(v) for _, v in entries) // len(entries)
    assert info[AVG_VALUE_LEN] == struct.pack(">i", avg_value)
    assert b"hfile.MAX_TAGS_LEN" not in info  # no tags in the cells


def test_an_empty_file_reads_as_empty():
    data = write_hfile([])
    reader = HFileReader(data)
    assert list(reader.entries()) == [] and reader.get(b"k") is None
    trailer = reader.trailer
    assert (trailer.entry_count, trailer.data_index_count) == (0, 0)
    # HBase's writer leaves both at -1 (UNSET) when there is no data block
    assert (trailer.first_data_block_offset, trailer.last_data_block_offset) == (-1, -1)
    assert LAST_KEY not in reader.file_info
    assert [magic for _, magic in _blocks(data)] == [b"IDXROOT2", b"IDXROOT2", b"FILEINF2"]


# ---- misuse


def test_keys_out_of_order_or_repeated_are_refused():
    writer = HFileWriter(io.BytesIO())
    writer.append(b"b", b"1")
    with pytest.raises(InternalError, match="strictly increasing byte order"):
        writer.append(b"a", b"2")
    with pytest.raises(InternalError, match="strictly increasing"):
        writer.append(b"b", b"3")
    with pytest.raises(InternalError, match="strictly increasing"):
        write_hfile([(b"x", b""), (b"w", b"")])


def test_oversized_keys_reserved_file_info_and_use_after_close_are_refused():
    writer = HFileWriter(io.BytesIO())
    with pytest.raises(InternalError, match="32767"):
        writer.append(b"k" * 32768, b"")
    with pytest.raises(InternalError, match="reserved"):
        writer.add_file_info(b"hfile.LASTKEY", b"")
    with pytest.raises(InternalError, match="reserved"):
        writer.add_file_info(b"KEY_VALUE_VERSION", b"")
    writer.close()
    with pytest.raises(InternalError, match="closed"):
        writer.append(b"k", b"")


# ---- damage


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda d: b"", id="empty"),
        pytest.param(lambda d: d[:100], id="shorter-than-trailer"),
        pytest.param(lambda d: d[:-1], id="last-byte-cut"),
        pytest.param(lambda d: d[: len(d) // 2], id="cut-in-half"),
        pytest.param(lambda d: d[4096:], id="front-cut"),
        pytest.param(lambda d: b"x" * 5000, id="not-an-hfile"),
        pytest.param(lambda d: d[:-4096] + b'TRABLK"%' + d[-4088:], id="trailer-magic"),
        pytest.param(lambda d: b"DATABLK-" + d[8:], id="data-block-magic"),
        pytest.param(lambda d: d[:40] + b"\xff\xff" + d[42:], id="cell-lengths"),
    ],
)
def test_damaged_files_raise_corrupt_file_error(damage):
    data = damage(write_hfile(_entries(300), block_size=1024))
    with pytest.raises(CorruptFileError, match="is not a readable HFile"):
        reader = HFileReader(data, source="x.hfile")
        list(reader.entries())


def test_a_damaged_block_is_reported_when_read():
    data = bytearray(write_hfile(_entries(300), block_size=1024))
    data[0:8] = b"METABLKc"  # the first data block
    reader = HFileReader(bytes(data), source="x.hfile")  # the load-on-open section is intact
    with pytest.raises(CorruptFileError, match=r"x.hfile .* expected a b'DATABLK\*' block"):
        reader.get(b"key-000000")


def test_a_version_2_file_is_refused_as_unsupported():
    data = bytearray(write_hfile(_entries(3)))
    data[-4:] = b"\x03\x00\x00\x02"
    with pytest.raises(UnsupportedTableFeatureError, match="format version 2"):
        HFileReader(bytes(data))


# ---- the layout, pinned against Apache Hudi's (and HBase's) sources


def test_the_trailer_is_the_last_4096_bytes_with_the_version_at_its_end():
    data = write_hfile(_entries(50), block_size=256)
    trailer = data[-4096:]
    # HFileBlockType: the trailer magic; HFileTrailer: 4096 bytes for version 3.
    assert trailer.startswith(b'TRABLK"$')
    # HFileReaderImpl reads the major version from the last 3 bytes, the minor from the one
    # before; HBase's FixedFileTrailer writes minor 3 (the highest its reader knows), major 3.
    assert trailer[-4:] == b"\x03\x00\x00\x03"
    parsed = decode_trailer(data)
    assert encode_trailer(parsed) == trailer
    # HFileTrailer / TrailerProto: the offsets and counts of what precedes it.
    blocks = _blocks(data)
    magics = [magic for _, magic in blocks]
    assert magics[-3:] == [b"IDXROOT2", b"IDXROOT2", b"FILEINF2"]
    assert set(magics[:-3]) == {b"DATABLK*"}
    assert parsed.load_on_open_data_offset == blocks[-3][0]
    assert parsed.file_info_offset == blocks[-1][0]
    assert parsed.data_index_count == len(blocks) - 3
    assert parsed.meta_index_count == 0 and parsed.num_data_index_levels == 1
    assert parsed.entry_count == 50
    assert parsed.compression_codec == 2  # HBase's Compression.Algorithm ordinal of NONE
    assert parsed.comparator_class_name == DEFAULT_COMPARATOR  # what HFileWriterImpl writes
    # The protobuf is length-delimited right after the magic, field 1 (file_info_offset) first.
    message_length = trailer[8]
    assert trailer[9] == 0x08 and trailer[9 + message_length :].strip(b"\0") == b"\x03\x00\x00\x03"


def test_one_entry_is_laid_out_byte_for_byte():
    data = write_hfile([(b"k", b"v")], created_ms=0)
    # HFileBlock: 8-byte magic, int32 on-disk size without header (payload + checksums),
    # int32 uncompressed size without header, int64 previous block offset (-1: none), the
    # checksum type byte (0, NULL, as Hudi's writer), int32 bytes per checksum (16384) and
    # int32 on-disk data size with the 33-byte header.
    header = bytes.fromhex("0000001b00000017ffffffffffffffff000000400000000038")
    # HFileDataBlock: int32 key length, int32 value length, the KeyValue key (int16 row length,
    # row, int8 family length 0, int64 timestamp Long.MAX_VALUE, type Put 4), the value and
    # the memstore timestamp byte 0; Key reads the row behind its int16 length.
    cell = bytes.fromhex("0000000d0000000100016b007fffffffffffffff047600")
    # HFileBlock: one 4-byte checksum per 16 KiB of header and payload, zero for type NULL.
    assert data[:60] == b"DATABLK*" + header + cell + b"\0" * 4
    # HFileRootIndexBlock: int64 block offset, int32 on-disk size (60), the first key's length
    # as a Hadoop vint (IOUtils.readVarLong decodes it) and the whole KeyValue key.
    root = data[60:]
    assert root[:8] == b"IDXROOT2"
    entry = bytes.fromhex("00000000000000000000003c0d") + cell[8:21]
    assert root[33 : 33 + len(entry)] == entry
    # HFileFileInfoBlock: the file info payload starts with PBUF and a delimited message.
    info_offset = decode_trailer(data).file_info_offset
    info_payload = data[info_offset + 33 :]
    assert data[info_offset : info_offset + 8] == b"FILEINF2"
    assert info_payload.startswith(b"PBUF")
    assert info_payload.startswith(encode_file_info(HFileReader(data).file_info))


def test_root_index_entries_point_at_their_blocks():
    entries = _entries(400)
    data = write_hfile(entries, block_size=700)
    reader = HFileReader(data)
    data_blocks = [(offset, magic) for offset, magic in _blocks(data) if magic == b"DATABLK*"]
    assert [entry.offset for entry in reader.index] == [offset for offset, _ in data_blocks]
    for entry in reader.index:
        header = read_block_header(data, entry.offset)
        assert entry.on_disk_size == header.on_disk_size_with_header
        # the block's first cell holds the key the index names
        (row_length,) = struct.unpack_from(">H", data, entry.offset + 33 + 8)
        first = data[entry.offset + 43 : entry.offset + 43 + row_length]
        assert first == entry.first_key
    # HBase closes a data block once it reaches the block size
    headers = [read_block_header(data, entry.offset) for entry in reader.index]
    assert all(header.uncompressed_size_without_header >= 700 for header in headers[:-1])


def test_long_keys_take_a_multi_byte_hadoop_vint_in_the_index_and_checksums_per_16_kib():
    key, value = b"k" * 200, b"v" * 20000
    data = write_hfile([(key, value)])
    header = read_block_header(data, 0)
    # header + payload is 33 + 20000 + 4+4+212+1 = 20254 bytes: two 16 KiB checksum chunks
    assert header.on_disk_data_size_with_header == 20254
    assert header.on_disk_size_without_header == 20254 - 33 + 8
    assert data[20254 : 20254 + 8] == b"\0" * 8
    # Hadoop's vint of 212: 0x8f (-113, one byte follows), then 0xd4; not protobuf's varint
    root_start = header.on_disk_size_with_header
    assert data[root_start + 33 + 12 : root_start + 33 + 14] == b"\x8f\xd4"
    assert HFileReader(data).get(key) == value


# ---- files other writers produce: GZ blocks (HBase's metadata table files), multi-level index


def _block(magic: bytes, payload: bytes, gzip: bool) -> bytes:
    """A block as HBase writes it: its payload (compressed when `gzip`), CRC32C type byte,
    checksum chunks (not verified by the reader, so left zero here)."""
    stored = zlib.compress(payload, wbits=31) if gzip else payload
    data_size = 33 + len(stored)
    checksums = -(-data_size // 16384) * 4
    header = struct.pack(
        ">8siiqbii", magic, len(stored) + checksums, len(payload), -1, 2, 16384, data_size
    )
    return header + stored + b"\0" * checksums


def _cell(key: bytes, value: bytes) -> bytes:
    kv_key = struct.pack(">H", len(key)) + key + b"\x00" + b"\x7f" + b"\xff" * 7 + b"\x04"
    return struct.pack(">ii", len(kv_key), len(value)) + kv_key + value + b"\x00"


def _hand_built(blocks_of_entries: list[list[tuple[bytes, bytes]]], gzip: bool) -> bytes:
    """An HFile with one data block per list, and a two-level index: a leaf index block
    listing the data blocks, under a root with one entry."""
    out, index = b"", []
    for cells in blocks_of_entries:
        block = _block(b"DATABLK*", b"".join(_cell(k, v) for k, v in cells), gzip)
        first = cells[0][0]
        index.append((len(out), len(block), struct.pack(">H", len(first)) + first))
        out += block
    # a leaf block: count, count + 1 relative offsets, then offset, size, key per entry
    entries = [struct.pack(">qi", offset, size) + key for offset, size, key in index]
    relative = [sum(len(e) for e in entries[:i]) for i in range(len(entries) + 1)]
    leaf_payload = struct.pack(f">i{len(relative)}i", len(entries), *relative) + b"".join(entries)
    leaf_offset, leaf = len(out), _block(b"IDXLEAF2", leaf_payload, gzip)
    out += leaf
    root_key = index[0][2]
    root_payload = struct.pack(">qi", leaf_offset, len(leaf)) + bytes([len(root_key)]) + root_key
    root_offset = len(out)
    out += _block(b"IDXROOT2", root_payload, gzip) + _block(b"IDXROOT2", b"", gzip)
    info = {KEY_VALUE_VERSION: struct.pack(">i", 1), MAX_MEMSTORE_TS_KEY: struct.pack(">q", 0)}
    info_offset = len(out)
    out += _block(b"FILEINF2", encode_file_info(info), gzip)
    trailer = decode_trailer(write_hfile([]))
    fields = dict(
        trailer.__dict__,
        file_info_offset=info_offset,
        load_on_open_data_offset=root_offset,
        data_index_count=1,
        num_data_index_levels=2,
        entry_count=sum(len(b) for b in blocks_of_entries),
        compression_codec=1 if gzip else 2,
    )
    return out + encode_trailer(type(trailer)(**fields))


@pytest.mark.parametrize("gzip", [True, False], ids=["gz", "none"])
def test_gzip_blocks_and_a_two_level_index_are_read(gzip):
    blocks = [_entries(10)[0:4], _entries(10)[4:7], _entries(10)[7:10]]
    reader = HFileReader(_hand_built(blocks, gzip))
    assert len(reader.index) == 3
    assert list(reader.entries()) == _entries(10)
    assert reader.get(b"key-000005") == _entries(10)[5][1]
    assert reader.get(b"key-0000055") is None
