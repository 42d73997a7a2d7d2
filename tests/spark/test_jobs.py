"""The spark-submit entry points (spark_jobs/*.py) run end to end on local[2]: ingestion of
source drops in every format, compaction, clean, archive, rollback, savepoint and restore.
After every step the table's snapshot (ours and hudi-rs's) equals a plain model of the
expected rows, and each job's result line says what it did.

Jobs run in-process through cli.run, as their `__main__` does (the session fixture's
SparkSession is the one their getOrCreate finds); one test runs a job through a real
spark-submit. Writes through Spark cost seconds each, so tables stay small (two partitions)
and data a test only needs as a starting point is written with hudi_core directly.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from jproperties import Properties

from hudi_core import HudiTable
from hudi_core.model.commit_metadata import CommitMetadata
from hudi_core.schema.meta_fields import is_meta_field
from hudi_core.timeline import ActiveTimeline
from spark_jobs import (
    archive,
    clean,
    cli,
    cluster,
    compact,
    ingest,
    restore,
    rollback,
    savepoint,
)
from tests import datagen, oracle

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
IS_DELETED = "_hoodie_is_deleted"
CITIES = ["san_francisco", "chennai"]  # two partitions: fewer Spark tasks per write
EPOCH = 1_700_000_000  # source files get mtimes from here on (seconds), in order of arrival
TABLE_FLAGS = ["--record-key-field", "uuid", "--partition-path-field", "city"]
MOR_FLAGS = ["--table-type", "MERGE_ON_READ", *TABLE_FLAGS, "--precombine-field", "ts"]
# Updates go to log files, and two delta commits make a compaction due.
MOR_CONF = ["hoodie.parquet.small.file.limit=0", "hoodie.compact.inline.max.delta.commits=2"]
ALL_JOBS = (ingest, compact, cluster, clean, archive, rollback, savepoint, restore)


# ---- running jobs


def run_job(capsys, module, *argv) -> tuple[int, dict]:
    """Runs a job as its __main__ does (cli.run): the exit code and the last stdout line."""
    capsys.readouterr()
    code = cli.run(module.JOB, module.main, [str(arg) for arg in argv])
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    return code, json.loads(lines[-1])


def succeeded(capsys, module, *argv) -> dict:
    code, line = run_job(capsys, module, *argv)
    assert code == 0, line
    assert line["status"] == "SUCCEEDED" and line["job"] == module.JOB, line
    return line


def test_a_job_also_writes_its_result_line_to_the_result_file(capsys, tmp_path):
    result_file = tmp_path / "result.json"
    code, line = run_job(
        capsys, clean, "--base-path", tmp_path / "none", "--result-file", result_file
    )
    assert code == 1 and line["status"] == "FAILED"
    assert json.loads(result_file.read_text()) == line


def failed(capsys, module, *argv) -> str:
    """The error of a job that must fail: exit code 1 and a FAILED result line."""
    code, line = run_job(capsys, module, *argv)
    assert code == 1, line
    assert line["status"] == "FAILED" and line["job"] == module.JOB, line
    return line["error"]


def conf(*pairs: str) -> list[str]:
    return [arg for pair in pairs for arg in ("--hoodie-conf", pair)]


# ---- source drops


def place(folder: Path, name: str, rows: pa.Table, at: float | None) -> Path:
    """A parquet source file, modified `at` seconds after EPOCH (None: now)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    pq.write_table(rows, path)
    if at is not None:
        touch(path, at)
    return path


def touch(path: Path, at: float) -> None:
    ns = (EPOCH * 10**9) + round(at * 10**9)  # exact: a float of the sum would not be
    os.utime(path, ns=(ns, ns))


def mtime_ms(path: Path) -> str:
    return str(path.stat().st_mtime_ns // 1_000_000)


def trips(keys, seed: int, deleted=()) -> pa.Table:
    """datagen trips (ts = seed, so later drops win) with a `_hoodie_is_deleted` column."""
    rows = datagen.trips(list(keys), seed=seed, ts=seed, cities=CITIES)
    return rows.append_column(IS_DELETED, pa.array([k in deleted for k in keys]))


def plain(keys, seed: int) -> pa.Table:
    """Small rows for tests about which files are read, not about types."""
    keys = list(keys)
    return pa.table(
        {
            "uuid": [f"key-{k:06d}" for k in keys],
            "ts": pa.array([seed] * len(keys), pa.int64()),
            "value": [f"v{seed}-{k}" for k in keys],
        }
    )


# ---- expected rows

TRIPS_SCHEMA = datagen.SCHEMA.append(pa.field(IS_DELETED, pa.bool_()))


class Model:
    """Expected rows by key (the latest ts wins; a flagged row deletes its key)."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.rows: dict[str, dict] = {}

    def apply(self, batch: pa.Table) -> dict[str, dict]:
        """Applies a batch; returns the rows before it (to go back to on a rollback)."""
        before = dict(self.rows)
        for row in batch.to_pylist():
            known = self.rows.get(row["uuid"])
            if known is not None and row["ts"] < known["ts"]:
                continue
            if row.get(IS_DELETED):
                self.rows.pop(row["uuid"], None)
            else:
                self.rows[row["uuid"]] = row
        return before

    def sorted_rows(self) -> list[dict]:
        return oracle.sorted_rows(pa.Table.from_pylist(list(self.rows.values()), self.schema))


def data_rows(table: pa.Table) -> list[dict]:
    return oracle.sorted_rows(table.select([n for n in table.column_names if not is_meta_field(n)]))


def check(path: str, model: Model, step: str, hudi_rs: bool = True) -> None:
    """Our snapshot equals the model and (unless a compaction is pending, whose file groups'
    new log files hudi-rs 0.5 leaves out) hudi-rs's snapshot."""
    ours = HudiTable.open(path).read()
    assert data_rows(ours) == model.sorted_rows(), f"{step}: snapshot differs from the model"
    if hudi_rs:
        oracle.assert_same_table(ours, oracle.snapshot(path), f"{step}: hudi-rs snapshot")


# ---- the table on disk


def local_mor_table(path: str) -> HudiTable:
    """A merge-on-read trips table written through hudi_core (no Spark): for tests whose
    jobs under test are the services, not ingestion. Updates go to log files."""
    options = {"hoodie.parquet.small.file.limit": "0"}
    return HudiTable.create(
        path, "trips", "MERGE_ON_READ", ["uuid"], ["city"], "ts", options=options
    )


def timeline(path: str) -> ActiveTimeline:
    return ActiveTimeline.load(HudiTable.open(path).storage)


def instants(path: str) -> list[tuple[str, str, str]]:
    return [(i.timestamp, i.action, i.state.value) for i in timeline(path).instants]


def checkpoint_of(path: str, instant_time: str) -> str:
    active = timeline(path)
    metadata = CommitMetadata.from_json_bytes(active.read_bytes(active.find(instant_time)))
    return metadata.extra_metadata[ingest.CHECKPOINT_KEY]


def log_files(path: str) -> list[Path]:
    return [p for p in Path(path).rglob(".*.log.*") if ".hoodie" not in p.parts]


def groups_with_logs(path: str) -> set[tuple[str, str]]:
    """(partition, file id) of every file group with log files (.<fileId>_<base>.log.*)."""
    return {(log.parent.name, log.name[1:].split("_")[0]) for log in log_files(path)}


def data_files(path: str) -> set[Path]:
    return set(Path(path).rglob("*.parquet")) | set(log_files(path))


def table_properties(path: str) -> dict[str, str]:
    properties = Properties()
    with open(Path(path) / ".hoodie" / "hoodie.properties", "rb") as handle:
        properties.load(handle, "utf-8")
    return {key: value.data for key, value in properties.items()}


# ---- acceptance: the main flow


def test_ingest_compact_clean_archive_rollback_keep_a_merge_on_read_table_right(
    spark, tmp_path, capsys
):
    path, source = str(tmp_path / "trips"), tmp_path / "landing"
    model = Model(TRIPS_SCHEMA)
    args = ["--base-path", path, "--source-path", source, "--source-format", "parquet"]
    args += conf(*MOR_CONF)
    drops = [
        (trips(range(0, 40), 1), {"inserts": 40, "updates": 0, "deletes": 0}),
        (trips(range(20, 60), 2), {"inserts": 20, "updates": 20, "deletes": 0}),
        (
            trips([*range(50, 75), *range(0, 8)], 3, deleted=range(0, 8)),
            {"inserts": 15, "updates": 10, "deletes": 8},
        ),
    ]
    commits = []
    for number, (drop, counts) in enumerate(drops, 1):
        placed = place(source, f"drop-{number}.parquet", drop, at=number)
        create = ["--table-name", "trips", *MOR_FLAGS] if number == 1 else []
        line = succeeded(capsys, ingest, *args, *create)
        assert (line["action"], line["state"]) == ("deltacommit", "COMPLETED")
        assert {k: line["counts"][k] for k in counts} == counts, f"drop {number}"
        assert line["counts"]["rows_written"] == counts["inserts"] + counts["updates"]
        assert (line["counts"]["files"], line["counts"]["rounds"]) == (1, 1)
        assert line["counts"]["checkpoint"] == mtime_ms(placed)
        assert checkpoint_of(path, line["instant_time"]) == mtime_ms(placed)
        commits.append(line["instant_time"])
        model.apply(drop)
        check(path, model, f"drop {number}")
    assert commits == sorted(set(commits)) and len(commits) == 3

    before = instants(path)
    line = succeeded(capsys, ingest, *args)
    assert (line["instant_time"], line["action"], line["state"]) == (None, None, "NOTHING_TO_DO")
    last = mtime_ms(source / "drop-3.parquet")
    assert line["counts"] == {"files": 0, "checkpoint": last, "rounds": 1}
    assert instants(path) == before, "a run with no new files writes nothing"

    _compact_schedule_then_execute(capsys, path, model)
    _clean_then_archive(capsys, path, model, commits)
    _roll_back_a_drop_then_take_it_again(capsys, path, source, args, model)


def _compact_schedule_then_execute(capsys, path: str, model: Model) -> None:
    groups, logs = groups_with_logs(path), log_files(path)
    assert groups, "updates and deletes of the later drops went to log files"
    base = ["--base-path", path, "--table-name", "trips"]
    line = succeeded(capsys, compact, *base, "--mode", "schedule", *conf(*MOR_CONF))
    planned = line["instant_time"]
    assert (line["action"], line["state"]) == ("compaction", "REQUESTED")
    assert line["counts"] == {"file_groups": len(groups), "log_files": len(logs)}
    assert HudiTable.open(path).compaction.pending() == [planned]
    check(path, model, "compaction scheduled", hudi_rs=False)

    line = succeeded(capsys, compact, *base, "--mode", "execute", "--instant-time", planned)
    assert (line["instant_time"], line["action"], line["state"]) == (planned, "commit", "COMPLETED")
    assert line["counts"]["file_groups"] == len(groups)
    # 20 updates of drop 2, 10 updates and 8 deletes of drop 3 were in the logs.
    assert line["counts"]["log_records"] == 38
    assert HudiTable.open(path).compaction.pending() == []
    check(path, model, "compaction executed")


def _clean_then_archive(capsys, path: str, model: Model, commits: list[str]) -> None:
    before = data_files(path)
    policy = "hoodie.cleaner.policy=KEEP_LATEST_FILE_VERSIONS"
    line = succeeded(
        capsys, clean, "--base-path", path, *conf(policy, "hoodie.cleaner.fileversions.retained=1")
    )
    assert (line["action"], line["state"]) == ("clean", "COMPLETED")
    after = data_files(path)
    assert after < before and not log_files(path), "the compacted slices' old files went"
    assert line["counts"]["files_deleted"] == len(before - after)
    check(path, model, "clean")

    keep = ("hoodie.keep.min.commits=2", "hoodie.keep.max.commits=3")
    line = succeeded(
        capsys, archive, "--base-path", path, *conf(*keep, "hoodie.cleaner.commits.retained=1")
    )
    assert (line["action"], line["state"]) == ("archive", "COMPLETED")
    active = {t for t, _, _ in instants(path)}
    archived = {i.timestamp for i in HudiTable.open(path).timeline(archived=True)} - active
    assert {commits[0], commits[1]} <= archived, "the oldest delta commits were archived"
    assert line["counts"]["instants_archived"] == len(archived)
    assert line["counts"]["active_instants"] == len(active)
    assert line["instant_time"] == max(archived)
    check(path, model, "archive")


def _roll_back_a_drop_then_take_it_again(capsys, path, source, args, model) -> None:
    """A rolled-back drop takes its checkpoint with it: the next run reads the drop again."""
    late = trips(range(70, 90), 4)
    place(source, "drop-4.parquet", late, at=4)
    doomed = succeeded(capsys, ingest, *args)["instant_time"]
    before = model.apply(late)
    check(path, model, "drop 4")

    line = succeeded(capsys, rollback, "--base-path", path, "--instant-time", doomed)
    assert (line["action"], line["state"]) == ("rollback", "COMPLETED")
    assert line["counts"]["rolled_back"] == doomed and line["counts"]["files_deleted"] >= 1
    assert doomed not in {t for t, _, _ in instants(path)}
    model.rows = before
    check(path, model, "rollback")

    again = succeeded(capsys, ingest, *args)["counts"]
    assert (again["files"], again["inserts"], again["updates"]) == (1, 15, 5)
    model.apply(late)
    check(path, model, "drop 4 again")


# ---- every source format


def _ingest_one_file(capsys, tmp_path: Path, source_format: str) -> pa.Table:
    """Ingests the one file in tmp_path/landing into a new (copy-on-write, unpartitioned)
    table; the table's snapshot, checked against hudi-rs's."""
    path = str(tmp_path / "table")
    line = succeeded(
        capsys,
        ingest,
        *("--base-path", path, "--table-name", "t", "--source-path", tmp_path / "landing"),
        *("--source-format", source_format, "--record-key-field", "uuid"),
        *("--precombine-field", "ts", "--op", "INSERT"),
    )
    assert (line["action"], line["counts"]["files"]) == ("commit", 1)
    assert line["counts"]["inserts"] == 12
    ours = HudiTable.open(path).read()
    oracle.assert_same_table(ours, oracle.snapshot(path), f"{source_format}: hudi-rs")
    return ours.select([n for n in ours.column_names if not is_meta_field(n)])


def _by_key(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda row: row["uuid"])


def test_ingest_reads_json_lines_with_inferred_types(spark, tmp_path, capsys):
    rows = [
        {
            "uuid": f"key-{k:06d}",
            "ts": k,
            "fare": k * 1.25,
            "is_active": k % 2 == 0,
            "tags": [f"t{k}", "x"],
            "location": {"lat": k / 4, "name": f"p{k}"},
        }
        for k in range(12)
    ]
    (tmp_path / "landing").mkdir()
    (tmp_path / "landing" / "part-0.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    table = _ingest_one_file(capsys, tmp_path, "json")
    types = {field.name: field.type for field in table.schema}
    assert types["uuid"] == pa.string() and types["ts"] == pa.int64()
    assert types["fare"] == pa.float64() and types["is_active"] == pa.bool_()
    assert pa.types.is_list(types["tags"]) and types["tags"].value_type == pa.string()
    assert types["location"] == pa.struct([("lat", pa.float64()), ("name", pa.string())])
    assert _by_key(table.to_pylist()) == rows


def test_ingest_reads_csv_with_a_header_and_inferred_types(spark, tmp_path, capsys):
    lines = ["uuid,ts,fare,is_active,day,note"]
    lines += [f"key-{k:06d},{k},{k * 1.5},{k % 3 == 0},2024-02-{k + 1:02d},n{k}" for k in range(12)]
    (tmp_path / "landing").mkdir()
    (tmp_path / "landing" / "drop.csv").write_text("\n".join(lines) + "\n")
    table = _ingest_one_file(capsys, tmp_path, "csv")
    expected = pa.schema(
        [
            ("uuid", pa.string()),
            ("ts", pa.int32()),
            ("fare", pa.float64()),
            ("is_active", pa.bool_()),
            ("day", pa.date32()),
            ("note", pa.string()),
        ]
    )
    assert [(f.name, f.type) for f in table.schema] == [(f.name, f.type) for f in expected]
    rows = [
        {
            "uuid": f"key-{k:06d}",
            "ts": k,
            "fare": k * 1.5,
            "is_active": k % 3 == 0,
            "day": dt.date(2024, 2, k + 1),
            "note": f"n{k}",
        }
        for k in range(12)
    ]
    assert _by_key(table.to_pylist()) == rows


def test_ingest_reads_parquet_keeping_every_column_type(spark, tmp_path, capsys):
    rows = datagen.trips(list(range(12)), seed=5, ts=5)
    place(tmp_path / "landing", "drop.parquet", rows, at=None)
    table = _ingest_one_file(capsys, tmp_path, "parquet")
    assert table.schema.names == rows.schema.names
    for ours, source in zip(table.schema, rows.schema, strict=True):
        assert ours.type.equals(source.type, check_metadata=False) or (
            pa.types.is_list(source.type) and ours.type.value_type == source.type.value_type
        ), f"{ours.name}: {ours.type} != {source.type}"
    assert oracle.sorted_rows(table) == oracle.sorted_rows(rows)


AVRO_SCHEMA = {
    "type": "record",
    "name": "trip",
    "fields": [
        {"name": "uuid", "type": "string"},
        {"name": "ts", "type": "long"},
        {"name": "fare", "type": ["null", "double"]},
        {
            "name": "price",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
        },
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "event_time", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "long"}},
    ],
}


def test_ingest_reads_avro_with_logical_types_maps_and_arrays(spark, tmp_path, capsys):
    records = [
        {
            "uuid": f"key-{k:06d}",
            "ts": k,
            "fare": None if k % 4 == 0 else k * 2.5,
            "price": decimal.Decimal(k * 101) / 100,
            "day": dt.date(2024, 3, 1) + dt.timedelta(days=k),
            "event_time": dt.datetime(2024, 3, 1, 12, k, 0, k * 1000, tzinfo=dt.UTC),
            "tags": [f"t{k}"] * (k % 3),
            "attrs": {"a": k, "b": -k} if k % 2 else {},
        }
        for k in range(12)
    ]
    (tmp_path / "landing").mkdir()
    with open(tmp_path / "landing" / "drop.avro", "wb") as handle:
        fastavro.writer(handle, fastavro.parse_schema(AVRO_SCHEMA), records)
    table = _ingest_one_file(capsys, tmp_path, "avro")
    types = [(f.name, f.type) for f in table.schema]
    assert [name for name, _ in types] == [f["name"] for f in AVRO_SCHEMA["fields"]]
    assert types[3:6] == [
        ("price", pa.decimal128(10, 2)),
        ("day", pa.date32()),
        ("event_time", pa.timestamp("us", tz="UTC")),
    ]
    assert types[6][1].value_type == pa.string()
    assert (types[7][1].key_type, types[7][1].item_type) == (pa.string(), pa.int64())
    ours = _by_key(table.to_pylist())
    for row in ours:
        row["attrs"] = dict(row["attrs"])
    assert ours == records


# ---- checkpoints


def test_checkpoint_is_the_newest_mtime_and_the_source_limit_splits_rounds(spark, tmp_path, capsys):
    path, source = str(tmp_path / "table"), tmp_path / "landing"
    args = ["--base-path", path, "--source-path", source, "--source-format", "parquet"]
    create = ["--table-name", "t", "--record-key-field", "uuid", "--precombine-field", "ts"]
    first = place(source, "a.parquet", plain(range(0, 5), 1), at=1)
    second = place(source, "b.parquet", plain(range(5, 10), 2), at=2.345)
    place(source, "c1.parquet", plain(range(10, 15), 3), at=3)
    third = place(source, "c2.parquet", plain(range(15, 20), 3), at=3)

    limit = first.stat().st_size + second.stat().st_size
    line = succeeded(capsys, ingest, *args, *create, "--source-limit", limit)
    assert line["counts"]["files"] == 2 and line["counts"]["inserts"] == 10
    assert line["counts"]["checkpoint"] == str((EPOCH + 2) * 1000 + 345) == mtime_ms(second)
    assert checkpoint_of(path, line["instant_time"]) == mtime_ms(second)

    line = succeeded(capsys, ingest, *args, "--source-limit", 1)
    assert line["counts"]["files"] == 2, "files of one mtime go together, past the limit"
    assert checkpoint_of(path, line["instant_time"]) == mtime_ms(third)

    # A file that lands late but carries an older mtime is behind the checkpoint: skipped.
    place(source, "late.parquet", plain(range(100, 105), 9), at=2.5)
    before = instants(path)
    line = succeeded(capsys, ingest, *args)
    assert (line["state"], line["counts"]["files"]) == ("NOTHING_TO_DO", 0)
    assert line["counts"]["checkpoint"] == mtime_ms(third) and instants(path) == before
    keys = HudiTable.open(path).read(columns=["uuid"]).column("uuid").to_pylist()
    assert sorted(keys) == [f"key-{k:06d}" for k in range(20)]


def test_continuous_mode_ingests_a_drop_landing_between_rounds(
    spark, tmp_path, capsys, monkeypatch
):
    path, source = str(tmp_path / "table"), tmp_path / "landing"
    place(source, "first.parquet", plain(range(0, 5), 1), at=1)
    starts: list[float] = []
    real_round = ingest.ingest_once

    def round_then_a_new_drop(*args):
        starts.append(time.monotonic())
        outcome = real_round(*args)
        if len(starts) == 1:  # lands after round 1 listed the source; mtime: now
            place(source, "second.parquet", plain(range(3, 8), 2), at=None)
        return outcome

    monkeypatch.setattr(ingest, "ingest_once", round_then_a_new_drop)
    line = succeeded(
        capsys,
        ingest,
        *("--base-path", path, "--source-path", source, "--source-format", "parquet"),
        *("--table-name", "t", "--record-key-field", "uuid", "--precombine-field", "ts"),
        *("--continuous", "--max-rounds", 2, "--min-sync-interval-seconds", 1.5),
    )
    assert line["counts"]["rounds"] == 2 and len(starts) == 2
    assert starts[1] - starts[0] >= 1.5, "rounds start at least the sync interval apart"
    assert (line["counts"]["files"], line["counts"]["inserts"], line["counts"]["updates"]) == (
        1,
        3,
        2,
    )
    assert line["counts"]["checkpoint"] == mtime_ms(source / "second.parquet")
    commits = [t for t, action, _ in instants(path) if action == "commit"]
    assert len(commits) == 2 and commits[-1] == line["instant_time"]
    rows = HudiTable.open(path).read(columns=["uuid", "ts"]).to_pylist()
    assert sorted((r["uuid"], r["ts"]) for r in rows) == [
        (f"key-{k:06d}", 1 if k < 3 else 2) for k in range(8)
    ]


# ---- creating the table, options, arguments


def test_ingest_creates_the_table_its_flags_describe(spark, tmp_path, capsys):
    path, source = str(tmp_path / "table"), tmp_path / "landing"
    source.mkdir()
    props = tmp_path / "hudi.properties"
    props.write_text(
        "hoodie.datasource.write.hive_style_partitioning=true\n"
        "hoodie.datasource.write.partitionpath.urlencode=true\n"
    )
    line = succeeded(
        capsys,
        ingest,
        *("--base-path", path, "--table-name", "trips", "--source-path", source),
        *("--source-format", "json", "--table-type", "merge_on_read"),
        *("--record-key-field", "uuid,region", "--partition-path-field", "city"),
        *("--precombine-field", "ts", "--props", props),
        *conf("hoodie.datasource.write.partitionpath.urlencode = true"),
        *conf("hoodie.datasource.write.partitionpath.urlencode=false"),
    )
    assert (line["state"], line["counts"]["files"]) == ("NOTHING_TO_DO", 0)
    properties = table_properties(path)
    assert properties["hoodie.table.name"] == "trips"
    assert properties["hoodie.table.type"] == "MERGE_ON_READ"
    assert properties["hoodie.table.recordkey.fields"] == "uuid,region"
    assert properties["hoodie.table.partition.fields"] == "city"
    assert properties["hoodie.table.precombine.field"] == "ts"
    # --props sets both options; the last --hoodie-conf wins over it and over earlier ones.
    assert properties["hoodie.datasource.write.hive_style_partitioning"] == "true"
    assert properties["hoodie.datasource.write.partitionpath.urlencode"] == "false"


def test_ingest_into_a_new_table_without_a_record_key_fails(spark, tmp_path, capsys):
    path = tmp_path / "table"
    (tmp_path / "landing").mkdir()
    error = failed(
        capsys,
        ingest,
        *("--base-path", path, "--table-name", "t", "--source-path", tmp_path / "landing"),
        *("--source-format", "parquet", "--precombine-field", "ts"),
    )
    assert "--record-key-field" in error and str(path) in error
    assert not path.exists(), "a failed creation leaves nothing behind"


def test_jobs_refuse_a_table_name_other_than_the_tables(spark, tmp_path, capsys):
    path, source = str(tmp_path / "table"), tmp_path / "landing"
    HudiTable.create(path, "trips", record_key_fields=["uuid"])
    source.mkdir()
    ingest_args = ["--source-path", source, "--source-format", "json"]
    for module, extra in ((ingest, ingest_args), (clean, []), (savepoint, [])):
        error = failed(capsys, module, "--base-path", path, "--table-name", "rides", *extra)
        assert "--table-name rides does not match" in error and "(trips)" in error, module.JOB


def test_a_hoodie_conf_without_a_value_fails(spark, tmp_path, capsys):
    path = str(tmp_path / "table")
    HudiTable.create(path, "trips", record_key_fields=["uuid"])
    error = failed(capsys, clean, "--base-path", path, "--hoodie-conf", "hoodie.cleaner.policy")
    assert "key=value" in error and "hoodie.cleaner.policy" in error


@pytest.mark.parametrize("module", ALL_JOBS, ids=lambda module: module.JOB)
def test_help_prints_usage_and_exits_zero(module, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.run(module.JOB, module.main, ["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: spark_jobs/{module.JOB}.py")
    assert "--base-path" in out and "--hoodie-conf" in out and "--props" in out


def test_bad_arguments_fail_with_one_line_and_the_failed_result(capsys):
    error = failed(capsys, compact, "--base-path", "/x", "--mode", "sometimes")
    assert error.startswith("InvalidOptionError") and "--mode" in error and "--help" in error


# ---- compaction modes, savepoint and restore


def test_compaction_modes_and_order_then_savepoint_and_restore(spark, tmp_path, capsys):
    """Writes come from hudi_core here (faster than through Spark); the jobs under test are
    compact, savepoint and restore."""
    path = str(tmp_path / "trips")
    table = local_mor_table(path)
    model = Model(TRIPS_SCHEMA)

    def write(batch: pa.Table) -> str:
        model.apply(batch)
        return table.write(batch)

    base = ["--base-path", path, *conf("hoodie.compact.inline.max.delta.commits=1")]
    write(trips(range(0, 20), 1))
    write(trips(range(0, 20, 2), 2))  # updates in san_francisco only (even keys)
    first = succeeded(capsys, compact, *base, "--mode", "schedule")
    write(trips(range(1, 20, 2), 3))  # updates in chennai only (odd keys)
    second = succeeded(capsys, compact, *base, "--mode", "schedule")
    assert first["instant_time"] < second["instant_time"]
    assert first["counts"]["file_groups"] == second["counts"]["file_groups"] == 1

    line = succeeded(capsys, compact, *base, "--mode", "execute", "--seq", "lifo")
    assert (line["instant_time"], line["state"]) == (second["instant_time"], "COMPLETED")
    assert table.compaction.pending() == [first["instant_time"]]
    line = succeeded(capsys, compact, *base, "--mode", "execute")  # FIFO: the only one left
    assert (line["instant_time"], line["state"]) == (first["instant_time"], "COMPLETED")
    check(path, model, "both compactions")

    write(trips(range(0, 20, 3), 4))
    line = succeeded(capsys, compact, *base, "--mode", "scheduleAndExecute")
    assert (line["action"], line["state"]) == ("commit", "COMPLETED")
    assert line["instant_time"] > second["instant_time"] and not table.compaction.pending()
    assert line["counts"]["log_records"] == 7 and line["counts"]["file_groups"] == 2
    line = succeeded(capsys, compact, *base, "--mode", "scheduleAndExecute")
    assert (line["instant_time"], line["state"]) == (None, "NOTHING_TO_DO")
    check(path, model, "schedule and execute")
    _savepoint_then_restore(capsys, path, write, model)


def _savepoint_then_restore(capsys, path: str, write, model: Model) -> None:
    latest = timeline(path).last_completed_write().timestamp
    line = succeeded(capsys, savepoint, "--base-path", path, "--comments", "before the backfill")
    saved = line["instant_time"]
    assert (saved, line["action"], line["state"]) == (latest, "savepoint", "COMPLETED")
    assert (saved, "savepoint", "COMPLETED") in instants(path)
    at_savepoint = dict(model.rows)

    write(trips(range(10, 40), 5))
    write(trips(range(0, 10), 6, deleted=range(0, 10)))
    check(path, model, "after the savepoint")
    line = succeeded(capsys, restore, "--base-path", path, "--instant-time", saved)
    assert (line["action"], line["state"]) == ("restore", "COMPLETED")
    assert line["counts"] == {"savepoint": saved, "instants_rolled_back": 2}
    model.rows = at_savepoint
    check(path, model, "restore")

    line = succeeded(capsys, savepoint, "--base-path", path, "--instant-time", saved, "--delete")
    assert (line["instant_time"], line["state"]) == (saved, "DELETED")
    assert all(action != "savepoint" for _, action, _ in instants(path))


# ---- clustering


def test_cluster_job_schedules_then_executes_its_groups_on_the_executors(spark, tmp_path, capsys):
    path = str(tmp_path / "trips")
    table = local_mor_table(path)
    model = Model(TRIPS_SCHEMA)
    for n in range(4):
        batch = trips(range(10 * n, 10 * n + 10), n + 1)
        table.write(batch)
        model.apply(batch)
    update = trips(range(0, 40, 4), 9)
    table.write(update)
    model.apply(update)
    base = ["--base-path", path]
    line = succeeded(capsys, cluster, *base, "--mode", "schedule", "--sort-columns", "fare")
    planned = line["instant_time"]
    assert (line["action"], line["state"]) == ("replacecommit", "REQUESTED")
    assert line["counts"]["file_groups"] == 8  # four commits of new groups in two cities
    line = succeeded(capsys, cluster, *base, "--mode", "execute", "--layout", "hilbert")
    assert (line["instant_time"], line["state"]) == (planned, "COMPLETED")
    assert line["counts"]["files_written"] == 2 and line["counts"]["rows_written"] == 40
    check(path, model, "clustered by the cluster job")
    # scheduleAndExecute (the default): the two clustered files are still small, so a
    # second clustering takes them, as Apache Hudi's size-based strategy would
    line = succeeded(capsys, cluster, *base)
    assert line["instant_time"] > planned and line["state"] == "COMPLETED"
    assert line["counts"]["file_groups"] == 2
    check(path, model, "clustered again")


# ---- a real spark-submit


def test_compact_runs_as_a_spark_submit_application(tmp_path):
    """The script as spark-submit runs it: its own session on the given master, the plan's
    file slices merged on executors, and the result line last on stdout (where spark-submit
    also sends the driver's stderr)."""
    import pyspark

    path = str(tmp_path / "trips")
    table = local_mor_table(path)
    model = Model(TRIPS_SCHEMA)
    for batch in (trips(range(0, 20), 1), trips(range(0, 20, 3), 2)):
        table.write(batch)
        model.apply(batch)
    planned = table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": 1})
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    done = subprocess.run(
        [
            str(submit),
            *("--master", "local[2]", "--conf", "spark.ui.enabled=false"),
            str(ROOT / "spark_jobs" / "compact.py"),
            *("--base-path", path, "--mode", "execute"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    line = json.loads(done.stdout.strip().splitlines()[-1])
    assert (line["job"], line["status"], line["instant_time"]) == ("compact", "SUCCEEDED", planned)
    assert (line["action"], line["state"]) == ("commit", "COMPLETED")
    assert line["counts"]["file_groups"] == 2 and line["counts"]["log_records"] == 7
    check(path, model, "compacted by spark-submit")
