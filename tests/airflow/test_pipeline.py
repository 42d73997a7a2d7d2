"""The README's main command end to end: examples/pipeline.py (what `./run.sh demo` runs after
its install step) drives the trips DAGs through Airflow's dag.test() on SQLite and local
Spark: three ingest runs, compaction (plan and execute as two tasks sharing one instant),
then maintenance (clean, archive). Checked here from the outside: the table as the `hudi`
package reads it, the timeline, and the XComs in Airflow's database."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from hudi import HudiReadOptions, HudiTableBuilder

from hudi_core import HudiTable

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples"))

import pipeline  # noqa: E402

pytestmark = [pytest.mark.airflow, pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def pipeline_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("pipeline")
    result = subprocess.run(
        [sys.executable, str(REPO / "examples" / "pipeline.py"), "--workdir", str(workdir)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return workdir, result.stdout


def test_hudi_rs_reads_the_expected_rows(pipeline_run):
    workdir, stdout = pipeline_run
    batches = HudiTableBuilder.from_base_uri(str(workdir / "lake" / "trips")).build()
    theirs = pa.Table.from_batches(batches.read(HudiReadOptions()))
    columns = ["uuid", "city", "rider", "fare", "ts"]
    got = {row["uuid"]: row for row in theirs.select(columns).to_pylist()}
    assert got == pipeline.expected_rows()
    assert theirs.num_rows == len(got)  # no key twice
    assert "Apache Hudi's reader returns the expected rows: True" in stdout


def test_the_timeline_shows_every_service(pipeline_run):
    workdir, stdout = pipeline_run
    table = HudiTable.open(str(workdir / "lake" / "trips"))
    active = table.timeline()
    everything = table.timeline(archived=True)
    archived = [i for i in everything if i not in set(active)]
    actions = [i.action for i in everything]
    assert actions.count("deltacommit") == 3
    assert actions.count("commit") == 1  # the compaction
    assert actions.count("clean") == 1
    assert archived and all(i.action == "deltacommit" for i in archived)
    assert all(i.is_completed for i in everything)
    for instant in everything:
        assert instant.timestamp in stdout  # the printed timeline lists each one


def test_plan_and_execute_share_one_instant_through_xcom(pipeline_run):
    workdir, _ = pipeline_run
    with sqlite3.connect(workdir / "airflow" / "airflow.db") as database:
        rows = database.execute(
            "SELECT task_id, value FROM xcom WHERE dag_id = 'trips_compaction' "
            "AND key = 'instant_time'"
        ).fetchall()
        states = dict(
            database.execute(
                "SELECT dag_id || '.' || task_id, state FROM task_instance "
                "WHERE dag_id IN ('trips_compaction', 'trips_maintenance')"
            ).fetchall()
        )
    handed = {task: json.loads(value) for task, value in rows}
    assert handed["schedule_compaction"] == handed["execute_compaction"]
    compaction = HudiTable.open(str(workdir / "lake" / "trips")).timeline(archived=True)
    assert [i.timestamp for i in compaction if i.action == "commit"] == [
        handed["schedule_compaction"]
    ]
    assert set(states.values()) == {"success"} and len(states) == 4
