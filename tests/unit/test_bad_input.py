"""Bad input gets a clear error, and nothing a reader can see (or any file) changes."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from hudi_core import (
    HudiError,
    HudiTable,
    InvalidOptionError,
    PrecombineFieldError,
    RecordKeyError,
    SchemaError,
)
from tests import oracle


@pytest.fixture
def table(tmp_path) -> HudiTable:
    table = HudiTable.create(
        str(tmp_path / "t"),
        name="t",
        record_key_fields=["uuid"],
        partition_fields=["city"],
        precombine_field="ts",
    )
    table.write(
        pa.table({"uuid": ["a", "b"], "city": ["sf", "la"], "ts": [1, 1], "fare": [1.0, 2.0]})
    )
    return table


def _files(table: HudiTable) -> dict[str, bytes]:
    root = Path(table.storage.base_path)
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


CASES = {
    "null record key": (
        pa.table({"uuid": ["c", None, None], "city": ["sf"] * 3, "ts": [2] * 3, "fare": [3.0] * 3}),
        RecordKeyError,
        r"record key field 'uuid' is null in 2 rows; first at row 1",
    ),
    "missing record key column": (
        pa.table({"id": ["c"], "city": ["sf"], "ts": [2], "fare": [3.0]}),
        RecordKeyError,
        "uuid",
    ),
    "missing partition column": (
        pa.table({"uuid": ["c"], "ts": [2], "fare": [3.0]}),
        RecordKeyError,
        "city",
    ),
    "missing precombine field": (
        pa.table({"uuid": ["c"], "city": ["sf"], "fare": [3.0]}),
        PrecombineFieldError,
        "precombine field 'ts' is missing",
    ),
    "conflicting column type": (
        pa.table({"uuid": ["c"], "city": ["sf"], "ts": [2], "fare": ["expensive"]}),
        SchemaError,
        "fare",
    ),
    "unknown operation": (
        pa.table({"uuid": ["c"], "city": ["sf"], "ts": [2], "fare": [3.0]}),
        InvalidOptionError,
        "hoodie.datasource.write.operation",
    ),
    "not a table": ({"uuid": ["c"]}, HudiError, "pass a pyarrow Table"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_batch_is_refused_and_changes_nothing(table, case):
    batch, error, message = CASES[case]
    before_files, before_rows = _files(table), table.read()
    operation = "merge_into" if case == "unknown operation" else "upsert"
    with pytest.raises(error, match=message):
        table.write(batch, operation=operation)
    assert _files(table) == before_files
    oracle.assert_same_table(table.read(), before_rows)
    oracle.assert_same_table(oracle.snapshot(table.storage.base_path), before_rows)


def test_schema_conflict_names_the_column_and_both_types(table):
    batch = pa.table({"uuid": ["c"], "city": ["sf"], "ts": [2], "fare": ["expensive"]})
    with pytest.raises(SchemaError) as raised:
        table.write(batch)
    message = str(raised.value)
    assert "fare" in message and "double" in message and "string" in message


def test_new_nullable_columns_evolve_the_schema(table):
    table.write(pa.table({"uuid": ["c"], "city": ["sf"], "ts": [2], "fare": [3.0], "tip": [0.5]}))
    rows = {r["uuid"]: r["tip"] for r in table.read().to_pylist()}
    assert rows == {"a": None, "b": None, "c": 0.5}
    oracle.assert_same_table(table.read(), oracle.snapshot(table.storage.base_path))


def test_creating_over_an_existing_table_is_refused(table):
    from hudi_core import TableExistsError

    with pytest.raises(TableExistsError):
        HudiTable.create(table.storage.base_path, name="t", record_key_fields=["uuid"])


def test_a_table_needs_a_record_key(tmp_path):
    with pytest.raises(InvalidOptionError, match="record key"):
        HudiTable.create(str(tmp_path / "x"), name="x")


def test_an_empty_bulk_insert_writes_nothing_at_all(table, tmp_path):
    types = {"uuid": pa.string(), "city": pa.string(), "ts": pa.int64(), "fare": pa.float64()}
    empty = pa.table({name: pa.array([], kind) for name, kind in types.items()})
    before = _files(table)
    assert table.write(empty, "bulk_insert") is None
    assert _files(table) == before
    new = HudiTable.create(str(tmp_path / "new"), name="new", record_key_fields=["uuid"])
    fresh = _files(new)
    assert new.write(empty, "bulk_insert") is None
    assert _files(new) == fresh and new.timeline() == []
