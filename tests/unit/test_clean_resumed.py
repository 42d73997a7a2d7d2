"""A clean killed after its plan and resumed later: it deletes what it planned and nothing
written since, even in a partition its plan meant to delete whole (random sequences, seeds 5
and 302: the folder went with the files written there since)."""

from __future__ import annotations

import pytest

from hudi_core import HudiTable
from hudi_core.services import cleaner
from tests.keyed import keyed_rows, keyed_table, read_both

TABLE_TYPES = ["COPY_ON_WRITE", "MERGE_ON_READ"]
RETAIN_ONE = {"hoodie.cleaner.commits.retained": 1, "hoodie.clean.max.commits": 1}


class _Killed(Exception):
    pass


def _clean_killed_after_its_plan(table: HudiTable, monkeypatch: pytest.MonkeyPatch) -> None:
    def killed(*args: object, **kwargs: object) -> None:  # dies once the plan is written
        raise _Killed

    with monkeypatch.context() as patched:
        patched.setattr(cleaner, "_delete_files", killed)
        with pytest.raises(_Killed):
            table.clean()
    assert any(i.action == "clean" and not i.is_completed for i in table.timeline())


def _resume_clean(table: HudiTable) -> None:
    table.clean()  # resumes the old plan first
    assert all(i.is_completed for i in table.timeline() if i.action == "clean")


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_a_resumed_clean_keeps_a_partition_written_again(tmp_path, table_type, monkeypatch):
    _, table = keyed_table(tmp_path, table_type, RETAIN_ONE)
    table.write(keyed_rows(["k1"], "p1", 1), operation="insert")
    table.write(keyed_rows(["k2"], "p2", 1), operation="insert")
    table.write(keyed_rows(["k1"], "p1", 2), operation="delete_partition")
    table.write(keyed_rows(["k3"], "p2", 2), operation="upsert")
    _clean_killed_after_its_plan(table, monkeypatch)  # its plan deletes partition p1 whole

    table.write(keyed_rows(["k4"], "p1", 3), operation="insert")
    _resume_clean(table)
    assert read_both(table) == {"k2": 1, "k3": 2, "k4": 3}


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_a_resumed_clean_keeps_an_overwrite_of_a_bucket_table(tmp_path, table_type, monkeypatch):
    options = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": 2, **RETAIN_ONE}
    _, table = keyed_table(tmp_path, table_type, options)
    table.write(keyed_rows(["k0"], "p0", 1), operation="insert")
    table.write(keyed_rows(["k1"], "p1", 1), operation="upsert")
    table.write(keyed_rows(["k0"], "p0", 2), operation="delete_partition")
    table.write(keyed_rows(["k1"], "p1", 2), operation="upsert")
    _clean_killed_after_its_plan(table, monkeypatch)  # its plan deletes partition p0 whole

    overwrite = table.write(keyed_rows(["k2"], "p0", 3), operation="insert_overwrite")
    _resume_clean(table)
    expected = {"k1": 2, "k2": 3}
    assert read_both(table) == expected
    assert read_both(table, as_of=overwrite) == expected
