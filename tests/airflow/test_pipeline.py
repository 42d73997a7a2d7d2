"""The README's main command end to end: examples/pipeline.py (what `./run.sh demo` runs after
its install step) drives the trips DAGs through Airflow's dag.test() on SQLite and local
Spark: three ingest runs, compaction (plan and execute as two tasks sharing one instant),
each write followed by a Hive sync, then maintenance (clean, archive). Checked here from the
outside: the table as the `hudi` package reads it, the timeline, the XComs and task states in
Airflow's database, and the Hive metastore the syncs wrote, read in a Spark driver of its own
(metastore_probe.py)."""

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


LAKE_TABLE = ("lake", "trips")
WRITES = ("commit", "deltacommit", "replacecommit")
HUDI_INPUT_FORMATS = {
    "trips_ro": "org.apache.hudi.hadoop.HoodieParquetInputFormat",
    "trips_rt": "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat",
}


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
    assert set(states.values()) == {"success"} and len(states) == 5  # hive_sync too


def _latest_commit(workdir: Path) -> str:
    """The table's newest completed write (the compaction's commit, here)."""
    timeline = HudiTable.open(str(workdir.joinpath(*LAKE_TABLE))).timeline(archived=True)
    return [i.timestamp for i in timeline if i.action in WRITES and i.is_completed][-1]


def test_every_write_ends_with_a_hive_sync_to_its_commit(pipeline_run):
    workdir, stdout = pipeline_run
    with sqlite3.connect(workdir / "airflow" / "airflow.db") as database:
        runs = database.execute(
            "SELECT r.dag_id, r.run_id, ti.state FROM dag_run r LEFT JOIN task_instance ti "
            "ON ti.dag_id = r.dag_id AND ti.run_id = r.run_id AND ti.task_id = 'hive_sync' "
            "WHERE r.dag_id IN ('trips_ingest', 'trips_compaction') ORDER BY r.start_date"
        ).fetchall()
        synced = database.execute(
            "SELECT x.dag_id, x.value FROM xcom x JOIN dag_run r ON r.id = x.dag_run_id "
            "WHERE x.task_id = 'hive_sync' AND x.key = 'instant_time' ORDER BY r.start_date"
        ).fetchall()
        written = database.execute(
            "SELECT x.value FROM xcom x JOIN dag_run r ON r.id = x.dag_run_id "
            "WHERE x.task_id IN ('ingest', 'execute_compaction') AND x.key = 'instant_time' "
            "ORDER BY r.start_date"
        ).fetchall()
    assert [(dag_id, state) for dag_id, _, state in runs] == [
        *[("trips_ingest", "success")] * 3,
        ("trips_compaction", "success"),
    ]
    # Each sync reached the commit its run wrote; the last one, the table's latest.
    assert [json.loads(value) for _, value in synced] == [json.loads(v) for (v,) in written]
    assert synced[-1][0] == "trips_compaction"
    assert json.loads(synced[-1][1]) == _latest_commit(workdir)
    assert "default.trips_ro   3 partitions" in stdout  # the demo's summary of the syncs
    assert "default.trips_rt   3 partitions" in stdout


@pytest.fixture(scope="module")
def metastore(pipeline_run):
    """What the metastore under the demo's folder holds, read by another Spark driver."""
    workdir, _ = pipeline_run
    probe = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).with_name("metastore_probe.py")),
            str(workdir / "metastore"),
            "default",
            *HUDI_INPUT_FORMATS,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert probe.returncode == 0, probe.stdout[-4000:] + probe.stderr[-4000:]
    return json.loads(probe.stdout.strip().splitlines()[-1])


def test_the_metastore_holds_the_table_synced_to_its_latest_commit(pipeline_run, metastore):
    workdir, _ = pipeline_run
    base_path = workdir.joinpath(*LAKE_TABLE)
    cities = sorted(p.name for p in base_path.iterdir() if p.is_dir() and p.name != ".hoodie")
    assert cities == sorted(pipeline.CITIES)
    assert metastore["tables"] == ["trips_ro", "trips_rt"]
    latest = _latest_commit(workdir)
    for name, input_format in HUDI_INPUT_FORMATS.items():
        table = metastore[name]
        assert table is not None, f"default.{name} is not in the metastore"
        assert table["input_format"] == input_format
        assert table["location"] == f"file:{base_path}"
        assert table["parameters"]["last_commit_time_sync"] == latest
        assert table["partitions"] == [
            {"values": [city], "location": f"file:{base_path / city}"} for city in cities
        ]
