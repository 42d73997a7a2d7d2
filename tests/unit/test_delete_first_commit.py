"""Deletes on a table that has no schema yet (its first commit a delete or a delete_partition)
and deletes that delete nothing: every such commit records a schema in its extraMetadata, so
Apache Hudi's reader (hudi-rs) reads the table instead of failing to resolve its schema, our
reader agrees, and a later insert defines the columns as a first write does."""

from __future__ import annotations

import json
import threading

import pyarrow as pa
import pytest

from hudi_core import HudiTable
from hudi_core.model.commit_metadata import CommitMetadata
from hudi_core.write import client as client_module
from hudi_core.write.commit_extra import PLACEHOLDER_DOC
from tests import oracle
from tests.datagen import trips

LAYOUTS = [
    pytest.param(table_type, partitions, id=f"{table_type}-{'by_city' if partitions else 'flat'}")
    for table_type in ("COPY_ON_WRITE", "MERGE_ON_READ")
    for partitions in (["city"], [])
]
MULTI_WRITER = {  # writers leave each other's pending instants alone
    "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
    "hoodie.cleaner.policy.failed.writes": "LAZY",
    "hoodie.write.lock.provider": "in_process",
}


def _table(folder, table_type: str, partitions: list[str], name: str = "trips") -> HudiTable:
    return HudiTable.create(
        str(folder / name),
        name,
        table_type=table_type,
        record_key_fields=["uuid"],
        partition_fields=partitions,
        precombine_field="ts",
    )


def _path(table: HudiTable) -> str:
    return table.storage.base_uri


def _recorded_schema(table: HudiTable, instant: str) -> str | None:
    return table.inspect.commit(instant).extra_metadata.get(CommitMetadata.SCHEMA_KEY)


def _fields(table: HudiTable, instant: str) -> list[dict]:
    recorded = _recorded_schema(table, instant)
    assert recorded is not None
    return json.loads(recorded)["fields"]


def _same_as_hudi_rs(table: HudiTable, context: str, as_of: str | None = None) -> pa.Table:
    ours = table.read(as_of=as_of)
    oracle.assert_same_table(ours, oracle.snapshot(_path(table), as_of=as_of), context)
    return ours


@pytest.mark.parametrize(("table_type", "partitions"), LAYOUTS)
def test_a_first_commit_that_deletes_reads_as_an_empty_table(tmp_path, table_type, partitions):
    table = _table(tmp_path, table_type, partitions)
    instant = table.write(trips([1, 2, 3], seed=1, ts=1), "delete")
    assert instant is not None

    assert _recorded_schema(table, instant) is not None
    ours = _same_as_hudi_rs(table, "after a first delete")
    assert ours.num_rows == 0
    # No rows were ever written: the columns are those the table's keys name, and say so.
    placeholder = table.schema()
    assert placeholder.names == ["uuid", *partitions]
    assert all(field.type == pa.string() for field in placeholder)
    assert all(PLACEHOLDER_DOC in field["doc"] for field in _fields(table, instant))

    # A second delete finds no schema either, and records the same placeholder.
    again = table.write(trips([4], seed=2, ts=2), "delete")
    assert _recorded_schema(table, again) == _recorded_schema(table, instant)
    assert _same_as_hudi_rs(table, "after a second delete").num_rows == 0


@pytest.mark.parametrize(("table_type", "partitions"), LAYOUTS)
def test_an_insert_after_a_first_delete_is_a_first_write(tmp_path, table_type, partitions):
    table = _table(tmp_path, table_type, partitions)
    deleted = table.write(trips([1, 2], seed=1, ts=1), "delete")
    rows = trips([1, 2, 3, 4], seed=2, ts=2)
    inserted = table.write(rows, "insert")

    # The columns are the insert's, as if the delete had never been: the model is a table
    # whose first write is the insert.
    model = _table(tmp_path, table_type, partitions, name="model")
    model.write(rows, "insert")
    assert table.schema() == model.schema()
    ours = _same_as_hudi_rs(table, "insert after a first delete")
    assert sorted(ours["uuid"].to_pylist()) == sorted(rows["uuid"].to_pylist())
    assert oracle.sorted_rows(ours.select(rows.column_names)) == oracle.sorted_rows(
        model.read().select(rows.column_names)
    )
    # Time travel to before the insert: the empty table of the delete, for both readers.
    assert _same_as_hudi_rs(table, "as of the delete", as_of=deleted).num_rows == 0
    assert _same_as_hudi_rs(table, "as of the insert", as_of=inserted).num_rows == 4

    # A second delete, now of stored keys, records the insert's schema and deletes them.
    again = table.write(trips([1, 3], seed=3, ts=3), "delete")
    assert _recorded_schema(table, again) == _recorded_schema(table, inserted)
    ours = _same_as_hudi_rs(table, "delete after the insert")
    assert sorted(ours["uuid"].to_pylist()) == ["key-000002", "key-000004"]


@pytest.mark.parametrize(("table_type", "partitions"), LAYOUTS)
def test_a_delete_that_deletes_nothing_keeps_the_tables_schema(tmp_path, table_type, partitions):
    """A guard of what already held: the delete of absent keys after inserts records the
    table's schema (Apache Hudi's delete records the writer schema of the last commit)."""
    table = _table(tmp_path, table_type, partitions)
    inserted = table.write(trips([1, 2, 3], seed=1, ts=1), "insert")
    before = table.read()
    nothing = table.write(trips([7, 8], seed=2, ts=2), "delete")

    assert _recorded_schema(table, nothing) == _recorded_schema(table, inserted)
    ours = _same_as_hudi_rs(table, "after a delete of absent keys")
    assert oracle.sorted_rows(ours.drop_columns(["_hoodie_commit_seqno"])) == oracle.sorted_rows(
        before.drop_columns(["_hoodie_commit_seqno"])
    )


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_first_delete_partition_reads_as_an_empty_table(tmp_path, table_type):
    table = _table(tmp_path, table_type, ["city"])
    instant = table.write(trips([1, 2], seed=1, ts=1), "delete_partition")
    assert instant is not None
    assert _same_as_hudi_rs(table, "after a first delete_partition").num_rows == 0

    rows = trips([1, 2, 3], seed=2, ts=2)
    table.write(rows, "upsert")
    ours = _same_as_hudi_rs(table, "upsert after a first delete_partition")
    assert sorted(ours["uuid"].to_pylist()) == sorted(rows["uuid"].to_pylist())


def test_the_first_write_after_a_first_delete_keeps_its_non_null_columns(tmp_path):
    """The insert defines the columns as a first write does: a non-null column stays
    non-null (a table with columns would take a new column as nullable)."""
    table = _table(tmp_path, "COPY_ON_WRITE", ["city"])
    table.write(trips([1], seed=1, ts=1), "delete")
    rows = trips([1, 2], seed=2, ts=2)
    rows = rows.cast(rows.schema.set(0, pa.field("uuid", pa.string(), nullable=False)))
    table.write(rows, "insert")

    model = _table(tmp_path, "COPY_ON_WRITE", ["city"], name="model")
    model.write(rows, "insert")
    assert table.schema() == model.schema()
    assert not table.schema().field("uuid").nullable
    _same_as_hudi_rs(table, "non-null insert after a first delete")


def test_a_first_delete_keeps_the_columns_of_an_insert_that_completed_meanwhile(
    tmp_path, monkeypatch
):
    """Two writers: an insert starts, a delete starts on the table still without a schema,
    the insert completes, then the delete. The delete's commit is the newest, whose schema
    readers take: it must carry the insert's columns, not hide them."""
    table = _table(tmp_path, "COPY_ON_WRITE", ["city"])
    rows = trips([1, 2, 3], seed=1, ts=1)
    insert_started, delete_started = threading.Event(), threading.Event()
    real_execute = client_module.WriteJob._execute

    def interleaved(self, tasks, instant_time, data_schema):
        if self.operation == "INSERT":  # its instant is requested: let the delete start
            insert_started.set()
            assert delete_started.wait(30)
        elif self.operation == "DELETE":  # the delete's instant exists: the insert completes
            delete_started.set()
            inserter.join(30)
        return real_execute(self, tasks, instant_time, data_schema)

    monkeypatch.setattr(client_module.WriteJob, "_execute", interleaved)
    writer = HudiTable.open(_path(table), MULTI_WRITER)
    inserter = threading.Thread(target=writer.write, args=(rows, "insert"))
    inserter.start()
    assert insert_started.wait(30)
    deleted = table.write(trips([9], seed=2, ts=2), "delete", MULTI_WRITER)
    inserter.join(30)

    writes = [i for i in table.inspect.timeline() if i.is_write and i.is_completed]
    assert [i.action for i in writes] == ["commit", "commit"]
    assert writes[-1].timestamp == deleted  # the newest commit: readers take its schema
    ours = _same_as_hudi_rs(table, "insert completed inside a first delete")
    assert sorted(ours["uuid"].to_pylist()) == sorted(rows["uuid"].to_pylist())
    assert table.schema().names == rows.column_names
