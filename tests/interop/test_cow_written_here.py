"""Us -> Apache Hudi: copy-on-write tables written here read the same through hudi-rs and us.

Each layout gets seven commits mixing bulk_insert, insert, upsert, delete (by operation and by
`_hoodie_is_deleted`), insert_overwrite and a schema evolution; after them, snapshot, time travel
to every commit and incremental reads between commits must agree row for row.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hudi_core import HudiTable
from tests import datagen, oracle

# Small limits, and bloom filters small enough not to dominate the file size.
TIMESTAMP_KEYGEN = "org.apache.hudi.keygen.TimestampBasedKeyGenerator"
SMALL_FILES = {
    "hoodie.parquet.max.file.size": "40000",
    "hoodie.parquet.small.file.limit": "30000",
    "hoodie.index.bloom.num_entries": "500",
    "hoodie.bloom.index.filter.dynamic.max.entries": "2000",
}
LAYOUTS = {
    "simple": (["city"], {}),
    "hive_style_urlencoded": (
        ["city"],
        {
            "hoodie.datasource.write.hive_style_partitioning": "true",
            "hoodie.datasource.write.partitionpath.urlencode": "true",
        },
    ),
    "two_fields_bloom_index": (["region", "city"], {"hoodie.index.type": "BLOOM"}),
    "timestamp_based": (
        ["event_time"],
        {
            "hoodie.datasource.write.keygenerator.class": TIMESTAMP_KEYGEN,
            "hoodie.keygen.timebased.timestamp.type": "EPOCHMICROSECONDS",
            "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
        },
    ),
    "non_partitioned": ([], {}),
    "no_meta_fields": (["city"], {"hoodie.populate.meta.fields": "false"}),
    "small_files_rolled": (["city"], SMALL_FILES),
}


def _write_history(table: HudiTable, layout_options: dict[str, str]) -> list[str]:
    # Later batches lack `_hoodie_is_deleted`, which a flagged batch added to the schema.
    options = {**layout_options, "hoodie.write.set.null.for.missing.columns": "true"}
    instants = []

    def write(batch: pa.Table, operation: str) -> None:
        instants.append(table.write(batch, operation=operation, options=options))

    write(datagen.trips(list(range(0, 400)), seed=1, ts=1), "bulk_insert")
    write(datagen.trips(list(range(400, 500)), seed=2, ts=1), "insert")
    write(datagen.trips(list(range(0, 400, 5)) + list(range(500, 530)), seed=3, ts=2), "upsert")
    deletes = datagen.trips(list(range(1, 400, 13)), seed=4, ts=3).select(
        ["uuid", "city", "region", "event_time"]
    )
    write(deletes, "delete")
    flagged = datagen.trips(list(range(2, 60, 3)), seed=5, ts=4)
    deleted = pa.array([i % 2 == 0 for i in range(flagged.num_rows)])  # keys 2, 8, 14, ...
    flagged = flagged.append_column("_hoodie_is_deleted", deleted)
    write(flagged, "upsert")
    write(
        datagen.trips(list(range(1000, 1040, 4)), seed=6, ts=5, cities=["chennai"]),
        "insert_overwrite",
    )
    evolved = datagen.trips(list(range(10, 200, 7)), seed=7, ts=6)
    evolved = evolved.append_column("rating", pa.array(range(evolved.num_rows), pa.int64()))
    write(evolved, "upsert")
    return instants


@pytest.fixture(scope="module", params=sorted(LAYOUTS))
def written_table(request, tmp_path_factory):
    partition_fields, options = LAYOUTS[request.param]
    path = str(tmp_path_factory.mktemp(request.param) / "trips")
    table = HudiTable.create(
        path,
        name="trips",
        record_key_fields=["uuid"],
        partition_fields=partition_fields,
        precombine_field="ts",
        options=options,
    )
    return request.param, path, table, _write_history(table, options)


def test_snapshot_matches_hudi_rs(written_table):
    layout, path, table, _ = written_table
    ours = table.read()
    assert "rating" in ours.column_names and ours.num_rows > 30
    oracle.assert_same_table(ours, oracle.snapshot(path), layout)


def test_time_travel_to_every_commit_matches_hudi_rs(written_table):
    layout, path, table, instants = written_table
    oracle.assert_time_travel_matches(table, path, instants, layout)


def test_incremental_reads_match_hudi_rs(written_table):
    layout, path, table, instants = written_table
    oracle.assert_incrementals_match(table, path, instants, layout)
    whole = table.read(query_type="incremental", begin=instants[1], end=instants[-1])
    oracle.assert_same_table(whole, oracle.incremental(path, instants[1], instants[-1]), layout)


def test_partition_filter_and_projection_match_hudi_rs(written_table):
    layout, path, table, _ = written_table
    if layout in ("timestamp_based", "non_partitioned"):
        filters = [("passengers", ">=", "3")]
    else:
        filters = [("city", "=", "chennai"), ("passengers", ">=", "3")]
    ours = table.read(filters=filters)
    assert ours.num_rows > 0
    oracle.assert_same_table(ours, oracle.snapshot(path, filters=filters), layout)
    projected = table.read(columns=["uuid", "fare"], filters=filters)
    assert projected.column_names == ["uuid", "fare"]
    assert oracle.sorted_rows(projected) == oracle.sorted_rows(ours.select(["uuid", "fare"]))


def test_history_has_the_expected_effects(written_table):
    layout, _, table, instants = written_table
    at_flagged_upsert = set(table.read(as_of=instants[4]).column("uuid").to_pylist())
    assert "key-000001" not in at_flagged_upsert  # deleted by operation
    assert "key-000002" not in at_flagged_upsert  # deleted by _hoodie_is_deleted
    assert "key-000005" in at_flagged_upsert  # flagged false: updated
    latest = table.read()
    keys = set(latest.column("uuid").to_pylist())
    assert "key-001000" in keys  # written by insert_overwrite
    if layout in ("non_partitioned", "timestamp_based"):  # the overwrite replaced every old row
        older = {k for k in keys if k < "key-001000"}
        assert older == {f"key-{k:06d}" for k in range(10, 200, 7)}  # the later upsert's
    assert len(keys) == latest.num_rows  # no duplicate keys
    if layout != "no_meta_fields":
        rated = latest.filter(pc.is_valid(latest.column("rating")))
        assert set(rated.column("_hoodie_commit_time").to_pylist()) == {instants[-1]}
    else:
        assert not any(name.startswith("_hoodie_c") for name in latest.column_names)
    actions = [(i.action, i.state.value) for i in table.timeline()]
    assert ("replacecommit", "COMPLETED") in actions
