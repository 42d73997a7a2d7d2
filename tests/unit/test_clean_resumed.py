"""A clean killed after its plan and resumed later: it deletes what it planned and nothing
written since, even in a partition its plan meant to delete whole."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudi_core import HudiTable
from hudi_core.services import cleaner
from tests import oracle


def _rows(keys: list[str], part: str, ts: int) -> pa.Table:
    n = len(keys)
    return pa.table({"key": keys, "part": [part] * n, "ts": [ts] * n})


class _Killed(Exception):
    pass


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_resumed_clean_keeps_a_partition_written_again(tmp_path, table_type, monkeypatch):
    path = str(tmp_path / "t")
    table = HudiTable.create(
        path,
        "t",
        table_type=table_type,
        record_key_fields=["key"],
        partition_fields=["part"],
        precombine_field="ts",
        options={"hoodie.cleaner.commits.retained": 1, "hoodie.clean.max.commits": 1},
    )
    table.write(_rows(["k1"], "p1", 1), operation="insert")
    table.write(_rows(["k2"], "p2", 1), operation="insert")
    table.write(_rows(["k1"], "p1", 2), operation="delete_partition")
    table.write(_rows(["k3"], "p2", 2), operation="upsert")

    def killed(*args, **kwargs):  # the process dies once the plan is on the timeline
        raise _Killed

    with monkeypatch.context() as patched:
        patched.setattr(cleaner, "_delete_files", killed)
        with pytest.raises(_Killed):
            table.clean()
    plan = [i for i in table.timeline() if i.action == "clean"]
    assert plan and not plan[-1].is_completed  # the plan deletes partition p1 whole

    table.write(_rows(["k4"], "p1", 3), operation="insert")
    table.clean()
    assert all(i.is_completed for i in table.timeline() if i.action == "clean")
    expected = ["k2", "k3", "k4"]
    assert sorted(table.read().column("key").to_pylist()) == expected
    assert sorted(oracle.snapshot(path).column("key").to_pylist()) == expected
