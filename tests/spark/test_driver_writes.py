"""Small Spark writes run on the driver (hoodie.spark.local.threshold.bytes): the same
batches written through the driver path and through the executors leave identical tables
(rows, meta columns but commit time, seqno and file name, file groups, log files, schema),
and the driver path runs no Python worker job."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import pyarrow.compute as pc
import pytest

from hudi_core import HudiTable
from hudi_core.model.file_names import BaseFileName, LogFileName
from spark_jobs import ingest
from spark_jobs.writer import SparkWriter
from tests import oracle
from tests.datagen import trips
from tests.tables import create_trips_table, data_files

pytestmark = pytest.mark.spark

THRESHOLD = "hoodie.spark.local.threshold.bytes"
ON_DRIVER = {THRESHOLD: str(64 << 20)}
ON_EXECUTORS = {THRESHOLD: "0"}
# Differ between two tables by construction: instants and the files' random ids.
PER_TABLE = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name"]


def _write(spark, table, df, operation: str, options=None) -> tuple[str | None, int]:
    """The SparkWriter's write of `df`: its instant, and how many Spark jobs it ran."""
    context = spark.sparkContext
    group = f"driver-writes-{next(_GROUPS)}"
    context.setJobGroup(group, "counting a write's jobs")
    try:
        instant = SparkWriter(spark, table).write(df, operation, options)
        return instant, len(context.statusTracker().getJobIdsForGroup(group))
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)


_GROUPS = itertools.count()


def _layout(path: str) -> Counter:
    """Base and log files per partition, by kind: the table's file group structure."""
    kinds: Counter = Counter()
    for name in data_files(path):
        partition, _, file = name.rpartition("/")
        kind = "log" if LogFileName.parse(file) else "base" if BaseFileName.parse(file) else "?"
        kinds[partition, kind] += 1
    return kinds


def _schema_of_last_commit(path: str) -> dict:
    table = HudiTable.open(path)
    last = [i for i in table.timeline() if i.is_completed][-1]
    metadata = json.loads((Path(path) / ".hoodie" / last.file_name).read_text())
    return json.loads(metadata["extraMetadata"]["schema"])


def _assert_identical(driver_path: str, executors_path: str, step: str) -> None:
    ours = HudiTable.open(driver_path).read()
    oracle.assert_same_table(ours, oracle.snapshot(driver_path), f"{step}: hudi-rs")
    theirs = HudiTable.open(executors_path).read()
    oracle.assert_same_table(
        ours.drop_columns(PER_TABLE), theirs.drop_columns(PER_TABLE), f"{step}: driver vs executors"
    )
    assert _layout(driver_path) == _layout(executors_path), step
    assert _schema_of_last_commit(driver_path) == _schema_of_last_commit(executors_path), step


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_small_writes_on_the_driver_equal_writes_through_the_executors(spark, tmp_path, table_type):
    driver_path, driver_table = create_trips_table(tmp_path / "driver", table_type)
    executors_path, executors_table = create_trips_table(tmp_path / "executors", table_type)
    inserts = trips(list(range(60)), seed=1, ts=1)
    updates = trips(list(range(40, 90)), seed=2, ts=2)
    deletes = trips(list(range(0, 10)), seed=3, ts=3).select(["uuid", "city", "region", "ts"])
    steps = [(inserts, "upsert"), (updates, "upsert"), (trips([95, 96], 4, 4), "insert")]
    steps.append((deletes, "delete"))
    for batch, operation in steps:
        df = spark.createDataFrame(batch)
        on_driver, driver_jobs = _write(spark, driver_table, df, operation, ON_DRIVER)
        on_executors, executor_jobs = _write(spark, executors_table, df, operation, ON_EXECUTORS)
        assert on_driver and on_executors, operation
        # The JVM collects the rows as Arrow: one job, no Python worker, no shuffle.
        assert driver_jobs <= 1 < executor_jobs, (operation, driver_jobs, executor_jobs)
        _assert_identical(driver_path, executors_path, f"{table_type} {operation}")
    assert HudiTable.open(driver_path).read().num_rows == 90 - 10 + 2  # keys 0-89, 95, 96


def test_the_session_conf_sets_the_threshold_and_big_inputs_go_to_the_executors(spark, tmp_path):
    path, table = create_trips_table(tmp_path / "t", "COPY_ON_WRITE")
    df = spark.createDataFrame(trips(list(range(20)), seed=1, ts=1))
    # The test session sets 0 (tests/spark/conftest.py): every write through the executors.
    assert spark.conf.get(THRESHOLD) == "0"
    _, jobs = _write(spark, table, df, "upsert")
    assert jobs > 1
    # A threshold below the input's size: through the executors too.
    _, jobs = _write(spark, table, df, "upsert", {THRESHOLD: 1})
    assert jobs > 1
    spark.conf.set(THRESHOLD, str(1 << 20))
    try:
        _, jobs = _write(spark, table, df, "upsert")
    finally:
        spark.conf.set(THRESHOLD, "0")
    assert jobs <= 1
    assert HudiTable.open(path).read().num_rows == 20


def test_rows_made_by_python_functions_are_not_sized_and_go_to_the_executors(spark, tmp_path):
    _, table = create_trips_table(tmp_path / "t", "COPY_ON_WRITE")
    batch = trips(list(range(20)), seed=1, ts=1)

    def same_rows(batches):
        yield from batches

    df = spark.createDataFrame(batch).mapInArrow(same_rows, spark.createDataFrame(batch).schema)
    _, jobs = _write(spark, table, df, "upsert", ON_DRIVER)
    assert jobs > 1


@pytest.mark.parametrize("source_format", ["json", "parquet"])
def test_a_small_ingest_on_the_driver_equals_one_through_the_executors(
    spark, tmp_path, source_format
):
    landing = tmp_path / "landing"
    landing.mkdir()
    batch = trips(list(range(30)), seed=1, ts=1).select(["uuid", "city", "region", "ts", "fare"])
    batch = batch.set_column(4, "fare", pc.round(batch.column("fare"), 2))
    if source_format == "json":
        lines = "\n".join(json.dumps(row) for row in batch.to_pylist())
        (landing / "drop.json").write_text(lines + "\n")
    else:
        import pyarrow.parquet as pq

        pq.write_table(batch, landing / "drop.parquet")
    paths = {}
    for name, threshold in (("driver", ON_DRIVER), ("executors", ON_EXECUTORS)):
        paths[name] = str(tmp_path / name)
        argv = [
            "--base-path", paths[name], "--table-name", "trips", "--source-path", str(landing),
            "--source-format", source_format, "--record-key-field", "uuid",
            "--partition-path-field", "city", "--precombine-field", "ts",
            "--table-type", "MERGE_ON_READ",
            "--hoodie-conf", f"{THRESHOLD}={threshold[THRESHOLD]}",
        ]  # fmt: skip
        outcome = ingest.main(argv)
        assert outcome["counts"]["inserts"] == 30, outcome
    _assert_identical(paths["driver"], paths["executors"], f"{source_format} ingest")
    assert HudiTable.open(paths["driver"]).read().num_rows == 30
