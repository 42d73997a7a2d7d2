"""Changelog mode (hoodie.allow.operation.metadata.field=true) with a CDC source's batches:
each row keeps its `_hoodie_operation` (I, -U, U, D); merge-on-read keeps every change of a
batch, in order, for changelog reads; copy-on-write keeps each key's last change; snapshots
(ours, hudi-rs's) and compaction keep the latest states."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from hudi_core import HudiTable
from hudi_core.errors import SchemaError
from tests import oracle
from tests.cdc import CDC, by_key, cdc_batch, latest_states, stored_batch

CHANGELOG = {"hoodie.datasource.read.changelog.enabled": "true"}
DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"


def _table(path: Path, table_type: str, **options) -> HudiTable:
    return HudiTable.create(
        str(path),
        name="cdc",
        table_type=table_type,
        record_key_fields=["id"],
        partition_fields=["p"],
        precombine_field="ts",
        options={
            "hoodie.allow.operation.metadata.field": "true",
            "hoodie.parquet.small.file.limit": "0",
            **options,
        },
    )


def _changes_read(table: HudiTable, begin: str, end: str) -> list[tuple]:
    rows = table.read(query_type="incremental", begin=begin, end=end, options=CHANGELOG)
    return [(r["id"], r["_hoodie_operation"], r["ts"], r["v"]) for r in rows.to_pylist()]


def _snapshot(table: HudiTable) -> dict[str, int]:
    return {r["id"]: r["v"] for r in table.read(columns=["id", "v"]).to_pylist()}


@pytest.mark.parametrize("payload", [None, DEFAULT_PAYLOAD])
def test_merge_on_read_keeps_every_change_of_a_cdccdc_batch(tmp_path, payload):
    options = {"hoodie.datasource.write.payload.class": payload} if payload else {}
    table = _table(tmp_path / "t", "MERGE_ON_READ", **options)
    first = table.write(stored_batch())
    second = table.write(cdc_batch(CDC))

    assert by_key(_changes_read(table, first, second)) == by_key(CDC)  # each key in order
    assert _snapshot(table) == latest_states(CDC)
    path = table.storage.base_path
    oracle.assert_same_table(table.read(), oracle.snapshot(path))
    third = table.write(cdc_batch([("k7", "-U", 1, 70), ("k7", "U", 5, 71)]))
    assert _changes_read(table, second, third) == [("k7", "-U", 1, 70), ("k7", "U", 5, 71)]

    planned = table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": "1"})
    table.compaction.run(planned)  # compaction keeps only the latest states
    assert _snapshot(table) == {**latest_states(CDC), "k7": 71}
    as_stored = table.read(columns=["id"], options={"hoodie.datasource.merge.type": "skip_merge"})
    assert sorted(as_stored["id"].to_pylist()) == sorted(_snapshot(table))  # one row a key
    oracle.assert_same_table(table.read(), oracle.snapshot(path))


def test_copy_on_write_keeps_each_keys_last_change(tmp_path):
    table = _table(tmp_path / "t", "COPY_ON_WRITE")
    first = table.write(stored_batch())
    second = table.write(cdc_batch(CDC))

    last = {key: changes[-1] for key, changes in by_key(CDC).items()}
    surviving = sorted(c for c in last.values() if c[1] not in ("-U", "D"))
    assert sorted(_changes_read(table, first, second)) == surviving
    assert _snapshot(table) == latest_states(CDC)
    oracle.assert_same_table(table.read(), oracle.snapshot(table.storage.base_path))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_one_change_per_key_is_read_back_exactly_on_both_table_types(tmp_path, table_type):
    table = _table(tmp_path / "t", table_type)
    first = table.write(stored_batch())
    changes = [("k1", "U", 2, 11), ("k2", "-U", 1, 20), ("k3", "D", 1, 30), ("k9", "I", 1, 90)]
    second = table.write(cdc_batch(changes))
    read = _changes_read(table, first, second)
    if table_type == "MERGE_ON_READ":
        assert sorted(read) == sorted(changes)
    else:  # copy-on-write: a retraction and a delete leave no row behind
        assert sorted(read) == [("k1", "U", 2, 11), ("k9", "I", 1, 90)]
    assert _snapshot(table) == latest_states(changes)
    oracle.assert_same_table(table.read(), oracle.snapshot(table.storage.base_path))


def test_flink_row_kinds_are_accepted_and_unknown_operations_refused(tmp_path):
    table = _table(tmp_path / "t", "MERGE_ON_READ")
    first = table.write(stored_batch())
    flink = cdc_batch([("k1", "-U", 1, 10), ("k1", "+U", 2, 11), ("k9", "+I", 1, 90)])
    second = table.write(flink.set_column(4, "_hoodie_operation", pa.array(["-U", "+U", "+I"])))
    assert sorted(_changes_read(table, first, second)) == [
        ("k1", "-U", 1, 10),
        ("k1", "U", 2, 11),
        ("k9", "I", 1, 90),
    ]
    timeline = table.timeline()
    with pytest.raises(SchemaError, match=r"'X' at row 1; use I, -U, U or D"):
        table.write(cdc_batch([("k1", "U", 3, 12), ("k1", "X", 4, 13)]))
    assert table.timeline() == timeline


def test_a_table_without_changelog_mode_refuses_removing_changes(tmp_path):
    table = HudiTable.create(
        str(tmp_path / "t"), name="plain", record_key_fields=["id"], partition_fields=["p"],
        precombine_field="ts", table_type="MERGE_ON_READ",
    )  # fmt: skip
    table.write(stored_batch())
    timeline = table.timeline()
    with pytest.raises(SchemaError, match="1 rows as -U or D, but the table is not in changelog"):
        table.write(cdc_batch([("k1", "D", 5, 10), ("k2", "U", 5, 21)]))
    assert table.timeline() == timeline
    table.write(cdc_batch([("k1", "I", 5, 11), ("k2", "U", 5, 21)]))  # nothing to lose: written
    assert _snapshot(table) == {"k1": 11, "k2": 21, "k3": 30, "k4": 40}
    assert "_hoodie_operation" not in table.read().column_names
