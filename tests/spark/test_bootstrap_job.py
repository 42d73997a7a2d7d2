"""spark_jobs/bootstrap.py on local[2]: a parquet dataset of two partitions of two files each
becomes a Hudi table whose rows are the dataset's; the skeleton files are written by Spark
tasks, one per source file, or over at most hoodie.bootstrap.parallelism partitions; the source
may be Apache Hudi's option hoodie.bootstrap.base.path; the result line names the instants
committed. (Bad arguments: tests/test_bootstrap_job_fails_fast.py.)"""

from __future__ import annotations

import pytest

from hudi_core import HudiTable
from spark_jobs import bootstrap
from tests import bootstrap_source
from tests.spark.test_jobs import conf, succeeded

pytestmark = pytest.mark.spark

TABLE = [
    "--table-name",
    "trips",
    "--record-key-fields",
    "uuid",
    "--partition-fields",
    "city",
    "--precombine-field",
    "ts",
]


def _task_counts(spark, group: str) -> list[int]:
    """The tasks of every stage the Spark jobs of a job group ran."""
    tracker = spark.sparkContext.statusTracker()
    stages = [
        stage
        for job in tracker.getJobIdsForGroup(group)
        for stage in tracker.getJobInfo(job).stageIds
    ]
    return [tracker.getStageInfo(stage).numTasks for stage in stages]


def test_a_metadata_only_bootstrap_reads_back_the_source_rows(spark, capsys, tmp_path):
    source = tmp_path / "source"
    expected = bootstrap_source.write_source(source)
    path = tmp_path / "trips"
    spark.sparkContext.setJobGroup("bootstrap-default", "the bootstrap job's Spark jobs")
    try:
        line = succeeded(capsys, bootstrap, "--base-path", path, "--source-path", source, *TABLE)
    finally:
        spark.sparkContext.setJobGroup("", "")
    assert (line["instant_time"], line["action"], line["state"]) == (
        "00000000000001",
        "commit",
        "COMPLETED",
    )
    counts = line["counts"]
    assert counts["instants"] == ["00000000000001"]
    assert counts["operations"] == {"00000000000001": "BOOTSTRAP"}
    assert counts["partitions"] == len(bootstrap_source.CITIES)
    assert counts["files_written"] == bootstrap_source.source_files()
    assert counts["rows_written"] == expected.num_rows
    table = HudiTable.open(str(path))
    rows = table.read()
    assert bootstrap_source.data_rows(rows) == bootstrap_source.data_rows(expected)
    assert set(rows.column("_hoodie_commit_time").to_pylist()) == {"00000000000001"}
    assert [(i.timestamp, i.action) for i in table.timeline()] == [("00000000000001", "commit")]
    # one Spark task per source file wrote its skeleton
    assert bootstrap_source.source_files() in _task_counts(spark, "bootstrap-default")


def test_bootstrap_parallelism_caps_the_spark_partitions_of_the_skeleton_tasks(
    spark, capsys, tmp_path
):
    source = tmp_path / "source"
    expected = bootstrap_source.write_source(source)
    path = tmp_path / "trips"
    spark.sparkContext.setJobGroup("bootstrap-capped", "the bootstrap job's Spark jobs")
    try:
        line = succeeded(
            capsys,
            bootstrap,
            "--base-path",
            path,
            *TABLE,
            "--table-type",
            "MERGE_ON_READ",
            *conf(f"hoodie.bootstrap.base.path={source}", "hoodie.bootstrap.parallelism=1"),
        )
    finally:
        spark.sparkContext.setJobGroup("", "")
    assert (line["instant_time"], line["action"]) == ("00000000000001", "deltacommit")
    tasks = _task_counts(spark, "bootstrap-capped")
    assert tasks and max(tasks) == 1, tasks
    rows = HudiTable.open(str(path)).read()
    assert bootstrap_source.data_rows(rows) == bootstrap_source.data_rows(expected)
