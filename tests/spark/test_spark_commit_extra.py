"""hoodie.datasource.write.commitmeta.key.prefix on the SparkWriter: the same extraMetadata
a local write records, for routed writes and bulk inserts alike; and through the ingest and
compaction jobs, as the Airflow operators run them."""

from __future__ import annotations

import json
import os

import pyarrow.parquet as pq
import pytest

from hudi_core import HudiTable
from spark_jobs import cli, compact, ingest
from spark_jobs.writer import SparkWriter
from tests.datagen import trips
from tests.tables import create_trips_table

pytestmark = pytest.mark.spark

RUN = {"_hoodie.airflow.dag_id": "trips_ingest", "_hoodie.airflow.task_id": "ingest"}


@pytest.mark.parametrize("operation", ["upsert", "bulk_insert"])
def test_prefixed_options_reach_the_commit(spark, tmp_path, operation):
    _, table = create_trips_table(tmp_path, "MERGE_ON_READ")
    frame = spark.createDataFrame(trips([1, 2, 3], seed=1, ts=1))

    instant = SparkWriter(spark, table).write(frame, operation, {**RUN, "hoodie.y": "2"})

    extra = table.inspect.commit(instant).extra_metadata
    assert {k: v for k, v in extra.items() if k.startswith("_")} == RUN
    assert "hoodie.y" not in extra


def test_the_jobs_record_the_options_the_operators_pass(spark, tmp_path, capsys):
    """What the Airflow operators hand spark-submit (--hoodie-conf _hoodie.airflow.*=...)
    reaches the commits of the ingest and compaction jobs."""
    landing = tmp_path / "landing"
    landing.mkdir()
    base = tmp_path / "trips"
    conf = []
    for key, value in RUN.items():
        conf += ["--hoodie-conf", f"{key}={value}"]
    table_flags = ["--table-name", "trips", "--table-type", "MERGE_ON_READ"]
    table_flags += ["--record-key-field", "uuid", "--partition-path-field", "city"]
    table_flags += ["--precombine-field", "ts"]
    made = []
    for seed in (1, 2):
        drop = landing / f"{seed}.parquet"
        pq.write_table(trips([1, 2], seed=seed, ts=seed), drop)
        os.utime(drop, (1_700_000_000 + seed, 1_700_000_000 + seed))  # in order of arrival
        source = ["--source-path", landing, "--source-format", "parquet"]
        made.append(_run(capsys, ingest, "--base-path", base, *source, *table_flags, *conf))
    due_after_one = {"hoodie.compact.inline.max.delta.commits": "1"}
    planned = HudiTable.open(str(base), due_after_one).compaction.schedule()
    assert planned is not None and None not in made
    compacted = _run(capsys, compact, "--base-path", base, "--mode", "execute", *conf)

    assert compacted == planned
    inspector = HudiTable.open(str(base)).inspect
    for instant in (*made, compacted):
        extra = inspector.commit(instant).extra_metadata
        assert {k: v for k, v in extra.items() if k.startswith("_")} == RUN, instant


def _run(capsys, module, *argv) -> str:
    capsys.readouterr()
    assert cli.run(module.JOB, module.main, [str(arg) for arg in argv]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    return json.loads(lines[-1])["instant_time"]
