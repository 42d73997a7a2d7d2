"""The bucket index planned from counts (what the Spark writer hands the planner) decides what
the local engine decides from rows: the same file groups, the same kind of task, the same
rows in each; a new bucket that only deletes writes nothing; file groups under a pending
clustering are refused."""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hudi_core.errors import WriteConflictError
from hudi_core.index.bucket_id import bucket_ids
from hudi_core.merge.record_merger import DELETE_COLUMN
from hudi_core.read.file_system_view import FileSystemView
from hudi_core.schema.meta_fields import PARTITION_PATH_FIELD, RECORD_KEY_FIELD
from hudi_core.write.client import WriteClient
from hudi_core.write.planner import BucketCount
from tests import datagen
from tests.tables import create_trips_table, request_clustering

BUCKETS = 4
OPTIONS = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": str(BUCKETS)}


def _job_and_view(table, operation):
    job = WriteClient(table.storage, table.config, table.engine).start(operation, OPTIONS)
    return job, FileSystemView(table.storage, job.timeline)


def _counts(rows: pa.Table) -> list[BucketCount]:
    buckets = bucket_ids(rows.column(RECORD_KEY_FIELD), ["uuid"], BUCKETS)
    keys = zip(
        rows.column(PARTITION_PATH_FIELD).to_pylist(),
        buckets.tolist(),
        rows.column(DELETE_COLUMN).to_pylist(),
        strict=True,
    )
    return [BucketCount(p, b, d, n) for (p, b, d), n in Counter(keys).items()]


def _task_kind(task) -> str:
    return type(task).__name__


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_counts_plan_the_tasks_rows_would(tmp_path, table_type):
    _, table = create_trips_table(tmp_path, table_type, OPTIONS)
    table.write(datagen.trips(list(range(0, 40, 3)), seed=1, ts=1), options=OPTIONS)
    job, view = _job_and_view(table, "upsert")
    upserts = datagen.trips(list(range(20, 60)), seed=2, ts=2)
    rows, _ = job.prepare(upserts)
    deletes, _ = job.preparer.prepare(datagen.trips([1000, 1001, 1002], 3, 3), combine=False)
    deletes = deletes.set_column(
        deletes.schema.get_field_index(DELETE_COLUMN), DELETE_COLUMN, pa.array([True] * 3)
    )
    rows = pa.concat_tables([rows, deletes.cast(rows.schema)])

    tasks = job.planner.tasks_for_buckets(rows, view)
    plan = job.planner.buckets_for_bucket_counts(_counts(rows), view)

    def kind_and_group(task) -> tuple[str, str, str]:
        return _task_kind(task), task.partition_path, task.file_id[:8]

    assert {b.file_slice is None for b in plan.buckets} == {True, False}, "new and existing"
    by_plan = [plan.task(b.id, rows.slice(0, 0)) for b in plan.buckets]
    assert sorted(map(kind_and_group, by_plan)) == sorted(map(kind_and_group, tasks))
    existing = {(s.partition_path, s.file_id) for s in view.latest_slices()}
    for (partition, number), bucket_id in plan.by_number.items():
        bucket = plan.buckets[bucket_id]
        assert bucket.partition_path == partition and bucket.file_id.startswith(f"{number:08d}-")
        assert ((partition, bucket.file_id) in existing) == (bucket.file_slice is not None)
    # Every row routed to the bucket whose local task holds it; deletes of unknown keys in new
    # buckets go nowhere (as locally, where the new bucket's task drops them).
    route = plan.route(rows)
    local_keys = {
        (t.partition_path, t.file_id[:8]): set(t.rows.column(RECORD_KEY_FIELD).to_pylist())
        for t in tasks
    }
    for bucket in plan.buckets:
        mine = rows.filter(pa.array(route == bucket.id))
        if bucket.file_slice is None:
            mine = mine.filter(pc.invert(mine.column(DELETE_COLUMN)))
        keys = set(mine.column(RECORD_KEY_FIELD).to_pylist())
        assert keys == local_keys[(bucket.partition_path, bucket.file_id[:8])]
    unrouted = rows.filter(pa.array(route < 0))
    assert unrouted.num_rows == 0 or pc.all(unrouted.column(DELETE_COLUMN)).as_py()
    if table_type == "MERGE_ON_READ":
        assert all(b.append for b in plan.buckets if b.file_slice is not None)


def test_a_new_bucket_of_deletes_only_writes_nothing(tmp_path):
    _, table = create_trips_table(tmp_path, "COPY_ON_WRITE", OPTIONS)
    table.write(datagen.trips([0], seed=1, ts=1), options=OPTIONS)  # no chennai bucket yet
    job, view = _job_and_view(table, "delete")
    plan = job.planner.buckets_for_bucket_counts([BucketCount("chennai", 2, True, 5)], view)
    assert plan.buckets == []
    rows, _ = job.prepare(datagen.trips([3, 7], seed=1, ts=1))
    assert (plan.route(rows) == -1).all()


def test_updates_of_buckets_under_pending_clustering_are_refused(tmp_path):
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE", OPTIONS)
    table.write(datagen.trips(list(range(12)), seed=1, ts=1), options=OPTIONS)
    request_clustering(path, "chennai")
    job, view = _job_and_view(table, "upsert")
    held = sorted(s.file_id for s in view.latest_slices() if s.partition_path == "chennai")[0]
    counts = [BucketCount("chennai", int(held[:8]), False, 1)]
    with pytest.raises(WriteConflictError, match="pending clustering rewrites .*chennai/"):
        job.planner.buckets_for_bucket_counts(counts, view)
    other = next(b for b in range(BUCKETS) if b != int(held[:8]))
    plan = job.planner.buckets_for_bucket_counts([BucketCount("chennai", other, False, 1)], view)
    assert [b.partition_path for b in plan.buckets] == ["chennai"]
