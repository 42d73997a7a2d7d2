"""Bucket-indexed tables: every key in the file group of its bucket (Apache Hudi's hash,
checked against the Java reference of tests/unit/test_bucket_id.py), one file group per
bucket, and reads through hudi-rs equal ours across seven commits and the services."""

from __future__ import annotations

import itertools
from collections import defaultdict

import pyarrow as pa
import pytest

from hudi_core import HudiTable
from hudi_core.merge.record_merger import DEFAULT_PAYLOAD
from hudi_core.model.file_names import BaseFileName, LogFileName
from tests import datagen, oracle
from tests.interop.test_mor_written_here import _trips, _write_history
from tests.tables import data_files
from tests.unit.test_bucket_id import java_bucket

BUCKETS = 4
BUCKET_OPTIONS = {
    "hoodie.index.type": "BUCKET",
    "hoodie.bucket.index.num.buckets": str(BUCKETS),
    "hoodie.datasource.write.payload.class": DEFAULT_PAYLOAD,  # late events lose
    "hoodie.cleaner.commits.retained": "2",
    "hoodie.keep.min.commits": "3",
    "hoodie.keep.max.commits": "4",
}


def _file_id(name: str) -> str:
    if name.startswith("."):
        return LogFileName.parse(name).file_id
    return BaseFileName.parse(name).file_id


def file_groups(path: str) -> dict[tuple[str, str], set[str]]:
    """(partition, 8-digit bucket prefix) -> the file ids of the data files there."""
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    for relative in data_files(path):
        partition, _, name = relative.rpartition("/")
        file_id = _file_id(name)
        found[(partition, file_id[:8])].add(file_id)
    return found


def assert_bucket_layout(table: HudiTable, path: str) -> None:
    """Every file id starts with a bucket number, one file group per bucket, and every key
    read lies in the file group of its bucket as Java computes it."""
    groups = file_groups(path)
    assert groups, "the table has data files"
    for (partition, prefix), file_ids in groups.items():
        assert prefix.isdigit() and int(prefix) < BUCKETS, f"{partition}/{file_ids}"
        assert len(file_ids) == 1, f"bucket {prefix} of {partition} has {sorted(file_ids)}"
    rows = table.read(columns=["_hoodie_record_key", "_hoodie_file_name"]).to_pylist()
    for row in rows:
        bucket = java_bucket(row["_hoodie_record_key"], ["uuid"], BUCKETS)
        assert row["_hoodie_file_name"].lstrip(".").startswith(f"{bucket:08d}-"), row


@pytest.fixture(scope="module", params=["COPY_ON_WRITE", "MERGE_ON_READ"])
def written(request, tmp_path_factory):
    path = str(tmp_path_factory.mktemp(request.param) / "trips")
    table = HudiTable.create(
        path,
        name="trips",
        table_type=request.param,
        record_key_fields=["uuid"],
        partition_fields=["city"],
        precombine_field="ts",
        options=BUCKET_OPTIONS,
    )
    return path, table, _write_history(table)


def test_seven_commits_keep_every_key_in_its_bucket(written):
    path, table, instants = written
    assert len(instants) == 7
    assert_bucket_layout(table, path)
    properties = table.config.properties
    assert properties["hoodie.bucket.index.num.buckets"] == str(BUCKETS)
    assert properties["hoodie.index.type"] == "BUCKET"
    ts = {r["uuid"]: r["ts"] for r in table.read(columns=["uuid", "ts"]).to_pylist()}
    assert ts["key-000024"] == 6  # the late event (ts 1) lost to the stored ts 6
    if table.table_type == "MERGE_ON_READ":
        logs = [f for f in data_files(path) if ".log." in f]
        assert logs, "inserts and updates into existing buckets go to log files"


def test_reads_match_hudi_rs(written):
    path, table, instants = written
    label = f"bucket {table.table_type}"
    oracle.assert_same_table(table.read(), oracle.snapshot(path), label)
    optimized = oracle.snapshot(path, hudi_options={"hoodie.read.use.read_optimized.mode": "true"})
    oracle.assert_same_table(table.read(query_type="read_optimized"), optimized, label)
    oracle.assert_time_travel_matches(table, path, instants, label)
    oracle.assert_incrementals_match(table, path, instants, label)


def test_compaction_clean_and_archive_keep_the_buckets(tmp_path):
    path = str(tmp_path / "trips")
    table = HudiTable.create(
        path,
        name="trips",
        table_type="MERGE_ON_READ",
        record_key_fields=["uuid"],
        partition_fields=["city"],
        precombine_field="ts",
        options=BUCKET_OPTIONS,
    )
    _write_history(table)
    before = table.read().drop_columns(["_hoodie_file_name"])  # compaction renames them
    planned = table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": "1"})
    assert planned is not None and table.compaction.run() == planned
    oracle.assert_same_table(table.read().drop_columns(["_hoodie_file_name"]), before, "compacted")
    oracle.assert_same_table(table.read(), oracle.snapshot(path), "compacted, hudi-rs")
    for seed in (8, 9):
        table.write(_trips(list(range(0, 500, seed)), seed=seed, ts=20 + seed))
    assert table.clean() is not None, "the compacted slices' predecessors are cleaned"
    assert table.archive(), "the history is longer than hoodie.keep.max.commits"
    assert_bucket_layout(table, path)
    oracle.assert_same_table(table.read(), oracle.snapshot(path), "cleaned and archived")


def test_a_table_laid_out_by_apache_hudis_file_id_rule_is_written_in_place(tmp_path, monkeypatch):
    """The table is laid out without our bucket index: each (partition, bucket) of keys is
    inserted as one new file group named as Apache Hudi names a bucket's (the bucket number,
    by the Java reference, over a file id's first 8 characters), and hoodie.properties records
    no bucket settings. Upserts with the bucket index then go to those very file groups."""
    path = str(tmp_path / "trips")
    table = HudiTable.create(
        path,
        "trips",
        "MERGE_ON_READ",
        ["uuid"],
        ["city"],
        "ts",
        {"hoodie.parquet.small.file.limit": "0"},
    )
    batch = datagen.trips(list(range(200)), seed=1, ts=1)
    keyed: dict[tuple[str, int], list[int]] = defaultdict(list)
    for row, (key, city) in enumerate(
        zip(batch["uuid"].to_pylist(), batch["city"].to_pylist(), strict=True)
    ):
        keyed[(city, java_bucket(key, ["uuid"], BUCKETS))].append(row)
    serial = itertools.count()
    for (_city, bucket), rows in sorted(keyed.items()):
        named = f"{bucket:08d}-{next(serial):04d}-4000-8000-000000000000-0"
        monkeypatch.setattr("hudi_core.write.bucket_assigner.new_file_id", lambda _n, f=named: f)
        table.write(batch.take(pa.array(rows)), operation="insert")
    monkeypatch.undo()
    laid_out = file_groups(path)
    assert "hoodie.bucket.index.num.buckets" not in table.config.properties

    options = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": str(BUCKETS)}
    table.write(datagen.trips(list(range(0, 260, 2)), seed=2, ts=2), options=options)
    assert_bucket_layout(table, path)
    after = file_groups(path)
    assert all(after[group] == file_ids for group, file_ids in laid_out.items())
    oracle.assert_same_table(table.read(), oracle.snapshot(path), "written in place")


def test_a_write_with_another_bucket_count_or_index_fails_clearly(tmp_path):
    path = str(tmp_path / "trips")
    table = HudiTable.create(
        path, "trips", "COPY_ON_WRITE", ["uuid"], ["city"], "ts", BUCKET_OPTIONS
    )
    table.write(datagen.trips(list(range(20)), seed=1, ts=1))
    timeline = table.timeline()
    for wrong in ({"hoodie.bucket.index.num.buckets": "8"}, {"hoodie.index.type": "SIMPLE"}):
        with pytest.raises(Exception, match="conflicts with the table's") as raised:
            table.write(datagen.trips([1], seed=2, ts=2), options=wrong)
        assert type(raised.value).__name__ == "InvalidOptionError"
    with pytest.raises(Exception, match="hoodie.bucket.index.hash.field=city"):
        HudiTable.create(
            str(tmp_path / "t2"),
            "t2",
            "COPY_ON_WRITE",
            ["uuid"],
            ["city"],
            "ts",
            {**BUCKET_OPTIONS, "hoodie.bucket.index.hash.field": "city"},
        )
    assert table.timeline() == timeline


def test_a_simple_indexed_table_is_no_bucket_table(tmp_path):
    """Writing with the bucket index into file groups another index made fails: their keys
    are not where the buckets would look. Nothing is committed."""
    path = str(tmp_path / "trips")
    table = HudiTable.create(path, "trips", "COPY_ON_WRITE", ["uuid"], ["city"], "ts")
    table.write(datagen.trips(list(range(20)), seed=1, ts=1))
    before, files = table.read(), data_files(path)
    options = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4"}
    with pytest.raises(Exception, match="is not one of 4 buckets"):
        table.write(datagen.trips([1], seed=2, ts=2), options=options)
    oracle.assert_same_table(table.read(), before, "after the refused write")
    assert data_files(path) == files
