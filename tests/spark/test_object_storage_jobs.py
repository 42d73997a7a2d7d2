"""The Spark side of object storage: a merge-on-read table at s3a://bucket/... on an
S3-compatible server (moto's, on 127.0.0.1) is created by a real spark-submit ingest of a
parquet drop landed on the same store, then fed, compacted, cleaned and archived by the jobs;
our reader, hudi-rs (with the same settings as object_store names them) and the Spark data
source all return the model's rows. The credentials reach spark-submit as the Airflow hook
hands them over: in the environment, never on the command line."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import spark_jobs
from hudi_core import HudiTable
from hudi_core.filesystems import SECRET_OPTIONS_ENV, filesystem_for, object_store_options
from spark_jobs import archive, clean, compact, ingest
from spark_jobs.datasource import session_fs_options
from tests import oracle
from tests.spark.test_jobs import MOR_FLAGS, TRIPS_SCHEMA, Model, conf, succeeded, trips

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
SECRETS = ("fs.s3a.access.key", "fs.s3a.secret.key")


def land(s3, source: str, name: str, rows: pa.Table) -> None:
    filesystem, where = filesystem_for(f"{source}/{name}", s3.hadoop_options())
    buffer = io.BytesIO()
    pq.write_table(rows, buffer)
    with filesystem.open_output_stream(where) as stream:
        stream.write(buffer.getvalue())


def spark_submit_ingest(s3, args: list[str]) -> dict:
    import pyspark

    settings = s3.hadoop_options()
    public = [f"{k}={v}" for k, v in settings.items() if k not in SECRETS]
    secrets = json.dumps({k: settings[k] for k in SECRETS})
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    env[SECRET_OPTIONS_ENV] = secrets
    command = [
        str(submit),
        *("--master", "local[2]", "--conf", "spark.ui.enabled=false"),
        str(ROOT / "spark_jobs" / "ingest.py"),
        *args,
        *conf(*public),
    ]
    assert not any(settings[k] in part for k in SECRETS for part in command)
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def check(s3, spark, path: str, model: Model, step: str) -> None:
    options = s3.hadoop_options()
    ours = HudiTable.open(path, options).read()
    assert model.sorted_rows() == _data(ours), step
    oracle.assert_same_table(
        ours, oracle.snapshot(path, storage_options=object_store_options(path, options)), step
    )
    through_spark = spark_jobs.read(spark, path, options).toArrow()
    assert model.sorted_rows() == _data(through_spark), f"{step}: Spark data source"


def _data(table: pa.Table) -> list[dict]:
    return oracle.sorted_rows(table.select(TRIPS_SCHEMA.names))


def test_jobs_keep_a_merge_on_read_table_on_s3a_right(s3, spark, capsys):
    run = uuid.uuid4().hex[:8]
    path, source = f"s3a://bucket/{run}/lake/trips", f"s3a://bucket/{run}/landing/trips"
    model = Model(TRIPS_SCHEMA)
    args = ["--base-path", path, "--source-path", source, "--source-format", "parquet"]
    args += conf("hoodie.parquet.small.file.limit=0", "hoodie.compact.inline.max.delta.commits=2")
    s3_conf = conf(*(f"{k}={v}" for k, v in s3.hadoop_options().items()))

    first = trips(range(0, 30), 1)
    land(s3, source, "drop-1.parquet", first)
    line = spark_submit_ingest(s3, [*args, "--table-name", "trips", *MOR_FLAGS])
    assert (line["status"], line["action"], line["counts"]["inserts"]) == (
        "SUCCEEDED",
        "deltacommit",
        30,
    )
    model.apply(first)
    check(s3, spark, path, model, "created by spark-submit")

    time.sleep(1.1)  # S3 modification times have whole seconds: the next drop is newer
    second = trips(range(20, 40), 2, deleted=range(20, 24))
    land(s3, source, "drop-2.parquet", second)
    line = succeeded(capsys, ingest, *args, *s3_conf)
    assert line["counts"]["updates"] + line["counts"]["deletes"] == 10
    model.apply(second)
    check(s3, spark, path, model, "second drop")

    base = ["--base-path", path, "--table-name", "trips", *s3_conf]
    due = conf("hoodie.compact.inline.max.delta.commits=2")
    line = succeeded(capsys, compact, *base, "--mode", "schedule", *due)
    assert line["state"] == "REQUESTED"
    line = succeeded(capsys, compact, *base, "--mode", "execute")
    assert (line["action"], line["state"]) == ("commit", "COMPLETED")
    check(s3, spark, path, model, "compacted")
    third = trips(range(35, 45), 3)  # by the library: one more commit for the archiver
    HudiTable.open(path, s3.hadoop_options()).write(third)
    model.apply(third)

    policy = (
        "hoodie.cleaner.policy=KEEP_LATEST_FILE_VERSIONS",
        "hoodie.cleaner.fileversions.retained=1",
    )
    line = succeeded(capsys, clean, *base, *conf(*policy))
    assert line["state"] == "COMPLETED" and line["counts"]["files_deleted"] > 0
    keep = (
        "hoodie.keep.min.commits=2",
        "hoodie.keep.max.commits=3",
        "hoodie.cleaner.commits.retained=1",
    )
    line = succeeded(capsys, archive, *base, *conf(*keep))
    assert line["state"] == "COMPLETED" and line["counts"]["instants_archived"] > 0
    check(s3, spark, path, model, "cleaned and archived")


def test_the_data_source_takes_the_sessions_hadoop_s3a_settings(s3, spark):
    """Apache Hudi users configure s3a in the session (spark.hadoop.fs.s3a.*), not per read."""
    path = f"s3a://bucket/{uuid.uuid4().hex[:8]}/lake/t"
    table = HudiTable.create(
        path, name="t", record_key_fields=["uuid"], options=s3.hadoop_options()
    )
    rows = trips(range(5), 1).drop_columns(["_hoodie_is_deleted"])
    table.write(rows)
    keys = [f"spark.hadoop.{k}" for k in s3.hadoop_options()]
    for key, value in s3.hadoop_options().items():
        spark.conf.set(f"spark.hadoop.{key}", value)
    try:
        assert session_fs_options(spark) == s3.hadoop_options()
        spark_jobs.register(spark)
        read = spark.read.format("hudi").load(path).toArrow()
        assert oracle.sorted_rows(read.select(rows.column_names)) == oracle.sorted_rows(rows)
    finally:
        for key in keys:
            spark.conf.unset(key)
        spark_jobs.register(spark)
