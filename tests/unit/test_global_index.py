"""Global indexes (GLOBAL_SIMPLE, GLOBAL_BLOOM): a key is one record in the whole table.

Every test keeps a model of what the table should hold (key -> partition and record), built
from the batches written, and checks our reader and hudi-rs (the oracle) against it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hudi_core import HudiTable, RecordKeyError
from hudi_core.config.option import Options
from hudi_core.index import index_for
from hudi_core.index.base import IndexContext
from hudi_core.index.bloom_index import BloomIndex
from hudi_core.index.global_index import GlobalBloomIndex, GlobalSimpleIndex
from hudi_core.index.simple_index import SimpleIndex
from hudi_core.merge.record_merger import DEFAULT_PAYLOAD, PARTIAL_UPDATE
from tests import datagen, oracle
from tests.tables import create_trips_table

TABLE_TYPES = ["COPY_ON_WRITE", "MERGE_ON_READ"]
GLOBAL_INDEXES = ["GLOBAL_SIMPLE", "GLOBAL_BLOOM"]
UPDATE_PARTITION_PATH = {
    "GLOBAL_SIMPLE": "hoodie.simple.index.update.partition.path",
    "GLOBAL_BLOOM": "hoodie.bloom.index.update.partition.path",
}
DATA = datagen.SCHEMA.names
SF, NY, SAO, CHENNAI = datagen.CITIES
ROTATED = [NY, SAO, CHENNAI, SF]  # every key's city under datagen.trips(cities=ROTATED) moves


class Model:
    """What the table should hold: key -> (partition, record), as Apache Hudi's global index
    has it."""

    def __init__(self, update_partition_path: bool = True, event_time: bool = False) -> None:
        self.update_partition_path = update_partition_path
        self.event_time = event_time
        self.rows: dict[str, tuple[str, dict[str, Any]]] = {}

    def upsert(self, batch: pa.Table) -> None:
        for record in batch.to_pylist():
            key = record["uuid"]
            stored = self.rows.get(key)
            if stored is not None and self.event_time and record["ts"] < stored[1]["ts"]:
                continue  # a late event: the stored record stays, where it is
            if record.get("_hoodie_is_deleted"):
                self.rows.pop(key, None)
                continue
            partition = record["city"]
            if stored is not None and not self.update_partition_path:
                partition = stored[0]
            self.rows[key] = (partition, {name: record[name] for name in DATA})

    def delete(self, keys: list[str]) -> None:
        for key in keys:
            self.rows.pop(key, None)

    def check(self, table: Any, oracle_too: bool = True) -> None:
        """Our snapshot holds the model's rows, one per key, in the model's partitions; and
        hudi-rs reads what we read."""
        ours = table.read()
        keys = ours["uuid"].to_pylist()
        assert len(keys) == len(set(keys)), "a key is stored twice"
        got = {
            row["uuid"]: (row["_hoodie_partition_path"], {name: row[name] for name in DATA})
            for row in ours.to_pylist()
        }
        assert got == self.rows
        if oracle_too:
            oracle.assert_same_table(ours, oracle.snapshot(table.storage.base_path))


def _table(tmp_path: Path, table_type: str, index: str, **options: str) -> Any:
    _, table = create_trips_table(
        tmp_path,
        table_type,
        {"hoodie.index.type": index, "hoodie.parquet.small.file.limit": "0", **options},
    )
    return table


def _write(table: Any, model: Model, batch: pa.Table) -> str:
    instant = table.write(batch)
    model.upsert(batch)
    return instant


def _compact(table: Any) -> None:
    planned = table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": "1"})
    assert planned is not None
    table.compaction.run(planned)


def _stats(table: Any, instant: str) -> list[dict[str, Any]]:
    folder = Path(table.storage.base_path) / ".hoodie"
    (completed,) = [
        p for p in folder.glob(f"{instant}.*") if p.suffix in (".commit", ".deltacommit")
    ]
    metadata = json.loads(completed.read_text())
    return [s for stats in metadata["partitionToWriteStats"].values() for s in stats]


def _concat(*batches: pa.Table) -> pa.Table:
    return pa.concat_tables(batches)


@pytest.mark.parametrize("index", GLOBAL_INDEXES)
@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_a_key_moving_partition_leaves_its_old_partition(tmp_path, table_type, index):
    table = _table(tmp_path, table_type, index)
    model = Model()
    _write(table, model, datagen.trips(list(range(12)), seed=1, ts=1))
    moving = _concat(
        datagen.trips([0, 1, 2, 3], seed=2, ts=2, cities=ROTATED),  # each to another city
        datagen.trips([6, 7], seed=2, ts=2),  # updates in place
        datagen.trips([20, 21], seed=2, ts=2),  # new keys
    )
    instant = _write(table, model, moving)
    model.check(table)
    stats = _stats(table, instant)
    assert sum(s["numDeletes"] for s in stats) == 4  # one per key leaving its partition
    assert sum(s["numInserts"] for s in stats) == 6  # the moved keys and the new ones
    assert {s["partitionPath"] for s in stats if s["numDeletes"]} == {SF, NY, SAO, CHENNAI}
    # On merge-on-read, keys 0 and 1 are now in two base files (deleted by the log of the
    # first): moving them on, or back, finds the live one.
    _write(table, model, datagen.trips([0], seed=3, ts=3))  # back to its first city
    _write(table, model, datagen.trips([1], seed=3, ts=3, cities=[CHENNAI]))
    _write(table, model, datagen.trips([2, 3], seed=3, ts=3, cities=ROTATED))  # stays put
    model.check(table)
    if table_type == "MERGE_ON_READ":
        _compact(table)
        model.check(table)
        _write(table, model, datagen.trips([0, 1, 4], seed=4, ts=4, cities=ROTATED))
        model.check(table)


@pytest.mark.parametrize("index", GLOBAL_INDEXES)
@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_without_update_partition_path_a_key_is_updated_where_it_is(tmp_path, table_type, index):
    table = _table(tmp_path, table_type, index, **{UPDATE_PARTITION_PATH[index]: "false"})
    model = Model(update_partition_path=False)
    _write(table, model, datagen.trips(list(range(8)), seed=1, ts=1))
    instant = _write(table, model, datagen.trips([0, 1, 2, 9], seed=2, ts=2, cities=ROTATED))
    model.check(table)
    ours = {r["uuid"]: r for r in table.read().to_pylist()}
    # the record keeps its incoming data (the new city) but stays in its stored partition
    assert (ours["key-000000"]["_hoodie_partition_path"], ours["key-000000"]["city"]) == (SF, NY)
    assert ours["key-000009"]["_hoodie_partition_path"] == SAO  # a new key: where it says
    assert sum(s["numDeletes"] for s in _stats(table, instant)) == 0
    if table_type == "MERGE_ON_READ":
        _compact(table)
        model.check(table)


@pytest.mark.parametrize("index", GLOBAL_INDEXES)
@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_deletes_find_their_key_in_any_partition(tmp_path, table_type, index):
    table = _table(tmp_path, table_type, index)
    model = Model()
    _write(table, model, datagen.trips(list(range(8)), seed=1, ts=1))
    # operation delete: a wrong partition value, no partition value, an unknown key
    keys = ["key-000000", "key-000001", "key-000099"]
    batch = pa.table({"uuid": keys, "city": [CHENNAI, None, SF], "ts": [2, 2, 2]})
    table.write(batch, "delete")
    model.delete(keys)
    model.check(table)
    # _hoodie_is_deleted rows naming another partition than their key's
    flagged = datagen.trips([2, 3, 4], seed=3, ts=3, cities=ROTATED).append_column(
        "_hoodie_is_deleted", pa.array([True, True, False])
    )
    _write(table, model, flagged)
    model.check(table)
    # a batch of record keys alone, no partition column at all
    table.write(pa.table({"uuid": ["key-000005", "key-000006"]}), "delete")
    model.delete(["key-000005", "key-000006"])
    model.check(table)
    if table_type == "MERGE_ON_READ":
        _compact(table)
        model.check(table)


def test_deletes_by_key_alone_need_a_global_index(tmp_path):
    """Without one the partition is needed to find the key: the batch is refused."""
    table = _table(tmp_path, "COPY_ON_WRITE", "SIMPLE")
    table.write(datagen.trips([0], seed=1, ts=1))
    with pytest.raises(RecordKeyError, match="partition path field 'city' is not in the batch"):
        table.write(pa.table({"uuid": ["key-000000"]}), "delete")
    assert table.read().num_rows == 1


@pytest.mark.parametrize("index", GLOBAL_INDEXES)
@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_a_late_event_does_not_move_its_key(tmp_path, table_type, index):
    payload = {"hoodie.datasource.write.payload.class": DEFAULT_PAYLOAD}
    table = _table(tmp_path, table_type, index, **payload)
    model = Model(event_time=True)
    _write(table, model, datagen.trips([0, 1, 2, 3], seed=1, ts=5))
    late = datagen.trips([0], seed=2, ts=3, cities=ROTATED)  # older than the stored record
    newer = datagen.trips([1], seed=2, ts=7, cities=ROTATED)
    tie = datagen.trips([2], seed=2, ts=5, cities=ROTATED)  # a tie: the incoming one wins
    _write(table, model, _concat(late, newer, tie))
    partitions = dict(zip(*table.read(["uuid", "_hoodie_partition_path"]).columns, strict=True))
    assert {k.as_py(): p.as_py() for k, p in partitions.items()} == {
        "key-000000": SF,
        "key-000001": SAO,
        "key-000002": CHENNAI,
        "key-000003": CHENNAI,
    }
    model.check(table)
    if table_type == "MERGE_ON_READ":
        _compact(table)
        model.check(table)


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_a_partial_update_moves_the_merged_record(tmp_path, table_type):
    payload = {"hoodie.datasource.write.payload.class": PARTIAL_UPDATE}
    table = _table(tmp_path, table_type, "GLOBAL_SIMPLE", **payload)
    first = datagen.trips([0, 1], seed=1, ts=1)
    table.write(first)
    incoming = datagen.trips([0, 1], seed=2, ts=2, cities=ROTATED)
    incoming = incoming.set_column(
        incoming.schema.get_field_index("note"), "note", pa.nulls(2, pa.string())
    )
    table.write(incoming)
    ours = {r["uuid"]: r for r in table.read().to_pylist()}
    assert len(ours) == 2
    stored_notes = dict(zip(first["uuid"].to_pylist(), first["note"].to_pylist(), strict=True))
    for key, row in ours.items():
        assert row["_hoodie_partition_path"] == row["city"] == (NY if key.endswith("0") else SAO)
        assert row["note"] == stored_notes[key]  # the stored value fills the incoming null
        assert row["ts"] == 2
    if table_type == "COPY_ON_WRITE":  # hudi-rs refuses to merge logs with this payload
        oracle.assert_same_table(table.read(), oracle.snapshot(table.storage.base_path))


@pytest.mark.parametrize("index", GLOBAL_INDEXES)
def test_a_batch_holding_a_key_in_two_partitions_writes_one_record(tmp_path, index):
    table = _table(tmp_path, "MERGE_ON_READ", index)
    model = Model()
    _write(table, model, datagen.trips([0, 1], seed=1, ts=1))
    twice = _concat(
        datagen.trips([0, 5], seed=2, ts=3, cities=[CHENNAI]),
        datagen.trips([0, 5], seed=3, ts=2, cities=[NY]),  # lower ordering values lose
    )
    table.write(twice)
    model.upsert(twice.sort_by("ts"))  # pre-combined by key: the highest ordering value wins
    model.check(table)


@pytest.mark.parametrize(
    ("table_type", "options"),
    [
        ("COPY_ON_WRITE", {"hoodie.combine.before.upsert": "false"}),
        ("MERGE_ON_READ", {"hoodie.allow.operation.metadata.field": "true"}),  # changelog
    ],
)
def test_uncombined_rows_of_a_moving_key_move_it_once(tmp_path, table_type, options):
    """Without pre-combining, the last of a batch's rows of a key that moves decides."""
    table = HudiTable.create(
        str(tmp_path / "t"),
        name="t",
        table_type=table_type,
        record_key_fields=["id"],
        partition_fields=["p"],
        precombine_field="ts",
        options={"hoodie.index.type": "GLOBAL_SIMPLE", **options},
    )
    table.write(pa.table({"id": ["a", "b"], "p": ["x", "x"], "ts": [1, 1], "v": [1, 2]}))
    table.write(
        pa.table({"id": ["a", "a", "b"], "p": ["y", "z", "x"], "ts": [2, 2, 2], "v": [3, 4, 5]})
    )
    ours = table.read(["id", "_hoodie_partition_path", "v"]).to_pylist()
    assert sorted(ours, key=lambda r: r["id"]) == [
        {"id": "a", "_hoodie_partition_path": "z", "v": 4},
        {"id": "b", "_hoodie_partition_path": "x", "v": 5},
    ]
    oracle.assert_same_table(table.read(), oracle.snapshot(table.storage.base_path))


@pytest.mark.parametrize("index", GLOBAL_INDEXES)
def test_insert_dropping_duplicates_drops_keys_stored_in_other_partitions(tmp_path, index):
    table = _table(tmp_path, "COPY_ON_WRITE", index)
    model = Model()
    _write(table, model, datagen.trips([0, 1], seed=1, ts=1))
    batch = datagen.trips([0, 1, 7], seed=2, ts=2, cities=ROTATED)
    table.write(batch, "insert", {"hoodie.datasource.write.insert.drop.duplicates": "true"})
    model.upsert(batch.filter(pc.equal(batch["uuid"], "key-000007")))
    model.check(table)


def test_virtual_keys_move_too(tmp_path):
    table = _table(
        tmp_path, "MERGE_ON_READ", "GLOBAL_SIMPLE", **{"hoodie.populate.meta.fields": "false"}
    )
    table.write(datagen.trips([0, 1, 2], seed=1, ts=1))
    table.write(datagen.trips([0, 1], seed=2, ts=2, cities=ROTATED))
    ours = table.read()
    assert sorted(zip(ours["uuid"].to_pylist(), ours["city"].to_pylist(), strict=True)) == [
        ("key-000000", NY),
        ("key-000001", SAO),
        ("key-000002", SAO),
    ]
    oracle.assert_same_table(ours, oracle.snapshot(table.storage.base_path))


def test_the_simple_index_keeps_a_record_per_partition(tmp_path):
    """Not global: a key arriving in another partition is a second record, as in Hudi."""
    table = _table(tmp_path, "COPY_ON_WRITE", "SIMPLE")
    table.write(datagen.trips([0, 1], seed=1, ts=1))
    table.write(datagen.trips([0], seed=2, ts=2, cities=ROTATED))
    ours = table.read()
    assert sorted(zip(ours["uuid"].to_pylist(), ours["city"].to_pylist(), strict=True)) == [
        ("key-000000", NY),
        ("key-000000", SF),
        ("key-000001", NY),
    ]
    oracle.assert_same_table(ours, oracle.snapshot(table.storage.base_path))


def test_global_bloom_reads_the_keys_of_files_that_may_hold_them_only(tmp_path, monkeypatch):
    table = _table(tmp_path, "COPY_ON_WRITE", "GLOBAL_BLOOM")
    table.write(datagen.trips(list(range(10)), seed=1, ts=1, cities=[SF]))
    table.write(datagen.trips(list(range(100, 110)), seed=1, ts=1, cities=[NY]))
    read: list[str] = []
    stored_keys = IndexContext.stored_keys

    def counting(self: IndexContext, file_slice: Any) -> pa.ChunkedArray:
        read.append(file_slice.partition_path)
        return stored_keys(self, file_slice)

    monkeypatch.setattr(IndexContext, "stored_keys", counting)
    table.write(datagen.trips([105], seed=2, ts=2, cities=[SF]))  # key of NY's range, moving
    assert read == [NY]  # SF's file is ruled out by its key range
    ours = table.read(["uuid", "_hoodie_partition_path"]).to_pylist()
    assert {"uuid": "key-000105", "_hoodie_partition_path": SF} in ours
    assert len(ours) == 20


def test_index_types_build_their_index():
    def built(**options: str) -> Any:
        return index_for(Options(options))

    assert isinstance(built(), SimpleIndex)
    assert isinstance(built(**{"hoodie.index.type": "BLOOM"}), BloomIndex)
    assert built(**{"hoodie.index.type": "GLOBAL_SIMPLE"}) == GlobalSimpleIndex(True)
    assert built(
        **{"hoodie.index.type": "GLOBAL_SIMPLE", UPDATE_PARTITION_PATH["GLOBAL_SIMPLE"]: "false"}
    ) == GlobalSimpleIndex(False)
    assert built(
        **{
            "hoodie.index.type": "GLOBAL_BLOOM",
            UPDATE_PARTITION_PATH["GLOBAL_BLOOM"]: "false",
            "hoodie.bloom.index.prune.by.ranges": "false",
        }
    ) == GlobalBloomIndex(update_partition_path=False, prune_by_ranges=False)
