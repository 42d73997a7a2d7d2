"""Retries are safe: the compaction's execute task, killed in the middle of its Spark job,
fails; Airflow retries it, and the retry rolls back the dead attempt's files and completes
the same instant, with the table's rows unchanged."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import psutil
import pytest

from hudi_airflow import local_run
from tests.airflow.conftest import table_entry
from tests.datagen import trips
from tests.oracle import assert_same_table, snapshot, sorted_rows
from tests.tables import create_trips_table

pytestmark = [pytest.mark.airflow, pytest.mark.spark, pytest.mark.slow]
# Short heartbeats, so the killed attempt counts as dead by the time Airflow retries.
OPTIONS = {
    "hoodie.client.heartbeat.interval_in_ms": "500",
    "hoodie.compact.inline.max.delta.commits": "2",
}


def _kill_compaction_job_once_inflight(base_path: Path, killed: list[str]) -> None:
    """Waits for the compaction's inflight file, then kills the spark-submit of compact.py
    (the JVM and its Python driver) as a crash would."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if list((base_path / ".hoodie").glob("*.compaction.inflight")):
            jobs = [
                p
                for p in psutil.Process().children(recursive=True)
                if any("compact.py" in part for part in _cmdline(p))
            ]
            for process in jobs:
                process.kill()
            killed.extend(str(p.pid) for p in jobs)
            if jobs:
                return
        time.sleep(0.02)


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return []


def test_a_killed_execute_task_is_retried_and_completes_the_same_instant(
    airflow_db, tables_file, tmp_path
):
    base_path, table = create_trips_table(tmp_path, "MERGE_ON_READ", OPTIONS)
    table.write(trips(list(range(0, 600)), seed=1, ts=1), "upsert")
    # Updates only: merge-on-read puts them in log files, which the compaction merges.
    table.write(trips(list(range(0, 300)), seed=2, ts=2), "upsert")
    table.write(trips(list(range(200, 500)), seed=3, ts=3), "upsert")
    before = table.read()
    tables_file(
        [
            table_entry(
                "trips",
                Path(base_path),
                tmp_path / "landing",
                retries=2,
                retry_delay_seconds=3,
                max_file_groups_in_worker=0,  # the compaction runs as a Spark job, killed once
                options=OPTIONS,
            )
        ]
    )
    killed: list[str] = []
    killer = threading.Thread(
        target=_kill_compaction_job_once_inflight, args=(Path(base_path), killed), daemon=True
    )
    killer.start()
    dag_run = local_run.run_dag("trips_compaction")
    killer.join(timeout=5)

    assert killed, "the compaction job was never caught in flight"
    assert str(dag_run.state) == "success", local_run.task_states(dag_run)
    execute = {ti.task_id: ti for ti in dag_run.get_task_instances()}["execute_compaction"]
    assert execute.try_number == 2  # the first try was killed
    planned = local_run.task_xcom(dag_run, "schedule_compaction", "instant_time")
    assert local_run.task_xcom(dag_run, "execute_compaction", "instant_time") == planned
    timeline = table.timeline()
    compactions = [i for i in timeline if i.action in ("commit", "compaction")]
    assert [(i.timestamp, i.action, i.is_completed) for i in compactions] == [
        (planned, "commit", True)
    ]
    after = table.read()
    assert sorted_rows(_records(after)) == sorted_rows(_records(before))
    assert_same_table(after, snapshot(base_path), "hudi-rs after the retried compaction")


def _records(rows):
    """The rows without the file they sit in (compaction moves them to new base files)."""
    return rows.drop_columns(["_hoodie_file_name"])
