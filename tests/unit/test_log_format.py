"""The Hudi log format: block framing, Apache Hudi's own log files, damaged logs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_core import HudiTable
from hudi_core.io.log_blocks import (
    avro_data_block,
    data_block_records,
    delete_block,
    deleted_keys,
    rollback_block,
)
from hudi_core.io.log_format import BlockType, HeaderKey, LogBlock, read_log_blocks
from hudi_core.schema.to_avro import arrow_to_avro_json
from hudi_core.storage import Storage
from tests import oracle
from tests.conftest import fixture_zips

ROWS = pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["a", None]})
SCHEMA = arrow_to_avro_json(ROWS.schema, "t", False)


def _blocks() -> list[LogBlock]:
    keys, partitions = pa.array(["1"]), pa.array([""])
    return [
        avro_data_block(ROWS, SCHEMA, "20240101000000001"),
        delete_block(keys, partitions, None, "20240101000000001", SCHEMA),
        rollback_block("20240101000000009", "20240101000000005"),
    ]


def _read(tmp_path: Path, data: bytes) -> list[LogBlock]:
    (tmp_path / ".f_1.log.1_0-0-0").write_bytes(data)
    return list(read_log_blocks(Storage(str(tmp_path)), ".f_1.log.1_0-0-0"))


def test_blocks_round_trip(tmp_path):
    blocks = _read(tmp_path, b"".join(b.to_bytes() for b in _blocks()))
    assert [b.block_type for b in blocks] == [
        BlockType.AVRO_DATA,
        BlockType.DELETE,
        BlockType.COMMAND,
    ]
    assert data_block_records(blocks[0]).to_pylist() == ROWS.to_pylist()
    assert deleted_keys(blocks[1]).keys.to_pylist() == ["1"]
    assert deleted_keys(blocks[1]).natural.tolist() == [True]
    assert blocks[2].is_rollback
    assert blocks[2].header[HeaderKey.TARGET_INSTANT_TIME] == "20240101000000005"


def test_block_lengths_follow_apache_hudi():
    data = _blocks()[0].to_bytes()
    size = int.from_bytes(data[6:14], "big")
    assert size == len(data) - 14  # counted after the size field, trailing long included
    assert int.from_bytes(data[-8:], "big") == len(data) - 8  # magic to footer end


@pytest.mark.parametrize("zip_path", fixture_zips("mor"), ids=lambda p: p.stem)
def test_apache_hudi_log_files_read_and_rewrite_byte_for_byte(hudi_fixture, zip_path):
    table = hudi_fixture("mor", zip_path.stem)
    storage = Storage(str(table))
    logs = [
        e
        for e in storage.list_files("", recursive=True)
        if ".log." in e.name and not e.path.startswith(".hoodie")
    ]
    for entry in logs:
        blocks = list(read_log_blocks(storage, entry.path))
        assert all(b.block_type is not BlockType.CORRUPT for b in blocks)
        assert b"".join(b.to_bytes() for b in blocks) == (table / entry.path).read_bytes()
        for block in blocks:
            if block.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA):
                assert data_block_records(block).num_rows > 0


def test_a_damaged_block_is_skipped_and_the_next_one_still_read(tmp_path):
    first, second, third = (b.to_bytes() for b in _blocks())
    damaged = bytearray(second)
    damaged[30:40] = b"\xff" * 10  # the header of the middle block, length fields intact
    damaged[-8:] = (12345).to_bytes(8, "big")  # and its trailing length wrong
    blocks = _read(tmp_path, first + bytes(damaged) + third)
    assert [b.block_type for b in blocks] == [
        BlockType.AVRO_DATA,
        BlockType.CORRUPT,
        BlockType.COMMAND,
    ]


def test_garbage_between_blocks_is_one_corrupt_stretch(tmp_path):
    first, second, third = (b.to_bytes() for b in _blocks())
    blocks = _read(tmp_path, first + b"#HUDI#garbage-not-a-block" + second + third)
    kinds = [b.block_type for b in blocks]
    assert kinds == [BlockType.AVRO_DATA, BlockType.CORRUPT, BlockType.DELETE, BlockType.COMMAND]


def _mor_table(path: Path, with_delete: bool) -> HudiTable:
    """A base file of keys 1-3, then one commit updating 1, adding 4 and (maybe) deleting 2."""
    table = HudiTable.create(
        str(path),
        name="t",
        table_type="MERGE_ON_READ",
        record_key_fields=["id"],
        precombine_field="ts",
        options={"hoodie.parquet.small.file.limit": "0"},
    )
    table.write(pa.table({"id": [1, 2, 3], "ts": [1, 1, 1], "v": ["a", "b", "c"]}), "bulk_insert")
    batch = pa.table(
        {
            "id": [1, 2, 4],
            "ts": [2, 2, 2],
            "v": ["A", "B", "D"],
            "_hoodie_is_deleted": [False, True, False],
        }
    )
    table.write(batch if with_delete else batch.filter(pa.array([True, False, True])), "upsert")
    return table


def test_a_log_file_cut_at_any_byte_of_its_last_block_still_reads(tmp_path, caplog):
    """One commit's log file holds a data block then a delete block; cut anywhere inside the
    delete block, the file reads as if the delete had never been written."""
    table = _mor_table(tmp_path / "t", with_delete=True)
    expected = _mor_table(tmp_path / "expected", with_delete=False).read(columns=["id", "ts", "v"])
    (log,) = [p for p in Path(table.storage.base_path).glob(".*.log.*")]
    blocks = list(read_log_blocks(table.storage, log.name))
    assert [b.block_type for b in blocks] == [BlockType.AVRO_DATA, BlockType.DELETE]
    full = log.read_bytes()
    last_start = len(blocks[0].to_bytes())
    assert table.read().num_rows == 3  # the delete block counts while whole
    backup = tmp_path / "log.bak"
    shutil.copy(log, backup)
    log.write_bytes(full[:-3])
    with caplog.at_level("WARNING", logger="hudi_core.read.log_scanner"):
        table.read()
    assert "skipped 1 corrupt or truncated log block" in caplog.text
    for cut in range(last_start + 1, len(full)):
        log.write_bytes(full[:cut])
        rows = table.read(columns=["id", "ts", "v"])
        assert oracle.sorted_rows(rows) == oracle.sorted_rows(expected), f"cut at byte {cut}"
        if cut % 97 == 0:  # Apache Hudi's reader agrees
            theirs = oracle.snapshot(table.storage.base_path).select(["id", "ts", "v"])
            assert oracle.sorted_rows(theirs) == oracle.sorted_rows(expected), f"hudi-rs at {cut}"
    shutil.copy(backup, log)
    assert table.read().num_rows == 3
