"""Rolling back the last completed write on the active timeline once older commits are
archived: readers take a file whose instant is not on the active timeline as committed only
if it is older than the first active commit, so with no commit left the archived commits'
rows would vanish (ours and hudi-rs would read an empty table). HudiTable.rollback refuses
it; found by the random sequences (merge-on-read, archival, savepoint, restore, rollback)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from hudi_core import HudiTable
from hudi_core.errors import ServiceError
from tests import oracle

OPTIONS = {
    "hoodie.cleaner.commits.retained": "1",
    "hoodie.keep.min.commits": "2",
    "hoodie.keep.max.commits": "3",
    "hoodie.compact.inline.max.delta.commits": "1",  # archival need not keep delta commits
}
Model = dict[str, tuple[str, int, int]]


def _table(tmp_path: Path, table_type: str) -> HudiTable:
    return HudiTable.create(
        str(tmp_path / "t"),
        "t",
        table_type,
        record_key_fields=["key"],
        precombine_field="ts",
        options=OPTIONS,
    )


def _upsert(table: HudiTable, model: Model, key: str, ts: int, val: int) -> str:
    instant = table.write(pa.table({"key": [key], "ts": [ts], "val": [val]}), operation="upsert")
    model[key] = (key, ts, val)
    return instant


def _rows(table: pa.Table) -> list[tuple[str, int, int]]:
    return sorted(zip(*(table.column(c).to_pylist() for c in ("key", "ts", "val")), strict=True))


def _assert_reads(table: HudiTable, model: Model) -> None:
    want = sorted(model.values())
    assert _rows(table.read()) == want
    assert _rows(oracle.snapshot(table.storage.base_path)) == want


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_the_last_active_commit_is_not_rolled_back_over_archived_commits(tmp_path, table_type):
    table = _table(tmp_path, table_type)
    model: Model = {}
    times = [_upsert(table, model, f"k{n}", n, n) for n in range(4)]
    assert [i.timestamp for i in table.archive()] == times[:2]

    table.rollback(times[3])  # one active commit remains: allowed
    del model["k3"]
    _assert_reads(table, model)

    with pytest.raises(ServiceError, match="last commit on the active timeline"):
        table.rollback(times[2])
    _assert_reads(table, model)  # the refused rollback changed nothing
    assert [i.timestamp for i in table.timeline() if i.action in ("commit", "deltacommit")] == [
        times[2]
    ]

    later = _upsert(table, model, "k1", 9, 90)  # the table goes on as before
    _assert_reads(table, model)
    table.rollback(later)
    model["k1"] = ("k1", 1, 1)
    _assert_reads(table, model)


def test_after_a_restore_the_savepointed_commit_stays_once_its_savepoint_is_deleted(tmp_path):
    """The sequence's shape: archive, savepoint, restore to it, delete the savepoint, roll
    back the savepointed commit, the only one left on the active timeline."""
    table = _table(tmp_path, "MERGE_ON_READ")
    model: Model = {}
    times = [_upsert(table, model, f"k{n}", n, n) for n in range(4)]
    assert [i.timestamp for i in table.archive()] == times[:2]
    table.savepoint(times[2])
    _upsert(table, model, "k0", 7, 70)
    table.restore(times[2])
    model = {f"k{n}": (f"k{n}", n, n) for n in range(3)}  # the rows as of times[2]
    _assert_reads(table, model)
    table.delete_savepoint(times[2])

    with pytest.raises(ServiceError, match="last commit on the active timeline"):
        table.rollback(times[2])
    _assert_reads(table, model)


def test_the_only_commit_of_a_table_without_archived_commits_is_rolled_back(tmp_path):
    table = _table(tmp_path, "COPY_ON_WRITE")
    model: Model = {}
    only = _upsert(table, model, "k0", 0, 0)
    table.rollback(only)
    assert table.read().num_rows == 0
