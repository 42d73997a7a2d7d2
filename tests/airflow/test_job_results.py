"""A Spark job's result reaches its operator through the result file, never through the
spark-submit output: a stand-in `spark-submit` (no JVM) runs spark_jobs' result hand-over
(`cli.run`, which writes `--result-file`) and prints a result line of its own that must be
ignored. The operator pushes the result to XCom, logs it in words, fails with the job's own
error, and removes the file afterwards. The table has a clean to run (the worker plans it), so
the clean operator hands it to the job rather than skipping."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from airflow.sdk.exceptions import AirflowException
from structlog.testing import capture_logs

from hudi_airflow.operators import HudiCleanOperator
from hudi_core import HudiTable
from spark_jobs.cli import LOG4J2_CONFIG
from tests import datagen
from tests.airflow.test_plugin_parts import FakeTaskInstance

pytestmark = pytest.mark.slow  # each run starts a Python that imports spark_jobs

INSTANT = "20261122011434071"
SPARK_SUBMIT = """#!{python}
import json, os, sys
from spark_jobs import cli

arguments = sys.argv[1:]
job_arguments = arguments[[a.endswith(".py") for a in arguments].index(True) + 1:]
outcome = json.loads(os.environ["FAKE_OUTCOME"])
# What an orchestrator parsing the output would take for the result: never read.
print(json.dumps({{"job": "clean", "status": "SUCCEEDED", "instant_time": "from-stdout"}}))
if os.environ.get("FAKE_NO_RESULT_FILE"):
    sys.exit(0)


def main(argv):
    if outcome["status"] == "FAILED":
        raise OSError(outcome["error"])
    return outcome


sys.exit(cli.run("clean", main, job_arguments))
"""


@pytest.fixture
def spark_submit(tmp_path, monkeypatch):
    """A `spark-submit` first on PATH; returns the env_vars that make the operator use it.
    The table at tmp_path/t has three commits of the same keys: with one commit retained, the
    first one's files may go (the slice before the retained commit stays too)."""
    monkeypatch.setenv("HUDI_LOCK_DB_URL", f"sqlite:///{tmp_path / 'locks.db'}")
    table = HudiTable.create(str(tmp_path / "t"), "t", "COPY_ON_WRITE", ["uuid"], ["city"], "ts")
    for seed in (1, 2, 3):
        table.write(datagen.trips(list(range(10)), seed=seed, ts=seed, cities=["a"]))
    folder = tmp_path / "bin"
    folder.mkdir()
    script = folder / "spark-submit"
    script.write_text(SPARK_SUBMIT.format(python=sys.executable))
    script.chmod(0o755)

    def env_vars(outcome: dict, **extra: str) -> dict[str, str]:
        path = f"{folder}{os.pathsep}{os.environ['PATH']}"
        return {"PATH": path, "FAKE_OUTCOME": json.dumps(outcome), **extra}

    return env_vars


def _clean(tmp_path: Path, env_vars: dict[str, str], **kwargs) -> HudiCleanOperator:
    return HudiCleanOperator(
        task_id="clean",
        base_path=str(tmp_path / "t"),
        hoodie_options={"hoodie.cleaner.commits.retained": "1"},
        max_files_in_worker=0,  # however small, the clean goes to the (stand-in) Spark job
        env_vars=env_vars,
        **kwargs,
    )


def test_the_result_reaches_xcom_through_the_result_file(tmp_path, spark_submit):
    outcome = {"job": "clean", "status": "SUCCEEDED", "instant_time": INSTANT, "counts": {}}
    ti = FakeTaskInstance()
    result = _clean(tmp_path, spark_submit(outcome)).execute({"ti": ti})
    assert isinstance(result.pop("duration_s"), float)  # cli.run times the job
    assert result == outcome
    assert ti.pushed["instant_time"] == INSTANT


def test_the_operator_logs_the_result_in_words_and_quiets_sparks_start(tmp_path, spark_submit):
    counts = {"files_deleted": 12, "partitions": 2, "policy": "KEEP_LATEST_COMMITS"}
    outcome = {"job": "clean", "status": "SUCCEEDED", "instant_time": INSTANT, "counts": counts}
    operator = _clean(tmp_path, spark_submit(outcome))
    with capture_logs() as logs:
        operator.execute({"ti": FakeTaskInstance()})
    logged = [entry["event"] for entry in logs]
    assert any(line.startswith(f"clean: clean {INSTANT} deleted 12 files in 2") for line in logged)
    assert any(line.startswith("clean: took ") for line in logged), logged
    # The JVM's logging from its start follows HUDI_SPARK_LOG_LEVEL (spark_jobs/log4j2.properties).
    submit_opts = operator.env_vars["SPARK_SUBMIT_OPTS"]
    assert f"-Dlog4j2.configurationFile={LOG4J2_CONFIG.as_uri()}" in submit_opts


def test_the_result_file_goes_to_the_result_dir_and_is_removed_after(tmp_path, spark_submit):
    results = tmp_path / "results"  # a folder the driver and the worker share
    results.mkdir()
    outcome = {"job": "clean", "status": "SUCCEEDED", "instant_time": INSTANT, "counts": {}}
    operator = _clean(tmp_path, spark_submit(outcome), result_dir=str(results))
    ti = FakeTaskInstance()
    assert operator.execute({"ti": ti})["instant_time"] == INSTANT
    result_flag = operator.application_args.index("--result-file")
    assert Path(operator.application_args[result_flag + 1]).parent == results
    assert list(results.iterdir()) == []
    assert "result_dir" in operator.template_fields


def test_a_failed_job_fails_the_task_with_the_jobs_own_error(tmp_path, spark_submit):
    outcome = {"status": "FAILED", "error": "the disk is full"}
    with pytest.raises(AirflowException, match="clean.py failed: OSError: the disk is full"):
        _clean(tmp_path, spark_submit(outcome)).execute({"ti": FakeTaskInstance()})


def test_a_job_that_wrote_no_result_file_fails_whatever_it_printed(tmp_path, spark_submit):
    env_vars = spark_submit({"status": "SUCCEEDED"}, FAKE_NO_RESULT_FILE="1")
    ti = FakeTaskInstance()
    with pytest.raises(AirflowException, match="wrote no result file"):
        _clean(tmp_path, env_vars).execute({"ti": ti})
    assert ti.pushed == {}
