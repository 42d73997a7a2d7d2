"""The Spark writer packs small buckets into a few write tasks per core (a Python task costs
Spark tens of milliseconds to set up), balanced by the bytes each bucket writes, while a
bucket as large as a task's budget keeps a task of its own."""

from __future__ import annotations

import numpy as np
import pytest

from hudi_core.distributed import Bucket, BucketPlan
from hudi_core.model.file_group import BaseFile, FileSlice
from spark_jobs import writer as spark_writer
from spark_jobs.writer import _packed_buckets

pytestmark = pytest.mark.spark  # imports pyspark (no JVM started)

ROW = 100  # Arrow bytes of a row
BUDGET = spark_writer._BUCKET_TASK_BYTES


def _new(bucket_id: int, inserts: int) -> Bucket:
    return Bucket(bucket_id, "p", f"f{bucket_id}", None, False, inserts=inserts)


def _merge(bucket_id: int, updates: int, base_size: int, append: bool = False) -> Bucket:
    base = BaseFile(f"p/f{bucket_id}_0-1-0_001.parquet", base_size)
    return Bucket(
        bucket_id,
        "p",
        f"f{bucket_id}",
        FileSlice("p", f"f{bucket_id}", "001", base),
        append,
        updates=updates,
    )


def _work(plan: BucketPlan, task_of: np.ndarray) -> dict[int, float]:
    loads: dict[int, float] = {}
    for bucket, task in zip(plan.buckets, task_of.tolist(), strict=True):
        loads[task] = loads.get(task, 0) + spark_writer._bucket_work(bucket, ROW)
    return loads


def test_small_buckets_share_two_tasks_per_core_evenly():
    plan = BucketPlan([_new(b, 1000 + 10 * b) for b in range(48)])
    task_of = _packed_buckets(plan, ROW, parallelism=2)
    assert sorted(set(task_of.tolist())) == [0, 1, 2, 3]
    loads = _work(plan, task_of)
    assert max(loads.values()) - min(loads.values()) <= 1010 * ROW, "within one bucket"


def test_fewer_buckets_than_tasks_get_one_each():
    plan = BucketPlan([_new(b, 10) for b in range(3)])
    assert sorted(_packed_buckets(plan, ROW, parallelism=8).tolist()) == [0, 1, 2]


def test_a_bucket_of_a_full_budget_has_a_task_of_its_own():
    rows_of_budget = -(-BUDGET // ROW)  # rounded up: at least the budget
    plan = BucketPlan([_new(0, 10), _new(1, rows_of_budget), _new(2, 10), _new(3, 10)])
    task_of = _packed_buckets(plan, ROW, parallelism=1).tolist()
    assert task_of.count(task_of[1]) == 1, task_of
    assert len(set(task_of)) == 3, "the big one alone, the three small ones over two tasks"


def test_a_merged_base_file_counts_as_work_an_append_does_not():
    merge = _merge(0, updates=10, base_size=BUDGET)
    append = _merge(1, updates=10, base_size=BUDGET, append=True)
    assert spark_writer._bucket_work(merge, ROW) == BUDGET + 10 * ROW
    assert spark_writer._bucket_work(append, ROW) == 10 * ROW
    plan = BucketPlan([merge, append, _new(2, 10)])
    task_of = _packed_buckets(plan, ROW, parallelism=1).tolist()
    assert task_of.count(task_of[0]) == 1, "the merge of a full base file is alone"


def test_small_buckets_past_the_budget_take_more_tasks():
    rows = BUDGET // ROW // 4  # four buckets fill a task's budget
    plan = BucketPlan([_new(b, rows) for b in range(40)])
    task_of = _packed_buckets(plan, ROW, parallelism=1)
    assert len(set(task_of.tolist())) == 10
    assert all(load <= BUDGET for load in _work(plan, task_of).values())
