"""Tasks that need no Spark run in the Airflow worker and start no JVM: a clean with nothing
to delete skips (its Spark job does not run), archival runs in the worker, and the Hive sync
in hms mode syncs from the worker into a real Hive metastore, leaving the same metastore
state as hudi_core's sync_table does (the scenario of tests/hive). `spark-submit` on PATH is
a sentinel that records each call and fails: a task that reached it would fail."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from airflow.sdk.exceptions import AirflowException, AirflowSkipException

from hudi_airflow.operators import (
    HudiArchiveOperator,
    HudiCleanOperator,
    HudiCompactionOperator,
    HudiHiveSyncOperator,
)
from hudi_core import HudiTable
from hudi_core.timeline import ActiveTimeline
from tests import datagen
from tests.airflow.test_plugin_parts import FakeTaskInstance

SENTINEL = """#!/bin/sh
echo "$@" >> "{calls}"
echo "spark-submit must not run for this task" >&2
exit 3
"""


@pytest.fixture
def no_spark_submit(tmp_path, monkeypatch):
    """A failing `spark-submit` first on PATH; returns the file listing its calls."""
    monkeypatch.setenv("HUDI_LOCK_DB_URL", f"sqlite:///{tmp_path / 'locks.db'}")
    folder = tmp_path / "bin"
    folder.mkdir()
    calls = tmp_path / "spark-submit-calls"
    script = folder / "spark-submit"
    script.write_text(SENTINEL.format(calls=calls))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return calls


def _table(tmp_path: Path, commits: int) -> str:
    """A copy-on-write table with `commits` upserts of the same ten keys."""
    path = str(tmp_path / "t")
    table = HudiTable.create(path, "t", "COPY_ON_WRITE", ["uuid"], ["city"], "ts")
    for seed in range(1, commits + 1):
        table.write(datagen.trips(list(range(10)), seed=seed, ts=seed, cities=["a"]))
    return path


def _clean(path: str, max_files_in_worker: int = 1000, **options: str) -> HudiCleanOperator:
    options = {"hoodie.cleaner.commits.retained": "1", **options}
    return HudiCleanOperator(
        task_id="clean",
        base_path=path,
        hoodie_options=options,
        max_files_in_worker=max_files_in_worker,
    )


def _pending(path: str, action: str) -> list[str]:
    timeline = ActiveTimeline.load(HudiTable.open(path).storage)
    return [i.timestamp for i in timeline.pending([action])]


def test_a_clean_with_nothing_to_delete_skips_without_spark(tmp_path, no_spark_submit):
    path = _table(tmp_path, commits=2)  # the slice before the retained commit stays
    with pytest.raises(AirflowSkipException, match="lets no file go now"):
        _clean(path).execute({"ti": FakeTaskInstance()})
    assert not no_spark_submit.exists()
    assert _pending(path, "clean") == []


def test_a_small_clean_runs_in_the_worker(tmp_path, no_spark_submit):
    path = _table(tmp_path, commits=3)
    ti = FakeTaskInstance()
    result = _clean(path).execute({"ti": ti})
    assert not no_spark_submit.exists()
    assert result["status"] == "SUCCEEDED" and result["state"] == "COMPLETED"
    assert result["counts"]["files_deleted"] == 1  # the first commit's file
    assert ti.pushed["instant_time"] == result["instant_time"] and _pending(path, "clean") == []
    assert len(list((tmp_path / "t" / "a").glob("*.parquet"))) == 2


def test_a_larger_clean_is_planned_here_and_run_by_the_job(tmp_path, no_spark_submit):
    path = _table(tmp_path, commits=3)
    with pytest.raises(AirflowException, match="spark_jobs/clean.py failed"):
        _clean(path, max_files_in_worker=0).execute({"ti": FakeTaskInstance()})
    assert no_spark_submit.read_text().count("clean.py") == 1
    # The plan the worker made waits for the job (which finishes pending cleans first).
    assert len(_pending(path, "clean")) == 1


def test_a_lazy_clean_rolls_back_a_dead_write_though_nothing_is_to_delete(
    tmp_path, no_spark_submit
):
    """Under the lazy failed-writes policy the clean rolls back dead writes: a pending write
    must not let the task skip."""
    path = _table(tmp_path, commits=2)
    timeline = ActiveTimeline.load(HudiTable.open(path).storage)
    dead = timeline.new_instant_time()
    timeline.create_requested("commit", dead, b"")  # no heartbeat: its writer is gone
    lazy = {"hoodie.cleaner.policy.failed.writes": "LAZY"}
    result = _clean(path, **lazy).execute({"ti": FakeTaskInstance()})
    assert (result["state"], result["counts"]["files_deleted"]) == ("NOTHING_TO_DO", 0)
    assert _pending(path, "commit") == [] and not no_spark_submit.exists()
    assert [i.action for i in HudiTable.open(path).timeline()][-1] == "rollback"


def test_archival_runs_in_the_worker(tmp_path, no_spark_submit):
    path = _table(tmp_path, commits=5)
    options = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}
    options["hoodie.cleaner.commits.retained"] = "1"
    ti = FakeTaskInstance()
    operator = HudiArchiveOperator(task_id="archive", base_path=path, hoodie_options=options)
    result = operator.execute({"ti": ti})
    assert result["status"] == "SUCCEEDED" and result["counts"]["instants_archived"] == 3
    assert ti.pushed["instant_time"] == result["instant_time"]
    assert len(HudiTable.open(path).timeline()) == 2
    assert not no_spark_submit.exists()


@pytest.fixture(scope="module")
def metastore(tmp_path_factory):
    from tests.hive.servers import hive_metastore

    with hive_metastore(tmp_path_factory.mktemp("hive-metastore")) as server:
        yield server


@pytest.mark.slow
def test_hms_mode_syncs_from_the_worker_as_sync_table_does(tmp_path, metastore, no_spark_submit):
    from tests.hive.scenario import DATABASE, run_scenario
    from tests.hive.test_hive_sync import check_scenario
    from tests.hive.views import thrift_view

    mode = {
        "hoodie.datasource.hive_sync.mode": "hms",
        "hoodie.datasource.hive_sync.metastore.uris": metastore.uri,
    }
    results = []

    def sync(path: str, options: dict[str, str]) -> dict:
        ti = FakeTaskInstance()
        operator = HudiHiveSyncOperator(task_id="hive_sync", base_path=path, hoodie_options=options)
        result = operator.execute({"ti": ti})
        assert ti.pushed["instant_time"] == result["instant_time"]
        results.append(result)
        return result["counts"]["outcome"]

    def view() -> dict:
        with metastore.client() as client:
            return thrift_view(client, DATABASE)

    with metastore.client() as client:
        if DATABASE in client.get_all_databases():
            client.drop_database(DATABASE, True, True)
    check_scenario(run_scenario(tmp_path, mode, sync, view), datasource=True)
    assert not no_spark_submit.exists()
    assert all(r["status"] == "SUCCEEDED" and r["duration_s"] >= 0 for r in results)
    assert {r["job"] for r in results} == {"hive_sync"}


def test_jobs_with_nothing_to_run_start_no_spark_session(tmp_path, monkeypatch):
    """compact.py's schedule (nothing due) and execute (nothing pending) modes, and
    archive.py, decide in the driver's Python: no Spark session, and so no JVM under python."""
    from spark_jobs import archive, cli, compact

    def no_session(*args, **kwargs):
        raise AssertionError("this run must not start a Spark session")

    monkeypatch.setattr(cli, "spark_session", no_session)
    path = str(tmp_path / "mor")
    table = HudiTable.create(path, "mor", "MERGE_ON_READ", ["uuid"], ["city"], "ts")
    table.write(datagen.trips(list(range(10)), seed=1, ts=1, cities=["a"]))
    base = ["--base-path", path, "--hoodie-conf", "hoodie.compact.inline.max.delta.commits=5"]
    for mode in ("schedule", "execute", "scheduleAndExecute"):
        line = compact.main([*base, "--mode", mode])
        assert (line["instant_time"], line["state"]) == (None, "NOTHING_TO_DO"), mode
    assert compact.main([*base, "--mode", "schedule"])["counts"]["delta_commits"] == 1
    line = archive.main(["--base-path", path])
    assert (line["state"], line["counts"]["instants_archived"]) == ("NOTHING_TO_DO", 0)


def _planned_compaction(tmp_path: Path) -> tuple[str, str]:
    path = str(tmp_path / "mor")
    table = HudiTable.create(path, "mor", "MERGE_ON_READ", ["uuid"], ["city"], "ts")
    for seed in (1, 2):
        table.write(datagen.trips(list(range(10)), seed=seed, ts=seed, cities=["a", "b"]))
    planned = table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": "1"})
    assert planned is not None
    return path, planned


def test_a_small_compaction_runs_in_the_worker(tmp_path, no_spark_submit):
    path, planned = _planned_compaction(tmp_path)
    ti = FakeTaskInstance()
    operator = HudiCompactionOperator(task_id="execute_compaction", base_path=path)
    operator.instant_time = planned  # as rendered from the planning task's XCom
    result = operator.execute({"ti": ti})
    assert not no_spark_submit.exists()
    assert (result["instant_time"], result["state"]) == (planned, "COMPLETED")
    assert result["counts"]["file_groups"] == 2 and result["counts"]["rows_written"] == 10
    assert ti.pushed["instant_time"] == planned
    assert HudiTable.open(path).compaction.pending() == []
    assert HudiTable.open(path).read().num_rows == 10


def test_a_larger_compaction_goes_to_the_spark_job(tmp_path, no_spark_submit):
    path, planned = _planned_compaction(tmp_path)
    operator = HudiCompactionOperator(
        task_id="execute_compaction", base_path=path, max_file_groups_in_worker=1
    )
    with pytest.raises(AirflowException, match="spark_jobs/compact.py failed"):
        operator.execute({"ti": FakeTaskInstance()})  # the oldest pending plan: FIFO
    assert "compact.py" in no_spark_submit.read_text()
    assert HudiTable.open(path).compaction.pending() == [planned]
