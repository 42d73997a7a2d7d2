"""A job given a wrong argument, a base path with no table or the wrong table name fails
before any JVM starts (in about a second, where a spark-submit takes ten): one line of
error, the FAILED result line (and result file), exit code 1, and no JVM started. Each job
runs as spark-submit would run it, in its own interpreter, with a `java` on PATH and
JAVA_HOME that only records that it was called. No time is asserted: a loaded machine slows
an interpreter's start, but never makes it start a JVM."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hudi_core import HudiTable

ROOT = Path(__file__).resolve().parents[2]
JOBS = [
    "ingest",
    "compact",
    "cluster",
    "clean",
    "archive",
    "rollback",
    "savepoint",
    "restore",
    "hive_sync",
]
INSTANT = "20250101000000000"


def job_arguments(job: str, tmp_path: Path) -> list[str]:
    """What each job requires besides the base path."""
    required = {
        "ingest": ["--source-path", str(tmp_path / "landing"), "--source-format", "json"],
        "rollback": ["--instant-time", INSTANT],
        "restore": ["--instant-time", INSTANT],
    }
    return required.get(job, [])


@pytest.fixture
def fake_java(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose only `java` writes a marker file: a JVM start would leave it."""
    home, marker = tmp_path / "fake-jdk", tmp_path / "java-was-called"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text(f'#!/bin/sh\necho "$@" >> {marker}\nexit 1\n')
    java.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    env.update(JAVA_HOME=str(home), PATH=f"{home / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    env["PYTHONPATH"] = str(ROOT)
    return env, marker


def run_job(job: str, argv: list[str], env: dict[str, str], cwd: Path):
    """The job in its own interpreter."""
    return subprocess.run(
        [sys.executable, "-m", f"spark_jobs.{job}", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def assert_failed_fast(job, argv, fake_java, tmp_path, problem: str) -> dict:
    """Exit 1, one line of error naming `problem`, the FAILED line on stdout and in the
    result file, and no java started (fast is the absence of a JVM, not a timed limit: a
    loaded machine slows an interpreter's start but never starts a JVM for it)."""
    env, marker = fake_java
    result_file = tmp_path / f"{job}-result.json"
    done = run_job(job, [*argv, "--result-file", str(result_file)], env, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(errors) == 1, f"{job} printed more than one line of error:\n{done.stderr}"
    assert problem in errors[0], errors[0]
    stdout = [line for line in done.stdout.splitlines() if line.strip()]
    line = json.loads(stdout[-1])
    assert line["status"] == "FAILED" and line["job"] == job, line
    assert problem in line["error"], line
    assert json.loads(result_file.read_text()) == line
    assert not marker.exists(), f"{job} started java: {marker.read_text()}"
    return line


@pytest.mark.parametrize("job", JOBS)
def test_a_nonexistent_base_path_fails_fast_without_a_jvm(job, fake_java, tmp_path):
    missing = str(tmp_path / "no-table-here")
    argv = ["--base-path", missing, *job_arguments(job, tmp_path)]
    line = assert_failed_fast(job, argv, fake_java, tmp_path, missing)
    assert line["error"].startswith("TableNotFoundError"), line


@pytest.mark.parametrize("job", JOBS)
def test_a_wrong_table_name_fails_fast_without_a_jvm(job, fake_java, tmp_path):
    path = str(tmp_path / "trips")
    HudiTable.create(path, "trips", record_key_fields=["uuid"])
    argv = ["--base-path", path, "--table-name", "orders", *job_arguments(job, tmp_path)]
    line = assert_failed_fast(job, argv, fake_java, tmp_path, "orders")
    assert "(trips)" in line["error"], line


def test_ingest_creates_no_table_without_what_creating_needs(fake_java, tmp_path):
    missing = str(tmp_path / "new-table")
    argv = ["--base-path", missing, "--table-name", "trips", *job_arguments("ingest", tmp_path)]
    assert_failed_fast("ingest", argv, fake_java, tmp_path, "--record-key-field")
    assert not Path(missing).exists()


@pytest.mark.parametrize(
    ("job", "argv", "problem"),
    [
        ("compact", ["--mode", "sideways"], "sideways"),
        ("cluster", ["--layout", "spiral"], "spiral"),
        ("ingest", ["--source-format", "xml"], "xml"),
        ("ingest", ["--source-format", "json", "--checkpoint", "yesterday"], "yesterday"),
        ("ingest", ["--source-format", "json", "--filter-dupes"], "--filter-dupes"),
        ("clean", ["--hoodie-conf", "no-equals-sign"], "no-equals-sign"),
        ("clean", ["--props", "/no/such/file.properties"], "/no/such/file.properties"),
        ("rollback", [], "--instant-time"),
        ("hive_sync", ["--watermark", "soon"], "soon"),
    ],
)
def test_a_bad_argument_fails_fast_without_a_jvm(job, argv, problem, fake_java, tmp_path):
    path = str(tmp_path / "trips")
    HudiTable.create(path, "trips", record_key_fields=["uuid"])
    source = ["--source-path", str(tmp_path)] if job == "ingest" else []
    line = assert_failed_fast(
        job, ["--base-path", path, *source, *argv], fake_java, tmp_path, problem
    )
    assert line["error"].startswith("InvalidOptionError"), line


def test_bad_storage_fails_fast_without_a_jvm(fake_java, tmp_path):
    """An unsupported scheme, and secret options an orchestrator garbled, are named."""
    line = assert_failed_fast("clean", ["--base-path", "ftp://host/t"], fake_java, tmp_path, "ftp")
    assert line["error"].startswith("UnsupportedStorageError"), line
    path = str(tmp_path / "trips")
    HudiTable.create(path, "trips", record_key_fields=["uuid"])
    env, marker = fake_java
    garbled = ({**env, "HUDI_SECRET_OPTIONS": "fs.s3a.secret.key=x"}, marker)
    problem = "HUDI_SECRET_OPTIONS must hold a JSON object"
    assert_failed_fast("clean", ["--base-path", path], garbled, tmp_path, problem)


def test_apache_hudi_flag_names_are_aliases(fake_java, tmp_path):
    path = str(tmp_path / "trips")
    HudiTable.create(path, "trips", record_key_fields=["uuid"])
    streamer = ["--target-base-path", path, "--target-table", "orders"]
    argv = [*streamer, "--source-ordering-field", "ts", *job_arguments("ingest", tmp_path)]
    assert_failed_fast("ingest", argv, fake_java, tmp_path, "orders")
    compactor = ["-sp", path, "-tn", "orders", "-m", "schedule", "-st", "x", "-sm", "1g"]
    assert_failed_fast("compact", compactor, fake_java, tmp_path, "orders")
    cleaner = ["--target-base-path", str(tmp_path / "none"), "--hoodie-conf", "a=b"]
    assert_failed_fast("clean", cleaner, fake_java, tmp_path, str(tmp_path / "none"))


@pytest.mark.parametrize("job", JOBS)
def test_help_shows_every_flags_default(job, capsys):
    module = importlib.import_module(f"spark_jobs.{job}")
    with pytest.raises(SystemExit) as exited:
        module.main(["--help"])
    assert exited.value.code == 0
    options = capsys.readouterr().out.split("options:", 1)[1]
    entries = [entry for entry in re.split(r"\n  (?=-)", options) if entry.strip()]
    flags = [entry for entry in entries if not entry.strip().startswith("-h,")]
    assert len(flags) >= 6, options
    without = [entry.split()[0] for entry in flags if "(default:" not in entry]
    assert not without, f"{job} --help shows no default for {without}"


@pytest.mark.spark
def test_the_fake_java_sees_a_spark_start(fake_java, tmp_path):
    """The check above is not vacuous: starting Spark calls the fake java (and fails)."""
    env, marker = fake_java
    start = (
        "from pyspark.sql import SparkSession\n"
        "SparkSession.builder.master('local[1]').getOrCreate()"
    )
    done = subprocess.run(
        [sys.executable, "-c", start], cwd=tmp_path, env=env, capture_output=True, timeout=60
    )
    assert done.returncode != 0
    assert "org.apache.spark" in marker.read_text()
