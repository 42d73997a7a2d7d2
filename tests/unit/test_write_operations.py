"""Write operations on copy-on-write tables: what each one does to the rows and the files."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from hudi_core import HudiTable
from hudi_core.io.bloom_filter import bloom_filter_from_footer
from hudi_core.merge.record_merger import DEFAULT_PAYLOAD
from hudi_core.timeline import avro_metadata
from tests import datagen, oracle


def _table(tmp_path: Path, **kwargs) -> HudiTable:
    options = kwargs.pop("options", {})
    return HudiTable.create(
        str(tmp_path / "t"),
        name="t",
        record_key_fields=kwargs.pop("record_key_fields", ["uuid"]),
        partition_fields=kwargs.pop("partition_fields", ["city"]),
        precombine_field=kwargs.pop("precombine_field", "ts"),
        options=options,
        **kwargs,
    )


def _batch(keys: list[str], ts: list[int], fare: list[float], city: str = "sf") -> pa.Table:
    return pa.table({"uuid": keys, "city": [city] * len(keys), "ts": ts, "fare": fare})


def _commit_metadata(table: HudiTable, instant: str) -> dict:
    completed = next(i for i in table.timeline() if i.timestamp == instant)
    return json.loads((Path(table.storage.base_path) / ".hoodie" / completed.file_name).read_text())


def _stats(metadata: dict) -> list[dict]:
    return [s for stats in metadata["partitionToWriteStats"].values() for s in stats]


def _by_key(table: pa.Table, column: str) -> dict:
    return dict(zip(table["uuid"].to_pylist(), table[column].to_pylist(), strict=True))


def test_bulk_insert_sorts_by_partition_then_key_and_rolls_files_at_the_max_size(tmp_path):
    table = _table(
        tmp_path,
        options={
            "hoodie.index.bloom.num_entries": "100",
            "hoodie.bloom.index.filter.dynamic.max.entries": "400",
        },
    )
    keys = [f"k{i:05d}" for i in range(6000)][::-1]
    batch = pa.table(
        {
            "uuid": keys,
            "city": [["sf", "la"][i % 2] for i in range(6000)],
            "ts": list(range(6000)),
            "fare": pc.random(6000),  # incompressible, so the files do reach the max size
        }
    )
    instant = table.write(
        batch,
        operation="bulk_insert",
        options={
            "hoodie.parquet.max.file.size": "12000",
            "hoodie.copyonwrite.record.size.estimate": "10",
            "hoodie.bulkinsert.sort.mode": "GLOBAL_SORT",  # the default, NONE, keeps input order
        },
    )
    stats = _stats(_commit_metadata(table, instant))
    per_partition = {p: [s for s in stats if s["partitionPath"] == p] for p in ("sf", "la")}
    assert all(len(files) > 2 for files in per_partition.values())
    for stat in stats:
        data = pq.read_table(Path(table.storage.base_path) / stat["path"])
        keys_in_file = data["_hoodie_record_key"].to_pylist()
        assert keys_in_file == sorted(keys_in_file)
        assert set(data["_hoodie_partition_path"].to_pylist()) == {stat["partitionPath"]}
        assert stat["numWrites"] == stat["numInserts"] == data.num_rows
    assert sum(s["numWrites"] for s in stats) == 6000
    assert table.read().num_rows == 6000


def test_upsert_keeps_the_largest_precombine_value_within_a_batch(tmp_path):
    table = _table(tmp_path)
    table.write(_batch(["a", "a", "a", "b", "b"], [3, 5, 4, 1, 1], [1.0, 2.0, 3.0, 4.0, 5.0]))
    fares = _by_key(table.read(), "fare")
    assert fares == {"a": 2.0, "b": 5.0}  # largest ts wins; on a tie the later row


def test_upsert_updates_in_place_and_records_write_stats(tmp_path):
    table = _table(tmp_path)
    first = table.write(_batch(["a", "b", "c"], [1, 1, 1], [1.0, 2.0, 3.0]))
    second = table.write(_batch(["b", "d"], [2, 2], [20.0, 40.0]))
    latest = table.read()
    assert _by_key(latest, "fare") == {"a": 1.0, "b": 20.0, "c": 3.0, "d": 40.0}
    assert _by_key(latest, "_hoodie_commit_time") == {
        "a": first,
        "b": second,
        "c": first,
        "d": second,
    }
    (stat,) = _stats(_commit_metadata(table, second))
    assert (stat["numWrites"], stat["numUpdateWrites"], stat["numInserts"]) == (4, 1, 1)
    assert stat["prevCommit"] == first
    data = pq.read_table(Path(table.storage.base_path) / stat["path"])
    assert data["_hoodie_record_key"].to_pylist() == ["a", "b", "c", "d"]  # stored order kept
    assert data["_hoodie_commit_seqno"].to_pylist() == [
        f"{first}_0_0",
        f"{second}_0_1",
        f"{first}_0_2",
        f"{second}_0_3",
    ]
    assert set(data["_hoodie_file_name"].to_pylist()) == {Path(stat["path"]).name}


def test_default_payload_keeps_newer_stored_records_from_late_data(tmp_path):
    table = _table(
        tmp_path,
        options={"hoodie.datasource.write.payload.class": DEFAULT_PAYLOAD},
    )
    table.write(_batch(["a", "b"], [10, 10], [1.0, 2.0]))
    table.write(_batch(["a", "b"], [5, 11], [100.0, 200.0]))
    assert _by_key(table.read(), "fare") == {"a": 1.0, "b": 200.0}


def test_overwrite_with_latest_payload_lets_the_latest_write_win(tmp_path):
    table = _table(tmp_path)
    table.write(_batch(["a"], [10], [1.0]))
    table.write(_batch(["a"], [5], [100.0]))
    assert _by_key(table.read(), "fare") == {"a": 100.0}


def test_delete_by_operation_and_by_is_deleted_column(tmp_path):
    table = _table(tmp_path)
    table.write(_batch(["a", "b", "c", "d"], [1] * 4, [1.0, 2.0, 3.0, 4.0]))
    deleted = table.write(pa.table({"uuid": ["a", "zz"], "city": ["sf", "sf"]}), operation="delete")
    assert sorted(table.read()["uuid"].to_pylist()) == ["b", "c", "d"]
    assert sum(s["numDeletes"] for s in _stats(_commit_metadata(table, deleted))) == 1
    flagged = _batch(["b", "c", "e"], [2, 2, 2], [0.0, 30.0, 50.0]).append_column(
        "_hoodie_is_deleted", pa.array([True, False, True])
    )
    table.write(flagged)
    assert _by_key(table.read(), "fare") == {"c": 30.0, "d": 4.0}


def test_insert_into_small_files_then_new_file_groups(tmp_path):
    table = _table(tmp_path, options={"hoodie.index.bloom.num_entries": "100"})
    options = {"hoodie.parquet.max.file.size": "100000", "hoodie.parquet.small.file.limit": "50000"}
    first = table.write(datagen.trips(list(range(40)), seed=1, ts=1), "insert", options)
    second = table.write(datagen.trips(list(range(40, 80)), seed=2, ts=1), "insert", options)
    stats = _stats(_commit_metadata(table, second))
    assert stats and all(s["prevCommit"] == first for s in stats)  # topped up, not new
    assert table.read().num_rows == 80
    tiny = {
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.copyonwrite.insert.split.size": "5",
        "hoodie.copyonwrite.insert.auto.split": "false",
    }
    third = table.write(datagen.trips(list(range(80, 120)), seed=3, ts=1), "insert", tiny)
    stats = _stats(_commit_metadata(table, third))
    assert len(stats) == 8 and all(
        s["prevCommit"] == "null" and s["numInserts"] == 5 for s in stats
    )


def test_insert_keeps_duplicates_unless_asked_to_drop_them(tmp_path):
    table = _table(tmp_path)
    table.write(_batch(["a", "b"], [1, 1], [1.0, 2.0]), "insert")
    table.write(_batch(["a"], [2], [10.0]), "insert")
    assert sorted(table.read()["uuid"].to_pylist()) == ["a", "a", "b"]
    table.write(
        _batch(["b", "c"], [3, 3], [20.0, 30.0]),
        "insert",
        {"hoodie.datasource.write.insert.drop.duplicates": "true"},
    )
    assert sorted(table.read()["uuid"].to_pylist()) == ["a", "a", "b", "c"]
    assert _by_key(table.read().filter(pc.equal(table.read()["uuid"], "b")), "fare") == {"b": 2.0}


def test_insert_overwrite_replaces_the_touched_partitions_only(tmp_path):
    table = _table(tmp_path)
    table.write(_batch(["a", "b"], [1, 1], [1.0, 2.0], city="sf"), "bulk_insert")
    table.write(_batch(["c"], [1], [3.0], city="la"), "bulk_insert")
    instant = table.write(_batch(["x"], [1], [9.0], city="sf"), "insert_overwrite")
    assert sorted(table.read()["uuid"].to_pylist()) == ["c", "x"]
    replace = next(i for i in table.timeline() if i.timestamp == instant)
    assert replace.action == "replacecommit"
    metadata = _commit_metadata(table, instant)
    assert list(metadata["partitionToReplaceFileIds"]) == ["sf"]
    requested = Path(table.storage.base_path) / ".hoodie" / f"{instant}.replacecommit.requested"
    assert avro_metadata.deserialize(requested.read_bytes())["clusteringPlan"] is None
    oracle.assert_same_table(table.read(), oracle.snapshot(table.storage.base_path))


def test_insert_overwrite_table_replaces_every_partition(tmp_path):
    table = _table(tmp_path)
    table.write(_batch(["a"], [1], [1.0], city="sf"))
    table.write(_batch(["c"], [1], [3.0], city="la"))
    instant = table.write(_batch(["x"], [1], [9.0], city="ny"), "insert_overwrite_table")
    assert table.read()["uuid"].to_pylist() == ["x"]
    assert sorted(_commit_metadata(table, instant)["partitionToReplaceFileIds"]) == ["la", "sf"]


def test_delete_partition_replaces_the_named_partitions(tmp_path):
    table = _table(tmp_path)
    table.write(_batch(["a"], [1], [1.0], city="sf"))
    table.write(_batch(["c"], [1], [3.0], city="la"))
    table.write(
        pa.table({"uuid": pa.array([], pa.string())}),
        "delete_partition",
        {"hoodie.datasource.write.partitions.to.delete": "la"},
    )
    assert table.read()["uuid"].to_pylist() == ["a"]


def test_bloom_index_tags_like_the_simple_index(tmp_path):
    results = []
    for index in ("SIMPLE", "BLOOM"):
        table = _table(tmp_path / index, options={"hoodie.index.type": index})
        table.write(datagen.trips(list(range(300)), seed=1, ts=1), "bulk_insert")
        table.write(datagen.trips(list(range(0, 600, 3)), seed=2, ts=2), "upsert")
        results.append(
            table.read().drop_columns(
                ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name"]
            )
        )
    assert oracle.sorted_rows(results[0]) == oracle.sorted_rows(results[1])
    assert results[1].num_rows == 400


def test_base_files_carry_the_footer_apache_hudi_writes(tmp_path):
    table = _table(tmp_path)
    table.write(_batch(["b", "a", "c"], [1, 1, 1], [1.0, 2.0, 3.0]))
    (path,) = Path(table.storage.base_path, "sf").glob("*.parquet")
    footer = pq.read_metadata(path).metadata
    assert json.loads(footer[b"parquet.avro.schema"])["fields"][0]["name"] == "_hoodie_commit_time"
    assert (footer[b"hoodie_min_record_key"], footer[b"hoodie_max_record_key"]) == (b"a", b"c")
    assert footer[b"hoodie_bloom_filter_type_code"] == b"DYNAMIC_V0"
    assert bloom_filter_from_footer(footer).might_contain(pa.array(["a", "b", "c"])).all()
    assert b"ARROW:schema" not in footer
    partition_meta = (
        Path(table.storage.base_path) / "sf" / ".hoodie_partition_metadata"
    ).read_text()
    assert "partitionDepth=1" in partition_meta
    assert not any((Path(table.storage.base_path) / ".hoodie" / ".temp").iterdir())  # markers gone


def test_empty_batch_commits_unless_empty_commits_are_off(tmp_path):
    table = _table(tmp_path)
    empty = _batch([], [], [])
    assert table.write(empty) is not None
    assert table.write(empty, options={"hoodie.allow.empty.commit": "false"}) is None
    assert len(table.timeline()) == 1


def test_write_options_cannot_redefine_the_table(tmp_path):
    from hudi_core import InvalidOptionError

    table = _table(tmp_path)
    with pytest.raises(InvalidOptionError, match="conflicts with the table"):
        table.write(
            _batch(["a"], [1], [1.0]), options={"hoodie.datasource.write.recordkey.field": "city"}
        )
    with pytest.raises(InvalidOptionError, match="hive_style"):
        table.write(
            _batch(["a"], [1], [1.0]),
            options={"hoodie.datasource.write.hive_style_partitioning": "true"},
        )
    assert table.timeline() == []


def test_pandas_dataframes_are_accepted(tmp_path):
    table = _table(tmp_path)
    table.write(_batch(["a", "b"], [1, 1], [1.0, 2.0]).to_pandas())
    assert table.read().num_rows == 2


def test_a_merged_file_bloom_filter_equals_one_built_from_its_keys(tmp_path):
    # Merges extend the stored filter with the inserted keys instead of rehashing every key;
    # the result must be exactly the filter of the new file's keys, in file order.
    from hudi_core.io.bloom_filter import new_bloom_filter

    options = {
        "hoodie.index.bloom.num_entries": "100",
        "hoodie.bloom.index.filter.dynamic.max.entries": "1000",
    }
    table = _table(tmp_path, options=options)
    table.write(datagen.trips(list(range(0, 400, 2)), seed=1, ts=1), "bulk_insert")
    instant = table.write(datagen.trips(list(range(0, 500, 5)), seed=2, ts=2), "upsert")
    merged = [s for s in _stats(_commit_metadata(table, instant)) if s["prevCommit"] != "null"]
    assert merged and all(stat["numInserts"] > 0 for stat in merged)
    for stat in merged:
        file = pq.ParquetFile(Path(table.storage.base_path) / stat["path"])
        keys = file.read(columns=["_hoodie_record_key"]).column(0)
        rebuilt = new_bloom_filter("DYNAMIC_V0", 100, 1e-9, 1000)
        rebuilt.add_keys(keys)
        stored = bloom_filter_from_footer(file.metadata.metadata)
        assert stored.serialize() == rebuilt.serialize()


def test_bulk_insert_without_sorting_keeps_input_order_within_a_partition(tmp_path):
    table = _table(tmp_path)
    keys = ["m", "c", "x", "a"]
    instant = table.write(
        _batch(keys, [1] * 4, [1.0] * 4),
        "bulk_insert",
        {"hoodie.bulkinsert.sort.mode": "NONE"},
    )
    (stat,) = _stats(_commit_metadata(table, instant))
    written = pq.read_table(Path(table.storage.base_path) / stat["path"])
    assert written["uuid"].to_pylist() == keys


def test_a_delete_before_any_write_commits_and_deletes_nothing(tmp_path):
    table = _table(tmp_path)
    instant = table.write(pa.table({"uuid": ["key-000001"], "city": ["x"]}), operation="delete")
    assert instant is not None and table.read().num_rows == 0
    table.write(datagen.trips([1, 2], seed=1, ts=1))
    table.write(pa.table({"uuid": ["key-000001"], "city": [datagen.CITIES[1]]}), "delete")
    assert table.read(columns=["uuid"])["uuid"].to_pylist() == ["key-000002"]
