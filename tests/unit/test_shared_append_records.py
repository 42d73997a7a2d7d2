"""Many small merge-on-read appends (the bucket index's) encode their records together: the
log blocks must be exactly those each task would have encoded alone."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hudi_core import HudiTable
from hudi_core.engine import LocalEngine
from hudi_core.write import append_task
from hudi_core.write.append_task import AppendTask


def _trips(n: int, fare: float = 1.0) -> pa.Table:
    ids = pa.array(range(n))
    return pa.table(
        {
            "uuid": pc.binary_join_element_wise("trip-", pc.cast(ids, pa.string()), ""),
            "city": pc.cast(pc.bit_wise_and(ids, 3), pa.string()),
            "ts": pa.array([1] * n, pa.int64()),
            "fare": pa.array([fare] * n),
            "note": pa.array([None if i % 5 == 0 else f"n{i}" for i in range(n)], pa.string()),
        }
    )


@pytest.mark.parametrize("parallelism", [1, 2])
def test_shared_blocks_equal_blocks_encoded_alone(tmp_path, monkeypatch, parallelism):
    monkeypatch.setattr(append_task, "SHARD_ROWS", 40)  # several shards, helped by threads
    compared: list[bool] = []
    alone = AppendTask._blocks

    def checked(task: AppendTask, settings):
        result = alone(task, settings)
        if task.shared is not None:
            solo = alone(AppendTask(task.task_id, task.file_slice, task.rows), settings)
            same_blocks = [b.to_bytes() for b in result[0]] == [b.to_bytes() for b in solo[0]]
            compared.append(same_blocks and result[1:] == solo[1:])
        return result

    monkeypatch.setattr(AppendTask, "_blocks", checked)
    table = HudiTable.create(
        str(tmp_path / "t"),
        name="trips",
        table_type="MERGE_ON_READ",
        record_key_fields=["uuid"],
        partition_fields=["city"],
        precombine_field="ts",
        options={"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4"},
        engine=LocalEngine(parallelism),
    )
    data = _trips(400)
    table.write(data, operation="bulk_insert")
    updates = _trips(400, fare=2.0).filter(pc.equal(pc.bit_wise_and(pa.array(range(400)), 1), 0))
    table.write(updates)
    table.write(updates.slice(0, 30), operation="delete")
    table.write(updates.slice(30, 50))
    assert compared and all(compared)
    assert table.read(columns=["uuid"]).num_rows == 400 - 30


def test_a_pickled_append_encodes_its_own_rows():
    task = AppendTask(3, None, pa.table({"a": [1]}))  # type: ignore[arg-type]
    task.shared = append_task.SharedRecords([task])
    assert pickle.loads(pickle.dumps(task)).shared is None
