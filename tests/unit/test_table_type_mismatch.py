"""A write naming a table type (hoodie.datasource.write.table.type, or hoodie.table.type) other
than the one hoodie.properties stores is refused before any instant, as a write naming other
record key or partition fields is: the table stays as it was, and a write naming the stored
type (in any case) or none goes through."""

from __future__ import annotations

import pytest

from hudi_core import HudiTable, InvalidOptionError
from tests import oracle
from tests.datagen import trips
from tests.tables import create_trips_table

WRITE_TYPE = "hoodie.datasource.write.table.type"
TABLE_TYPE = "hoodie.table.type"
OTHER = {"COPY_ON_WRITE": "MERGE_ON_READ", "MERGE_ON_READ": "COPY_ON_WRITE"}
TYPES = ["COPY_ON_WRITE", "MERGE_ON_READ"]


def _written(tmp_path, table_type: str) -> tuple[str, HudiTable]:
    path, table = create_trips_table(tmp_path, table_type)
    table.write(trips([1, 2, 3], seed=1, ts=1), "insert")
    return path, table


def _state(path: str) -> tuple[list[str], list[dict]]:
    """What readers see: hudi-rs's completed commits and rows."""
    return oracle.completed_commit_times(path), oracle.sorted_rows(oracle.snapshot(path))


@pytest.mark.parametrize("stored", TYPES)
@pytest.mark.parametrize("key", [WRITE_TYPE, TABLE_TYPE])
def test_a_write_naming_the_other_table_type_is_refused(tmp_path, stored, key):
    path, table = _written(tmp_path, stored)
    before = _state(path)
    given = OTHER[stored]

    with pytest.raises(InvalidOptionError) as raised:
        table.write(trips([1, 4], seed=2, ts=2), "upsert", {key: given})

    message = str(raised.value)
    assert f"{key}={given}" in message and f"{TABLE_TYPE}={stored}" in message
    assert _state(path) == before  # nothing committed, nothing left pending
    assert not [i for i in table.inspect.timeline() if not i.is_completed]
    assert HudiTable.open(path).table_type == stored


@pytest.mark.parametrize("stored", TYPES)
def test_the_other_table_type_among_the_options_of_open_is_refused(tmp_path, stored):
    path, _ = _written(tmp_path, stored)
    before = _state(path)
    table = HudiTable.open(path, {WRITE_TYPE: OTHER[stored].lower()})

    with pytest.raises(InvalidOptionError, match=f"{TABLE_TYPE}={stored}"):
        table.write(trips([1, 4], seed=2, ts=2), "upsert")
    assert _state(path) == before


@pytest.mark.parametrize("stored", TYPES)
def test_the_stored_table_type_or_none_writes(tmp_path, stored):
    path, table = _written(tmp_path, stored)
    table.write(trips([1, 4], seed=2, ts=2), "upsert", {WRITE_TYPE: stored})
    table.write(trips([2, 5], seed=3, ts=3), "upsert", {WRITE_TYPE: f" {stored.lower()} "})
    table.write(trips([3, 6], seed=4, ts=4), "upsert", {TABLE_TYPE: stored})
    HudiTable.open(path, {WRITE_TYPE: stored}).write(trips([7], seed=5, ts=5), "insert")
    table.write(trips([8], seed=6, ts=6), "insert")

    ours = table.read()
    oracle.assert_same_table(ours, oracle.snapshot(path), "writes naming the stored type")
    assert sorted(ours["uuid"].to_pylist()) == [f"key-{k:06d}" for k in range(1, 9)]


def test_a_table_type_naming_no_type_is_refused_with_the_choices(tmp_path):
    path, table = _written(tmp_path, "MERGE_ON_READ")
    before = _state(path)
    with pytest.raises(InvalidOptionError, match="COPY_ON_WRITE, MERGE_ON_READ"):
        table.write(trips([1], seed=2, ts=2), "upsert", {WRITE_TYPE: "MOR"})
    assert _state(path) == before
