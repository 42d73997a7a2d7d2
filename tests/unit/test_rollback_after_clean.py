"""Rolling back a write whose older file versions a clean deleted since: the rollback would
delete the write's files and leave nothing of the file group, so it is refused and the table
reads as before; where the older versions are still there, it goes through."""

from __future__ import annotations

import pytest

from hudi_core import ServiceError
from tests.keyed import keyed_rows, keyed_table, read_both

OPTIONS = {
    "hoodie.cleaner.commits.retained": 1,
    "hoodie.clean.automatic": False,
    "hoodie.archive.automatic": False,
    "hoodie.parquet.small.file.limit": 104857600,
}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_rollback_needing_a_cleaned_replaced_group_is_refused(tmp_path, table_type):
    _, table = keyed_table(tmp_path, table_type, OPTIONS)
    table.write(keyed_rows(["k1"], "p1", 1), operation="insert")
    dropped = table.write(keyed_rows(["k1"], "p1", 2), operation="delete_partition")
    last = table.write(keyed_rows(["k2"], "p2", 3), operation="insert")
    assert table.clean() is not None  # the replaced group of p1 goes
    table.rollback(last)  # its new file group needs nothing older
    assert read_both(table) == {}
    with pytest.raises(ServiceError, match="Restore to a savepoint"):
        table.rollback(dropped)
    assert read_both(table) == {}
    assert [i.timestamp for i in table.timeline() if i.action == "replacecommit"] == [dropped]


def test_a_rollback_needing_a_cleaned_base_file_version_is_refused(tmp_path):
    _, table = keyed_table(tmp_path, "COPY_ON_WRITE", OPTIONS)
    table.write(keyed_rows(["k1"], "p1", 1), operation="insert")
    rewrote = table.write(keyed_rows(["k1"], "p1", 2), operation="upsert")
    last = table.write(keyed_rows(["k2"], "p2", 3), operation="insert")
    assert table.clean() is not None  # p1's first version goes
    table.rollback(last)
    with pytest.raises(ServiceError, match="Restore to a savepoint"):
        table.rollback(rewrote)
    assert read_both(table) == {"k1": 2}


def test_a_rollback_of_a_log_append_needs_no_older_version(tmp_path):
    _, table = keyed_table(tmp_path, "MERGE_ON_READ", OPTIONS)
    table.write(keyed_rows(["k1"], "p1", 1), operation="insert")
    appended = table.write(keyed_rows(["k1"], "p1", 2), operation="upsert")
    last = table.write(keyed_rows(["k2"], "p2", 3), operation="insert")
    table.clean()
    table.rollback(last)
    table.rollback(appended)
    assert read_both(table) == {"k1": 1}


def test_a_savepointed_older_version_does_not_stand_in_for_the_cleaned_one(tmp_path):
    _, table = keyed_table(tmp_path, "COPY_ON_WRITE", OPTIONS)
    first = table.write(keyed_rows(["k1"], "p1", 1), operation="insert")
    table.savepoint(first)  # keeps the first version through every clean
    table.write(keyed_rows(["k1"], "p1", 2), operation="upsert")
    rewrote = table.write(keyed_rows(["k1"], "p1", 3), operation="upsert")
    last = table.write(keyed_rows(["k1"], "p1", 4), operation="upsert")
    assert table.clean() is not None  # the second version goes: only the first and third stay
    table.rollback(last)  # built on the third, still there
    assert read_both(table) == {"k1": 3}
    with pytest.raises(ServiceError, match="Restore to a savepoint"):
        table.rollback(rewrote)  # built on the second: the savepointed first must not return
    assert read_both(table) == {"k1": 3}
