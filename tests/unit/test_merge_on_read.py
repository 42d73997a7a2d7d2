"""Merge-on-read behaviour: log files, deltacommit stats, changelog, skip-merge, spill, rollback."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hudi_core import HudiTable
from hudi_core.io.log_format import BlockType, read_log_blocks
from hudi_core.read import slice_merger
from hudi_core.timeline import avro_metadata
from tests import datagen, oracle
from tests.killed_writer import kill_during_write


def _table(path: Path, **options) -> HudiTable:
    return HudiTable.create(
        str(path),
        name="t",
        table_type="MERGE_ON_READ",
        record_key_fields=["uuid"],
        partition_fields=["city"],
        precombine_field="ts",
        options={"hoodie.parquet.small.file.limit": "0", **options},
    )


def _deltacommit(table: HudiTable, instant: str) -> dict:
    path = Path(table.storage.base_path) / ".hoodie" / f"{instant}.deltacommit"
    return json.loads(path.read_text())


def test_updates_append_a_log_file_per_commit_with_hudi_write_stats(tmp_path):
    table = _table(tmp_path / "t")
    first = table.write(datagen.trips(list(range(8)), seed=1, ts=1), "bulk_insert")
    second = table.write(datagen.trips([0, 1], seed=2, ts=2))
    third = table.write(datagen.trips([0], seed=3, ts=3))
    stats = [s for p in _deltacommit(table, third)["partitionToWriteStats"].values() for s in p]
    (stat,) = stats
    assert stat["prevCommit"] == first and stat["logVersion"] == 2
    assert stat["numUpdateWrites"] == stat["numWrites"] == 1
    assert stat["baseFile"].endswith(f"_{first}.parquet")
    assert [Path(f).name for f in stat["logFiles"]][-1] == Path(stat["path"]).name
    assert Path(stat["path"]).name.startswith(f".{stat['fileId']}_{first}.log.2_")
    log_names = sorted(p.name for p in Path(table.storage.base_path).rglob(".*.log.*"))
    assert len(log_names) == 3  # two for key 0's group, one for key 1's
    blocks = list(read_log_blocks(table.storage, stat["path"]))
    assert [b.block_type for b in blocks] == [BlockType.AVRO_DATA]
    assert blocks[0].instant_time == third
    assert table.read().num_rows == 8
    assert second


def test_inserts_top_up_log_free_small_files_with_a_new_base_file(tmp_path):
    table = _table(tmp_path / "t", **{"hoodie.parquet.small.file.limit": "104857600"})
    first = table.write(datagen.trips(list(range(0, 8, 4)), seed=1, ts=1), "bulk_insert")
    second = table.write(datagen.trips([0, 100], seed=2, ts=2))  # an update and an insert
    stats = [s for p in _deltacommit(table, second)["partitionToWriteStats"].values() for s in p]
    merged = [s for s in stats if s["path"].endswith(".parquet") and s["prevCommit"] == first]
    assert merged and not any(".log." in s["path"] for s in stats)
    oracle.assert_same_table(table.read(), oracle.snapshot(table.storage.base_path))


def test_skip_merge_returns_base_rows_and_log_records_as_written(tmp_path):
    table = _table(tmp_path / "t")
    table.write(datagen.trips(list(range(6)), seed=1, ts=1), "bulk_insert")
    table.write(datagen.trips([0, 1], seed=2, ts=2))
    skipped = table.read(options={"hoodie.datasource.merge.type": "skip_merge"})
    assert skipped.num_rows == 8
    assert sorted(skipped.filter(pc.equal(skipped["uuid"], "key-000000"))["ts"].to_pylist()) == [
        1,
        2,
    ]
    assert table.read().num_rows == 6


def test_changelog_mode_keeps_every_change_for_incremental_reads(tmp_path):
    table = _table(tmp_path / "t", **{"hoodie.allow.operation.metadata.field": "true"})
    first = table.write(datagen.trips([1, 2, 3], seed=1, ts=1), "bulk_insert")
    table.write(datagen.trips([1], seed=2, ts=2))
    table.write(datagen.trips([1], seed=3, ts=3))
    last = table.write(pa.table({"uuid": ["key-000002"], "city": ["sao_paulo"]}), "delete")
    changes = table.read(
        query_type="incremental",
        begin=first,
        end=last,
        options={"hoodie.datasource.read.changelog.enabled": "true"},
    )
    ops = sorted(
        zip(
            changes["uuid"].to_pylist(),
            changes["_hoodie_operation"].to_pylist(),
            changes["ts"].to_pylist(),
            strict=True,
        ),
        key=str,
    )
    assert ops == [("key-000001", "U", 2), ("key-000001", "U", 3), ("key-000002", "D", None)]
    merged = table.read(query_type="incremental", begin=first, end=last)
    assert "_hoodie_operation" not in merged.column_names
    assert merged["uuid"].to_pylist() == ["key-000001"]
    everything = table.read(
        query_type="incremental",
        begin="0",
        options={"hoodie.datasource.read.changelog.enabled": "true"},
    )
    assert set(
        everything.filter(pc.equal(everything["_hoodie_operation"], "I"))["uuid"].to_pylist()
    ) == {"key-000001", "key-000002", "key-000003"}
    oracle.assert_same_table(table.read(), oracle.snapshot(table.storage.base_path))


def test_a_merge_over_budget_spills_to_disk_and_gives_the_same_rows(tmp_path, monkeypatch):
    table = _table(tmp_path / "t")
    table.write(datagen.trips(list(range(400)), seed=1, ts=1), "bulk_insert")
    for seed in range(2, 6):
        table.write(datagen.trips(list(range(seed, 400, seed)), seed=seed, ts=seed))
    table.write(
        pa.table({"uuid": ["key-000010", "key-000011"], "city": ["sao_paulo", "chennai"]}), "delete"
    )
    in_memory = table.read()
    spills = []
    original = slice_merger._Spill.__init__

    def counting(self, folder, buckets):
        spills.append((Path(folder).parent, buckets))
        original(self, folder, buckets)

    monkeypatch.setattr(slice_merger._Spill, "__init__", counting)
    spill_root = tmp_path / "spill"  # not the shared temp folder: other test processes spill too
    spill_root.mkdir()
    budget = {
        "hoodie.memory.merge.max.size": "2000",
        "hoodie.memory.spillable.map.path": str(spill_root),
    }
    spilled = table.read(options=budget)
    assert spills and all(folder == spill_root and b >= 4 for folder, b in spills)
    assert oracle.sorted_rows(spilled) == oracle.sorted_rows(in_memory)
    assert not list(spill_root.iterdir())  # spill files are cleaned up


def test_a_failed_deltacommit_is_cancelled_with_a_rollback_block(tmp_path):
    table = _table(tmp_path / "t")
    table.write(datagen.trips(list(range(8)), seed=1, ts=1), "bulk_insert")
    table.write(datagen.trips([0, 5], seed=2, ts=2))
    before = table.read()
    kill_during_write(table.storage.base_path, "deltacommit", "COMPLETED", [0, 1, 2, 3])
    (failed,) = [i for i in table.timeline() if not i.is_completed]
    oracle.assert_same_table(table.read(), before, "ours after the crash")
    oracle.assert_same_table(oracle.snapshot(table.storage.base_path), before, "hudi-rs")

    table.write(datagen.trips([6], seed=3, ts=3))
    (rollback,) = [i for i in table.timeline() if i.action == "rollback"]
    metadata = avro_metadata.deserialize(
        (Path(table.storage.base_path) / ".hoodie" / rollback.file_name).read_bytes()
    )
    logs = [p for m in metadata["partitionMetadata"].values() for p in m["rollbackLogFiles"]]
    assert logs and all(Path(p).name.split("_")[-1] == "1-0-1" for p in logs)
    for path in logs:
        (block,) = read_log_blocks(table.storage, table.storage.relative_of(path))
        assert block.is_rollback
    after = table.read()
    assert after.num_rows == before.num_rows
    assert failed.timestamp not in set(after["_hoodie_commit_time"].to_pylist())
    oracle.assert_same_table(after, oracle.snapshot(table.storage.base_path))


@pytest.mark.parametrize("operation", ["insert", "bulk_insert"])
def test_inserts_never_go_to_logs(tmp_path, operation):
    table = _table(tmp_path / "t")
    table.write(datagen.trips(list(range(4)), seed=1, ts=1), "bulk_insert")
    table.write(datagen.trips(list(range(4, 8)), seed=2, ts=1), operation)
    assert not list(Path(table.storage.base_path).rglob(".*.log.*"))
    assert table.read().num_rows == 8


def test_tables_without_stored_keys_merge_logs_by_their_key_fields(tmp_path):
    table = _table(tmp_path / "t", **{"hoodie.populate.meta.fields": "false"})
    table.write(datagen.trips(list(range(6)), seed=1, ts=1), "bulk_insert")
    table.write(datagen.trips([0, 1], seed=2, ts=2))
    table.write(pa.table({"uuid": ["key-000002"], "city": ["sao_paulo"]}), "delete")
    assert list(Path(table.storage.base_path).rglob(".*.log.*"))
    rows = {r["uuid"]: r["ts"] for r in table.read(columns=["uuid", "ts"]).to_pylist()}
    assert rows == {
        "key-000000": 2,
        "key-000001": 2,
        "key-000003": 1,
        "key-000004": 1,
        "key-000005": 1,
    }


def test_log_blocks_written_before_a_column_drop_read_without_it(tmp_path):
    """A column dropped (hoodie.datasource.write.schema.allow.auto.evolution.column.drop)
    after log blocks holding it were written: snapshot, skip-merge and compaction read those
    blocks in the new schema, as Apache Hudi projects a block onto the reader schema."""
    path = str(tmp_path / "t")
    table = HudiTable.create(path, "t", "MERGE_ON_READ", ["id"], [], "ts")
    table.write(pa.table({"id": ["a", "b"], "ts": [1, 1], "x": [1, 2], "y": ["p", "q"]}))
    table.write(pa.table({"id": ["a"], "ts": [2], "x": [5], "y": ["r"]}))  # a log with y
    drop = {"hoodie.datasource.write.schema.allow.auto.evolution.column.drop": "true"}
    table.write(pa.table({"id": ["b"], "ts": [3], "x": [7]}), options=drop)
    assert table.schema().names == ["id", "ts", "x"]
    expected = [{"id": "a", "ts": 2, "x": 5}, {"id": "b", "ts": 3, "x": 7}]
    assert table.read(columns=["id", "ts", "x"]).sort_by("id").to_pylist() == expected
    skip = table.read(
        columns=["id", "x"], options={"hoodie.datasource.merge.type": "skip_merge"}
    ).to_pylist()
    assert sorted((r["id"], r["x"]) for r in skip) == [("a", 1), ("a", 5), ("b", 2), ("b", 7)]
    table.compaction.run(table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": 1}))
    assert table.read(columns=["id", "ts", "x"]).sort_by("id").to_pylist() == expected
    oracle.assert_same_table(table.read(), oracle.snapshot(path), "compacted after the drop")
