"""Apache Hudi -> us: every merge-on-read table Apache Hudi wrote reads here as hudi-rs reads it."""

from __future__ import annotations

import pytest

from hudi_core import HudiTable
from tests import oracle
from tests.conftest import fixture_zips

MOR_TABLES = [z.stem for z in fixture_zips("mor")]
READ_OPTIMIZED = {"hoodie.read.use.read_optimized.mode": "true"}


@pytest.mark.parametrize("name", MOR_TABLES)
def test_snapshot_and_read_optimized_match_hudi_rs(hudi_fixture, name):
    path = str(hudi_fixture("mor", name))
    table = HudiTable.open(path)
    oracle.assert_same_table(table.read(), oracle.snapshot(path), name)
    oracle.assert_same_table(
        table.read(query_type="read_optimized"),
        oracle.snapshot(path, hudi_options=READ_OPTIMIZED),
        f"{name} read-optimized",
    )


@pytest.mark.parametrize("name", MOR_TABLES)
def test_time_travel_and_incremental_match_hudi_rs(hudi_fixture, name):
    path = str(hudi_fixture("mor", name))
    table = HudiTable.open(path)
    commits = oracle.completed_commit_times(path)
    for instant in commits:
        oracle.assert_same_table(
            table.read(as_of=instant), oracle.snapshot(path, as_of=instant), f"{name}@{instant}"
        )
    starts = ["00000000000000000", *commits]
    for begin, end in zip(starts, commits, strict=False):
        ours = table.read(query_type="incremental", begin=begin, end=end)
        oracle.assert_same_table(
            ours, oracle.incremental(path, begin, end), f"{name} ({begin},{end}]"
        )


def test_the_fixtures_hold_both_kinds_of_log_blocks(hudi_fixture):
    from hudi_core.io.log_format import BlockType, read_log_blocks
    from hudi_core.storage import Storage

    kinds = set()
    for name in MOR_TABLES:
        storage = Storage(str(hudi_fixture("mor", name)))
        for entry in storage.list_files("", recursive=True):
            if ".log." in entry.name and not entry.path.startswith(".hoodie"):
                kinds |= {b.block_type for b in read_log_blocks(storage, entry.path)}
    assert {BlockType.AVRO_DATA, BlockType.PARQUET_DATA} <= kinds
