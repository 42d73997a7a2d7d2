"""Rolling back a write whose older file versions a clean deleted since: the rollback would
delete the write's files and leave nothing of the file group, so it is refused and the table
reads as before; where the older versions are still there, it goes through."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudi_core import HudiTable, ServiceError
from tests import oracle

OPTIONS = {
    "hoodie.cleaner.commits.retained": 1,
    "hoodie.clean.automatic": False,
    "hoodie.archive.automatic": False,
    "hoodie.parquet.small.file.limit": 104857600,
}


def _rows(keys: list[str], part: str, ts: int) -> pa.Table:
    n = len(keys)
    return pa.table({"key": keys, "part": [part] * n, "ts": [ts] * n})


def _keys(table: HudiTable, path: str) -> dict[str, int]:
    ours = {r["key"]: r["ts"] for r in table.read().select(["key", "ts"]).to_pylist()}
    theirs = {r["key"]: r["ts"] for r in oracle.snapshot(path).select(["key", "ts"]).to_pylist()}
    assert ours == theirs
    return ours


def _table(tmp_path, table_type: str) -> tuple[str, HudiTable]:
    path = str(tmp_path / "t")
    table = HudiTable.create(
        path,
        "t",
        table_type=table_type,
        record_key_fields=["key"],
        partition_fields=["part"],
        precombine_field="ts",
        options=OPTIONS,
    )
    return path, table


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_rollback_needing_a_cleaned_replaced_group_is_refused(tmp_path, table_type):
    path, table = _table(tmp_path, table_type)
    table.write(_rows(["k1"], "p1", 1), operation="insert")
    dropped = table.write(_rows(["k1"], "p1", 2), operation="delete_partition")
    last = table.write(_rows(["k2"], "p2", 3), operation="insert")
    assert table.clean() is not None  # the replaced group of p1 goes
    table.rollback(last)  # its new file group needs nothing older
    assert _keys(table, path) == {}
    with pytest.raises(ServiceError, match="Restore to a savepoint"):
        table.rollback(dropped)
    assert _keys(table, path) == {}
    assert [i.timestamp for i in table.timeline() if i.action == "replacecommit"] == [dropped]


def test_a_rollback_needing_a_cleaned_base_file_version_is_refused(tmp_path):
    path, table = _table(tmp_path, "COPY_ON_WRITE")
    table.write(_rows(["k1"], "p1", 1), operation="insert")
    rewrote = table.write(_rows(["k1"], "p1", 2), operation="upsert")
    last = table.write(_rows(["k2"], "p2", 3), operation="insert")
    assert table.clean() is not None  # p1's first version goes
    table.rollback(last)
    with pytest.raises(ServiceError, match="Restore to a savepoint"):
        table.rollback(rewrote)
    assert _keys(table, path) == {"k1": 2}


def test_a_rollback_of_a_log_append_needs_no_older_version(tmp_path):
    path, table = _table(tmp_path, "MERGE_ON_READ")
    table.write(_rows(["k1"], "p1", 1), operation="insert")
    appended = table.write(_rows(["k1"], "p1", 2), operation="upsert")
    last = table.write(_rows(["k2"], "p2", 3), operation="insert")
    table.clean()
    table.rollback(last)
    table.rollback(appended)
    assert _keys(table, path) == {"k1": 1}
