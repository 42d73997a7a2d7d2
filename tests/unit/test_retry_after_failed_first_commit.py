"""A table whose first commit never completed (a bootstrap or first write with a wrong record
key field) takes the corrected definition on retry: the failed attempt is rolled back and
hoodie.properties (with its checksum) is written anew. A table with a completed commit keeps
its definition."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from hudi_core import BootstrapError, HudiTable, RecordKeyError, TableExistsError
from hudi_core.config.table_config import (
    PROPERTIES_BACKUP_FILE,
    PROPERTIES_FILE,
    TableConfig,
    parse_properties,
)
from hudi_core.timeline import ActiveTimeline
from tests import bootstrap_source, oracle

FULL_RECORD = "org.apache.hudi.client.bootstrap.selector.FullRecordBootstrapModeSelector"


def _rows(keys: list[str]) -> pa.Table:
    return pa.table(
        {
            "uuid": keys,
            "city": ["sf"] * len(keys),
            "ts": pa.array(range(len(keys)), pa.int64()),
            "fare": [float(i) for i in range(len(keys))],
        }
    )


def _properties(path: Path) -> dict[str, str]:
    return parse_properties((path / PROPERTIES_FILE).read_bytes())


def _assert_consistent(path: Path, key: str) -> None:
    props = _properties(path)
    assert props["hoodie.table.recordkey.fields"] == key
    config = TableConfig(props)
    assert config.has_valid_checksum()
    assert not (path / PROPERTIES_BACKUP_FILE).exists()


def test_a_bootstrap_with_a_wrong_key_is_redone_with_the_right_one(tmp_path):
    source = tmp_path / "source"
    rows = bootstrap_source.write_source(source)
    path = tmp_path / "table"
    with pytest.raises((RecordKeyError, BootstrapError)):
        HudiTable.bootstrap(str(path), str(source), "t", record_key_fields=["nope"])
    assert (path / PROPERTIES_FILE).exists()  # the failed attempt left its table behind

    # Full record: hudi-rs reads rewritten partitions (not skeleton files).
    table = HudiTable.bootstrap(
        str(path),
        str(source),
        "t",
        record_key_fields=["uuid"],
        partition_fields=["city"],
        options={"hoodie.bootstrap.mode.selector": FULL_RECORD},
    )
    _assert_consistent(path, "uuid")
    assert _properties(path)["hoodie.table.partition.fields"] == "city"
    read = table.read()
    assert sorted(read.column("uuid").to_pylist()) == sorted(rows.column("uuid").to_pylist())
    oracle.assert_same_table(read, oracle.snapshot(str(path)))


def test_a_first_write_with_a_wrong_key_is_retried_with_the_right_one(tmp_path):
    path = tmp_path / "table"
    table = HudiTable.create(str(path), "t", record_key_fields=["nope"], partition_fields=["city"])
    with pytest.raises(RecordKeyError):
        table.write(_rows(["a", "b"]))

    table = HudiTable.create(
        str(path), "t", record_key_fields=["uuid"], partition_fields=["city"], precombine_field="ts"
    )
    _assert_consistent(path, "uuid")
    assert _properties(path)["hoodie.table.precombine.field"] == "ts"
    assert table.write(_rows(["a", "b"])) is not None
    assert sorted(table.read().column("uuid").to_pylist()) == ["a", "b"]
    oracle.assert_same_table(table.read(), oracle.snapshot(str(path)))
    # A reopened handle sees the new definition too.
    assert HudiTable.open(str(path)).config.record_key_fields == ["uuid"]


def test_a_table_with_a_commit_refuses_a_new_definition(tmp_path):
    path = tmp_path / "table"
    table = HudiTable.create(str(path), "t", record_key_fields=["uuid"])
    table.write(_rows(["a"]), options={"hoodie.datasource.write.operation": "bulk_insert"})
    # The same table made anew is refused: it has a commit.
    with pytest.raises(TableExistsError, match="commit"):
        HudiTable.create(str(path), "t", record_key_fields=["city"])
    assert _properties(path)["hoodie.table.recordkey.fields"] == "uuid"
    assert table.read().column("uuid").to_pylist() == ["a"]


def test_a_table_with_a_commit_refuses_a_different_bootstrap_definition(tmp_path):
    source = tmp_path / "source"
    bootstrap_source.write_source(source)
    path = tmp_path / "table"
    HudiTable.bootstrap(
        str(path), str(source), "t", record_key_fields=["uuid"], partition_fields=["city"]
    )
    before = (path / PROPERTIES_FILE).read_bytes()
    with pytest.raises(BootstrapError, match="already has commits"):
        HudiTable.bootstrap(
            str(path), str(source), "t", record_key_fields=["ts"], partition_fields=["city"]
        )
    assert (path / PROPERTIES_FILE).read_bytes() == before


def test_an_uncommitted_table_made_again_rolls_back_its_failed_write(tmp_path):
    path = tmp_path / "table"
    table = HudiTable.create(str(path), "t", record_key_fields=["nope"])
    with pytest.raises(RecordKeyError):
        table.write(_rows(["a"]))
    HudiTable.create(str(path), "t", record_key_fields=["uuid"])
    timeline = ActiveTimeline.load(table.storage, "UTC")
    assert timeline.pending() == []
    assert timeline.completed_writes() == []


def test_a_metadata_table_of_the_failed_attempt_goes_with_it(tmp_path):
    path = tmp_path / "table"
    table = HudiTable.create(str(path), "t", record_key_fields=["nope"])
    with pytest.raises(RecordKeyError):
        table.write(_rows(["a"]))
    (path / ".hoodie" / "metadata" / ".hoodie").mkdir(parents=True)
    (path / ".hoodie" / "metadata" / ".hoodie" / "hoodie.properties").write_bytes(b"x=1\n")
    table = HudiTable.create(str(path), "t", record_key_fields=["uuid"])
    assert not (path / ".hoodie" / "metadata").exists()
    _assert_consistent(path, "uuid")
    table.write(_rows(["a"]))
    oracle.assert_same_table(table.read(), oracle.snapshot(str(path)))


def test_a_bootstrap_without_fields_keeps_the_uncommitted_tables_definition(tmp_path):
    source = tmp_path / "source"
    rows = bootstrap_source.write_source(source)
    path = tmp_path / "table"
    HudiTable.create(str(path), "t", record_key_fields=["uuid"], partition_fields=["city"])
    table = HudiTable.bootstrap(str(path), str(source), "t")
    _assert_consistent(path, "uuid")
    assert table.read().num_rows == rows.num_rows


@pytest.mark.spark  # imports spark_jobs.ingest, which imports pyspark (no session starts)
def test_the_ingest_job_retried_with_a_corrected_key_redefines_the_table(tmp_path):
    """What an Airflow ingest retry does once the tables file is fixed: the job finds the
    table (no commit yet) and makes it anew from its flags."""
    from types import SimpleNamespace

    from spark_jobs import ingest

    path = tmp_path / "table"
    table = HudiTable.create(str(path), "t", record_key_fields=["nope"])
    with pytest.raises(RecordKeyError):
        table.write(_rows(["a"]))
    spark = SimpleNamespace(sparkContext=SimpleNamespace(defaultParallelism=1))
    args = SimpleNamespace(
        base_path=str(path),
        table_name="t",
        table_type="COPY_ON_WRITE",
        record_key_field="uuid",
        partition_path_field=None,
        precombine_field="ts",
    )
    options = {"hoodie.datasource.write.recordkey.field": "uuid"}
    retried = ingest._table(spark, args, options, exists=True)
    assert retried.config.record_key_fields == ["uuid"]
    _assert_consistent(path, "uuid")
    # Once committed, the job opens the table as it is.
    HudiTable.open(str(path)).write(_rows(["a"]))
    args.record_key_field = "city"
    assert ingest._table(spark, args, {}, exists=True).config.record_key_fields == ["uuid"]
