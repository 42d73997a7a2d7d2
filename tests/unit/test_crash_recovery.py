"""A writer killed mid-write leaves reads unchanged; the next write rolls it back."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc

from hudi_core import HudiTable
from hudi_core.timeline import avro_metadata
from tests import datagen, oracle
from tests.killed_writer import kill_during_write

WRITE_KEYS = list(range(0, 300, 2))


def _kill_mid_write(path: str, kill_before: str, action: str = "commit", operation: str = "upsert"):
    kill_during_write(path, action, kill_before, WRITE_KEYS, operation)


def _table_with_history(tmp_path: Path) -> tuple[str, HudiTable]:
    path = str(tmp_path / "trips")
    table = HudiTable.create(
        path,
        name="trips",
        record_key_fields=["uuid"],
        partition_fields=["city"],
        precombine_field="ts",
    )
    table.write(datagen.trips(list(range(200)), seed=1, ts=1), operation="bulk_insert")
    table.write(datagen.trips(list(range(0, 200, 3)), seed=2, ts=2), operation="upsert")
    return path, table


def _data_files(path: str) -> set[str]:
    return {str(p.relative_to(path)) for p in Path(path).rglob("*.parquet")}


def test_killed_before_commit_changes_no_read_and_is_rolled_back(tmp_path):
    path, table = _table_with_history(tmp_path)
    before, before_files = table.read(), _data_files(path)
    _kill_mid_write(path, kill_before="COMPLETED")

    failed = [i for i in table.timeline() if not i.is_completed]
    assert [(i.action, i.state.value) for i in failed] == [("commit", "INFLIGHT")]
    written_by_failed = _data_files(path) - before_files
    assert written_by_failed, "the killed writer should have written data files"
    assert all(failed[0].timestamp in name for name in written_by_failed)
    oracle.assert_same_table(table.read(), before, "ours after the crash")
    oracle.assert_same_table(oracle.snapshot(path), before, "hudi-rs after the crash")

    instant = table.write(datagen.trips([500, 501], seed=3, ts=3), operation="insert")

    assert _data_files(path) & written_by_failed == set()
    timeline = table.timeline()
    assert all(i.is_completed for i in timeline)
    assert failed[0].timestamp not in {i.timestamp for i in timeline}
    rollbacks = [i for i in timeline if i.action == "rollback"]
    assert len(rollbacks) == 1
    metadata = avro_metadata.deserialize(
        (Path(path) / ".hoodie" / rollbacks[0].file_name).read_bytes()
    )
    assert metadata["commitsRollback"] == [failed[0].timestamp]
    assert metadata["totalFilesDeleted"] == len(written_by_failed)
    assert not (Path(path) / ".hoodie" / ".temp" / failed[0].timestamp).exists()
    after = table.read()
    assert after.num_rows == before.num_rows + 2
    newest = after.filter(pc.equal(after["_hoodie_commit_time"], instant))
    assert set(newest["uuid"].to_pylist()) == {"key-000500", "key-000501"}
    oracle.assert_same_table(after, oracle.snapshot(path), "after the rollback")


def test_killed_before_inflight_leaves_only_a_requested_instant(tmp_path):
    path, table = _table_with_history(tmp_path)
    before = table.read()
    _kill_mid_write(path, kill_before="INFLIGHT")
    assert [i.state.value for i in table.timeline() if not i.is_completed] == ["REQUESTED"]
    oracle.assert_same_table(table.read(), before)
    table.write(datagen.trips([700], seed=4, ts=4), operation="upsert")
    assert all(i.is_completed for i in table.timeline())
    assert table.read().num_rows == before.num_rows + 1


def test_killed_overwrite_keeps_the_replaced_file_groups_visible(tmp_path):
    path, table = _table_with_history(tmp_path)
    before = table.read()
    _kill_mid_write(
        path, kill_before="COMPLETED", action="replacecommit", operation="insert_overwrite"
    )
    oracle.assert_same_table(table.read(), before)
    oracle.assert_same_table(oracle.snapshot(path), before)
    table.write(datagen.trips([900], seed=5, ts=5), operation="upsert")
    oracle.assert_same_table(table.read(), oracle.snapshot(path))
    assert table.read().num_rows == before.num_rows + 1


def test_a_rollback_cut_off_midway_is_finished_by_the_next_writer(tmp_path):
    path, table = _table_with_history(tmp_path)
    before, before_files = table.read(), _data_files(path)
    _kill_mid_write(path, kill_before="COMPLETED")
    # The next writer dies too, right before completing its rollback.
    kill_during_write(path, "rollback", "COMPLETED", [1])
    assert any(i.action == "rollback" and not i.is_completed for i in table.timeline())
    oracle.assert_same_table(table.read(), before)

    table.write(datagen.trips([800], seed=6, ts=6), operation="upsert")
    assert all(i.is_completed for i in table.timeline())
    assert [i.action for i in table.timeline()].count("rollback") == 1
    last_write = table.timeline()[-1].timestamp
    assert all(last_write in f for f in _data_files(path) - before_files)
    assert table.read().num_rows == before.num_rows + 1


def test_a_write_failing_in_process_is_rolled_back_at_once(tmp_path, monkeypatch):
    path, table = _table_with_history(tmp_path)
    before, before_files = table.read(), _data_files(path)
    from hudi_core.write import handles

    def broken(self, settings):
        raise OSError("disk full")

    monkeypatch.setattr(handles.MergeTask, "run", broken)
    try:
        table.write(datagen.trips(list(range(0, 200, 2)), seed=7, ts=7), operation="upsert")
    except OSError as exc:
        assert "disk full" in str(exc)
    else:
        raise AssertionError("the write should have failed")
    assert all(i.is_completed for i in table.timeline())
    assert _data_files(path) == before_files
    oracle.assert_same_table(table.read(), before)
