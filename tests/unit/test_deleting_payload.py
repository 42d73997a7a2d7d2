"""EmptyHoodieRecordPayload as a write's payload class: an upsert deletes the batch's keys
(copy-on-write and merge-on-read), whatever ordering values the stored records carry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hudi_core import HudiTable, InvalidOptionError
from hudi_core.merge.record_merger import DEFAULT_PAYLOAD
from tests import datagen, oracle
from tests.tables import create_trips_table

PAYLOAD = "hoodie.datasource.write.payload.class"
SPELLINGS = [
    "org.apache.hudi.common.model.EmptyHoodieRecordPayload",
    "org.apache.hudi.EmptyHoodieRecordPayload",  # as the Flink documentation spells it
]


def _keys(table) -> set[str]:
    return set(table["uuid"].to_pylist())


def _commit(path: str, instant: str) -> dict:
    found = next(Path(path, ".hoodie").glob(f"{instant}.*commit"))
    return json.loads(found.read_text())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("payload", SPELLINGS)
def test_an_upsert_with_the_empty_payload_deletes_its_keys(tmp_path, table_type, payload):
    # The table merges by event time: a plain upsert with these lower ts values would lose.
    path, table = create_trips_table(tmp_path, table_type, {PAYLOAD: DEFAULT_PAYLOAD})
    table.write(datagen.trips(list(range(10)), seed=1, ts=5))
    before = table.read()
    instant = table.write(datagen.trips([2, 3, 404], seed=2, ts=1), options={PAYLOAD: payload})

    after = table.read()
    assert _keys(after) == _keys(before) - {"key-000002", "key-000003"}
    gone = ("key-000002", "key-000003")
    kept = oracle.sorted_rows(before.drop_columns(["_hoodie_file_name"]))
    untouched = [r for r in kept if r["uuid"] not in gone]  # copy-on-write renames their file
    assert oracle.sorted_rows(after.drop_columns(["_hoodie_file_name"])) == untouched
    oracle.assert_same_table(after, oracle.snapshot(path))
    commit = _commit(path, instant)
    assert commit["operationType"] == "UPSERT"
    stats = [s for p in commit["partitionToWriteStats"].values() for s in p]
    assert sum(s["numDeletes"] for s in stats) == 2 and sum(s["numInserts"] for s in stats) == 0
    if table_type == "MERGE_ON_READ":  # the deletes survive compaction
        planned = table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": "1"})
        table.compaction.run(planned)
        oracle.assert_same_table(table.read(), oracle.snapshot(path))
        assert _keys(table.read()) == _keys(after)


def test_the_table_keeps_merging_by_its_own_payload_class(tmp_path):
    path, table = create_trips_table(tmp_path, "MERGE_ON_READ", {PAYLOAD: DEFAULT_PAYLOAD})
    table.write(datagen.trips([1, 2], seed=1, ts=5))
    table.write(datagen.trips([1], seed=2, ts=1), options={PAYLOAD: SPELLINGS[1]})
    table.write(datagen.trips([2], seed=3, ts=1))  # late data: the stored ts=5 version stays
    rows = table.read()
    assert _keys(rows) == {"key-000002"} and rows["ts"].to_pylist() == [5]
    oracle.assert_same_table(rows, oracle.snapshot(path))
    properties = Path(path, ".hoodie", "hoodie.properties").read_text()
    assert f"hoodie.compaction.payload.class={DEFAULT_PAYLOAD}" in properties


def test_a_table_created_with_the_empty_payload_does_not_keep_it(tmp_path):
    path, _ = create_trips_table(tmp_path, "COPY_ON_WRITE", {PAYLOAD: SPELLINGS[0]})
    properties = Path(path, ".hoodie", "hoodie.properties").read_text()
    assert "OverwriteWithLatestAvroPayload" in properties and "Empty" not in properties


@pytest.mark.parametrize("operation", ["insert", "bulk_insert", "insert_overwrite"])
def test_operations_that_do_not_look_keys_up_refuse_it(tmp_path, operation):
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE")
    table.write(datagen.trips([1], seed=1, ts=1))
    timeline = table.timeline()
    with pytest.raises(InvalidOptionError, match="use operation upsert or delete"):
        table.write(datagen.trips([1], seed=2, ts=2), operation, {PAYLOAD: SPELLINGS[0]})
    assert table.timeline() == timeline
    assert _keys(HudiTable.open(path).read()) == {"key-000001"}
