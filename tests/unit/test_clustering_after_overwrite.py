"""A clustering planned before an overwrite (insert_overwrite, insert_overwrite_table,
delete_partition) replaced its input file groups: running it must not bring the overwritten
or dropped rows back. The run leaves out the input file groups replaced since the plan was
made; a replacement that completes while the clustering runs fails the attempt as a conflict
(rolled back, plan kept), and running the plan again then leaves them out. Every read is
checked against the model of the writes and against hudi-rs."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudi_core import HudiTable, WriteConflictError
from hudi_core.model.commit_metadata import CommitMetadata
from hudi_core.services import clustering as clustering_module
from hudi_core.timeline import ActiveTimeline
from tests import oracle

SMALL_FILES = {"hoodie.parquet.small.file.limit": "0"}  # every insert makes a new file group
TABLE_TYPES = ["COPY_ON_WRITE", "MERGE_ON_READ"]
OVERWRITES = ["insert_overwrite", "insert_overwrite_table", "delete_partition"]


def _rows(keys: list[str], part: str, ts: int) -> pa.Table:
    return pa.table(
        {
            "key": keys,
            "part": [part] * len(keys),
            "ts": pa.array([ts] * len(keys), pa.int64()),
            "val": [f"{k}@{ts}" for k in keys],
        }
    )


def _table(tmp_path, table_type: str, partitioned: bool) -> tuple[str, HudiTable]:
    path = str(tmp_path / "t")
    table = HudiTable.create(
        path,
        "t",
        table_type=table_type,
        record_key_fields=["key"],
        partition_fields=["part"] if partitioned else [],
        precombine_field="ts",
        options=SMALL_FILES,
    )
    return path, table


class Model:
    """What a reader must see: the latest row of every live key."""

    def __init__(self) -> None:
        self.rows: dict[str, dict] = {}

    def write(self, table: HudiTable, batch: pa.Table, operation: str = "upsert") -> str:
        instant = table.write(batch, operation)
        assert instant is not None
        if operation == "insert_overwrite_table":
            self.rows.clear()
        elif operation in ("insert_overwrite", "delete_partition"):
            parts = set(batch.column("part").to_pylist())
            self.rows = {k: r for k, r in self.rows.items() if r["part"] not in parts}
        if operation != "delete_partition":
            self.rows.update({r["key"]: r for r in batch.to_pylist()})
        return instant

    def check(self, table: HudiTable, path: str, context: str) -> None:
        ours = table.read()
        got = {r["key"]: (r["part"], r["ts"], r["val"]) for r in ours.to_pylist()}
        want = {k: (r["part"], r["ts"], r["val"]) for k, r in self.rows.items()}
        assert got == want, f"{context}: ours"
        oracle.assert_same_table(ours, oracle.snapshot(path), context)


def _fill(table: HudiTable, model: Model, part: str, keys: list[str]) -> None:
    """One file group per key, the first key updated afterwards (a log on merge-on-read)."""
    for k in keys:
        model.write(table, _rows([k], part, 1))
    model.write(table, _rows(keys[:1], part, 2))


def _replaced_by(table: HudiTable, instant: str) -> set[tuple[str, str]]:
    timeline = ActiveTimeline.load(table.storage)
    (completed,) = [i for i in timeline.completed() if i.timestamp == instant]
    return CommitMetadata.from_json_bytes(timeline.read_bytes(completed)).replaced_file_ids()


@pytest.mark.parametrize("table_type", TABLE_TYPES)
@pytest.mark.parametrize("partitioned", [True, False], ids=["partitioned", "unpartitioned"])
@pytest.mark.parametrize("operation", OVERWRITES)
def test_overwritten_rows_stay_gone_after_a_clustering_planned_before(
    tmp_path, table_type, partitioned, operation
):
    path, table = _table(tmp_path, table_type, partitioned)
    model = Model()
    _fill(table, model, "p1", ["k1", "k2"])
    model.check(table, path, "before")
    planned = table.clustering.schedule()
    assert planned is not None

    model.write(table, _rows(["k3"], "p1", 3), operation)
    model.check(table, path, f"after {operation}")
    expected = [] if operation == "delete_partition" else ["k3"]
    assert sorted(model.rows) == expected

    assert table.clustering.run() == planned
    model.check(table, path, f"clustering after {operation}")
    assert table.clustering.pending() == []
    assert _replaced_by(table, planned) == set()  # every input group was replaced already


@pytest.mark.parametrize("table_type", TABLE_TYPES)
@pytest.mark.parametrize("operation", ["insert_overwrite", "delete_partition"])
def test_clustering_still_rewrites_the_partitions_the_overwrite_left(
    tmp_path, table_type, operation
):
    path, table = _table(tmp_path, table_type, True)
    model = Model()
    _fill(table, model, "p1", ["k1", "k2"])
    _fill(table, model, "p2", ["k4", "k5"])
    planned = table.clustering.schedule()
    assert planned is not None

    model.write(table, _rows(["k3"], "p1", 3), operation)
    assert table.clustering.run() == planned
    model.check(table, path, f"clustering after {operation} of p1")
    replaced = _replaced_by(table, planned)
    assert {p for p, _ in replaced} == {"p2"} and len(replaced) == 2


@pytest.mark.parametrize("table_type", TABLE_TYPES)
@pytest.mark.parametrize("partitioned", [True, False], ids=["partitioned", "unpartitioned"])
def test_an_overwrite_completing_while_the_clustering_runs_is_a_conflict(
    tmp_path, monkeypatch, table_type, partitioned
):
    path, table = _table(tmp_path, table_type, partitioned)
    model = Model()
    _fill(table, model, "p1", ["k1", "k2"])
    planned = table.clustering.schedule()
    assert planned is not None

    run_task = clustering_module.run_cluster_task
    overwritten = []

    def task_then_overwrite(task, settings):
        stats = run_task(task, settings)
        if not overwritten:  # the rows are read: another writer overwrites them now
            overwritten.append(model.write(table, _rows(["k3"], "p1", 3), "insert_overwrite"))
        return stats

    monkeypatch.setattr(clustering_module, "run_cluster_task", task_then_overwrite)
    with pytest.raises(WriteConflictError, match=f"clustering {planned}") as failure:
        table.clustering.run()
    assert overwritten and overwritten[0] in str(failure.value)
    monkeypatch.setattr(clustering_module, "run_cluster_task", run_task)
    model.check(table, path, "after the failed attempt")
    assert table.clustering.pending() == [planned]  # rolled back, the plan kept

    assert table.clustering.run() == planned
    model.check(table, path, "clustering run again")
    assert _replaced_by(table, planned) == set()
