"""What a job run by spark-submit leaves in the task log and in its working directory: with
the environment the operators give spark-submit (spark_jobs.cli.submit_env), no Spark INFO
line by default (WARN), Spark's INFO lines when HUDI_SPARK_LOG_LEVEL=INFO, the JSON result
last on stdout; and no spark-warehouse (or Derby files) in the working directory, the
warehouse going to a temporary folder, or under HUDI_SPARK_WORK_DIR.

Each spark-submit costs seconds: two runs, ingesting two drops into one table."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hudi_core.errors import InvalidOptionError
from spark_jobs import cli
from tests import datagen

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SPARK_INFO = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d INFO ", re.MULTILINE)
LEFT_BEHIND = ("spark-warehouse", "metastore_db", "derby.log")


def spark_submit(cwd: Path, env: dict[str, str], *job_args: str) -> tuple[str, dict]:
    """Runs ingest.py as the operators do (their environment, stderr merged into stdout as
    SparkSubmitHook reads it) from `cwd`; its output and the result line."""
    import pyspark

    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    python = {"PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    done = subprocess.run(
        [
            str(submit),
            *("--master", "local[2]", "--conf", "spark.ui.enabled=false"),
            str(ROOT / "spark_jobs" / "ingest.py"),
            *job_args,
        ],
        cwd=cwd,
        env=cli.submit_env({**os.environ, **python, **env}),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:]
    # The result line is the last one at WARN; at INFO, Spark's lines stopping it follow.
    results = [line for line in done.stdout.splitlines() if line.startswith('{"')]
    return done.stdout, json.loads(results[-1])


def drop(path: Path, keys: range, seed: int) -> None:
    """A source file of trips (later seeds win)."""
    pq.write_table(datagen.trips(list(keys), seed=seed, ts=seed, cities=["a", "b"]), path)


def test_spark_logs_at_warn_by_default_and_nothing_is_left_in_the_working_directory(
    tmp_path, monkeypatch
):
    for name in (cli.LOG_LEVEL_ENV, cli.WORK_DIR_ENV, "SPARK_SUBMIT_OPTS", "SPARK_CONF_DIR"):
        monkeypatch.delenv(name, raising=False)
    cwd, landing, work = tmp_path / "cwd", tmp_path / "landing", tmp_path / "work"
    cwd.mkdir()
    landing.mkdir()
    table = [
        *("--base-path", str(tmp_path / "trips"), "--table-name", "trips"),
        *("--source-path", str(landing), "--source-format", "parquet"),
        *("--record-key-field", "uuid", "--partition-path-field", "city"),
        *("--precombine-field", "ts"),
    ]
    drop(landing / "1.parquet", range(20), 1)

    output, line = spark_submit(cwd, {}, *table)
    assert not SPARK_INFO.findall(output), output
    assert output.strip().splitlines()[-1].startswith('{"'), output  # the result line last
    assert line["status"] == "SUCCEEDED" and line["counts"]["inserts"] == 20
    assert line["counts"]["bytes_read"] == (landing / "1.parquet").stat().st_size
    assert isinstance(line["duration_s"], float)
    assert sorted(p.name for p in cwd.iterdir()) == []

    drop(landing / "2.parquet", range(10, 30), 2)
    info = {cli.LOG_LEVEL_ENV: "INFO", cli.WORK_DIR_ENV: str(work)}
    output, line = spark_submit(cwd, info, *table)
    assert len(SPARK_INFO.findall(output)) > 20, output[-3000:]
    assert f"Warehouse path is 'file:{work}/warehouse'" in output
    assert (line["counts"]["inserts"], line["counts"]["updates"]) == (10, 10)
    assert not any((cwd / name).exists() for name in LEFT_BEHIND)


def test_the_log_level_is_the_flags_else_the_environments_else_warn(monkeypatch):
    monkeypatch.delenv(cli.LOG_LEVEL_ENV, raising=False)
    assert cli.log_level() == "WARN"
    monkeypatch.setenv(cli.LOG_LEVEL_ENV, "info")
    assert cli.log_level() == "INFO"
    assert cli.log_level("ERROR") == "ERROR"
    monkeypatch.setenv(cli.LOG_LEVEL_ENV, "LOUD")
    with pytest.raises(InvalidOptionError, match="HUDI_SPARK_LOG_LEVEL must be one of"):
        cli.log_level()


def test_a_deployments_own_log4j2_configuration_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.delenv("SPARK_SUBMIT_OPTS", raising=False)
    (tmp_path / "log4j2.properties").write_text("rootLogger.level = info\n")
    assert "SPARK_SUBMIT_OPTS" not in cli.submit_env({"SPARK_CONF_DIR": str(tmp_path)})
    given = {"SPARK_SUBMIT_OPTS": "-Xss4m"}
    assert cli.submit_env(given)["SPARK_SUBMIT_OPTS"].startswith("-Xss4m -Dlog4j2.")
    work = {cli.WORK_DIR_ENV: str(tmp_path / "work")}
    assert cli.submit_env(work)["SPARK_LOCAL_DIRS"] == str(tmp_path / "work" / "local")
