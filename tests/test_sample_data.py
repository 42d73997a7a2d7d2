"""The compose stack's sample-data generator (docker/sample_data.py) makes drops the stack's
trips table (docker/tables.yaml) ingests: the table's key, precombine and partition fields,
updates that keep their partition, files the ingest's source listing picks up and nothing
half-written, on a local folder and on S3 reached through the environment alone, as the
stack's containers reach MinIO."""

from __future__ import annotations

import importlib.util
import sys
import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hudi_airflow.tables_config import read_tables
from hudi_core import HudiTable
from hudi_core.filesystems import filesystem_for
from spark_jobs.sources import new_files

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "docker" / "sample_data.py"
STACK_TABLES = ROOT / "docker" / "tables.yaml"


def _load_script():
    spec = importlib.util.spec_from_file_location("sample_data", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


sample_data = _load_script()


def _fed_table():
    """The stack's table whose source the compose file points the generator at."""
    (entry,) = [e for e in read_tables(STACK_TABLES).entries if "landing/trips" in e.source_path]
    return entry


def test_drops_carry_the_fields_the_stack_table_is_keyed_by():
    entry = _fed_table()
    drop = sample_data.Generator(rows=10).next_drop(now_ms=1_000)
    fields = {entry.record_key_field, entry.precombine_field, entry.partition_path_field}
    assert fields <= set(drop.column_names)
    assert drop.num_rows == 10
    assert drop.column("uuid").null_count == 0 and len(set(drop["uuid"].to_pylist())) == 10


def test_later_drops_update_trips_of_the_drop_before_in_their_partition():
    generator = sample_data.Generator(rows=20)
    first = generator.next_drop(now_ms=1_000).to_pylist()
    second = generator.next_drop(now_ms=2_000).to_pylist()
    city_of = {row["uuid"]: row["city"] for row in first}
    updated = [row for row in second if row["uuid"] in city_of]
    assert len(updated) == int(20 * sample_data.UPDATED_SHARE)
    assert all(row["city"] == city_of[row["uuid"]] and row["ts"] == 2_000 for row in updated)
    assert len(second) == 20


def test_local_drops_are_listed_by_the_ingest_and_merge_into_the_table(tmp_path):
    entry = _fed_table()
    landing = tmp_path / "landing" / "trips"
    generator = sample_data.Generator(rows=12)
    drops = [generator.next_drop(now_ms=ms) for ms in (1_000, 2_000)]
    for ms, drop in zip((1_000, 2_000), drops, strict=True):
        sample_data.write_drop(str(landing), drop, ms)

    listed = new_files(str(landing), entry.source_format, None).files
    assert sorted(Path(f.path).name for f in listed) == ["trips-1000.parquet", "trips-2000.parquet"]
    assert not [p for p in landing.iterdir() if p.name.startswith("_")]  # no half-written file

    table = HudiTable.create(
        str(tmp_path / "lake" / "trips"),
        name=entry.name,
        table_type=entry.table_type,
        record_key_fields=[entry.record_key_field],
        partition_fields=[entry.partition_path_field],
        precombine_field=entry.precombine_field,
    )
    for source in sorted(listed, key=lambda f: f.modified_ms):
        table.write(pq.read_table(source.path), operation="upsert")
    rows = {row["uuid"]: row for row in table.read(columns=["uuid", "fare", "ts"]).to_pylist()}
    latest = {row["uuid"]: row for drop in drops for row in drop.to_pylist()}
    assert rows.keys() == latest.keys()
    assert all(rows[key]["fare"] == latest[key]["fare"] for key in latest)


def test_a_drop_reaches_s3_through_the_environment_alone(s3, monkeypatch):
    for name, value in s3.environment().items():
        monkeypatch.setenv(name, value)
    prefix = f"sample-data-{uuid.uuid4().hex[:8]}"
    landing = f"s3a://bucket/{prefix}/landing/trips"

    assert sample_data.main(["--path", landing, "--rows", "7", "--once"]) == 0

    (listed,) = new_files(landing, "parquet", None).files
    filesystem, key = filesystem_for(listed.path)
    with filesystem.open_input_file(key) as handle:
        assert pq.read_table(handle).num_rows == 7
    assert s3.keys("bucket", prefix) == [f"{prefix}/landing/trips/{Path(listed.path).name}"]


@pytest.mark.parametrize(
    "argv", [["--once"], ["--path", "/tmp/x", "--rows", "0"], ["--path", "/x", "--interval", "0"]]
)
def test_bad_arguments_stop_with_a_usage_error(argv, monkeypatch):
    monkeypatch.delenv("SAMPLE_DATA_PATH", raising=False)
    with pytest.raises(SystemExit) as stopped:
        sample_data.main(argv)
    assert stopped.value.code == 2
