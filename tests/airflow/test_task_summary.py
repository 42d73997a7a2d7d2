"""Task logs in words (hudi_airflow.task_summary): each job kind's result, as the jobs write
it (spark_jobs.cli.result), becomes sentences carrying its real numbers; the planning
operators log what they planned or why they skip, on a real table; the Hive sync operator and
the sensors say why they skip."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from hudi_airflow.operators import HudiHiveSyncOperator, HudiScheduleCompactionOperator
from hudi_airflow.sensors import HudiInstantSensor
from hudi_airflow.task_summary import summary_lines
from hudi_core import HudiTable
from tests import datagen
from tests.airflow.test_plugin_parts import FakeTaskInstance

BASE = "/data/lake/trips"
INSTANT = "20261128093012345"


def result(job, instant=INSTANT, action=None, state="COMPLETED", duration_s=None, **counts):
    """A job's result line, as spark_jobs.cli.result and cli.run make it."""
    line = {
        "job": job,
        "status": "SUCCEEDED",
        "base_path": BASE,
        "instant_time": instant,
        "action": action,
        "state": state if instant is not None else "NOTHING_TO_DO",
        "counts": counts,
    }
    return line if duration_s is None else {**line, "duration_s": duration_s}


# ---- each job kind


def test_ingest_with_data_says_what_it_read_and_wrote_and_how_long_it_took():
    line = result(
        "ingest",
        action="deltacommit",
        duration_s=12.43,
        files=3,
        bytes_read=1_258_291,
        source_path="/landing/trips",
        since_checkpoint="1767225600000",
        checkpoint="1767229200000",
        operation="UPSERT",
        rows_written=250,
        inserts=200,
        updates=50,
        deletes=0,
        file_groups=4,
        rounds=1,
    )
    assert summary_lines("ingest", line) == [
        "ingest: read 3 files (1.2 MB) from /landing/trips since checkpoint 1767225600000",
        f"ingest: wrote deltacommit {INSTANT} (UPSERT): 250 records (200 inserts, 50 updates, "
        "0 deletes) in 4 file groups; checkpoint now 1767229200000",
        "ingest: took 12.4 s",
    ]


def test_ingest_with_nothing_new_says_since_which_checkpoint():
    line = result("ingest", None, files=0, checkpoint="1767225600000", rounds=1)
    assert summary_lines("ingest", line) == [
        "ingest: nothing to do: no new source files since checkpoint 1767225600000"
    ]
    first = result("ingest", None, files=0, checkpoint=None, rounds=1)
    assert summary_lines("ingest", first) == [
        "ingest: nothing to do: no new source files (no checkpoint yet: from the start)"
    ]


def test_ingest_of_an_upstream_table_counts_commits_after_its_instant():
    line = result("ingest", None, commits=0, checkpoint="20261128000000000", source="orders")
    assert summary_lines("ingest", line) == [
        "ingest: nothing to do: no new commits in the upstream table after instant "
        "20261128000000000 for source orders"
    ]
    read = result(
        "ingest", action="commit", commits=2, bytes_read=3 << 20, source_path="/lake/raw",
        since_checkpoint="20261128000000000", checkpoint="20261128010000000",
    )  # fmt: skip
    assert summary_lines("ingest", read)[0] == (
        "ingest: read 2 commits (3.0 MB) from /lake/raw after instant 20261128000000000"
    )


def test_a_first_ingest_reads_from_the_start():
    line = result(
        "ingest", action="commit", files=1, bytes_read=512, source_path="/landing/t", inserts=7
    )
    lines = summary_lines("ingest", line)
    assert lines[0] == (
        "ingest: read 1 file (512 B) from /landing/t (no checkpoint yet: from the start)"
    )
    assert lines[1].startswith(f"ingest: wrote commit {INSTANT}: 0 records (7 inserts,")


def test_compaction_planned_by_the_job():
    line = result("compact", action="compaction", state="REQUESTED", file_groups=4, log_files=7)
    assert summary_lines("compact", line) == [
        f"compaction: planned compaction {INSTANT} of 4 file groups (7 log files)"
    ]


def test_compaction_completed_counts_file_groups_and_records():
    line = result(
        "compact", action="commit", file_groups=2, log_files=3, rows_written=20, log_records=7
    )
    assert summary_lines("compact", line) == [
        f"compaction: completed compaction {INSTANT}: 2 file groups merged with their 3 log "
        "files (7 log records), 20 records written"
    ]


def test_compaction_none_due_says_where_the_trigger_stands():
    line = result(
        "compact",
        None,
        file_groups=0,
        mode="scheduleAndExecute",
        pending=0,
        due=False,
        trigger="NUM_COMMITS",
        delta_commits=2,
        max_delta_commits=5,
        seconds_since_last=40,
        max_delta_seconds=3600,
    )
    assert summary_lines("compact", line) == [
        "compaction: nothing to do: no compaction is due (2 of 5 delta commits since the last) "
        "and none is pending"
    ]
    by_time = {**line["counts"], "trigger": "NUM_OR_TIME", "pending": 1}
    assert summary_lines("compact", {**line, "counts": by_time}) == [
        "compaction: nothing to do: no compaction is due (2 of 5 delta commits or 40 s of "
        "60 min since the last) and 1 earlier plan pending (--mode execute runs them)"
    ]
    execute = result("compact", None, file_groups=0, mode="execute", pending=0)
    assert summary_lines("compact", execute) == [
        "compaction: nothing to do: no compaction is pending"
    ]


def test_cluster_planned_and_completed():
    planned = result("cluster", action="replacecommit", state="REQUESTED", file_groups=8)
    assert summary_lines("cluster", planned) == [
        f"clustering: planned clustering {INSTANT} of 8 file groups"
    ]
    done = result(
        "cluster", action="replacecommit", file_groups=8, files_written=2, rows_written=40
    )
    assert summary_lines("cluster", done) == [
        f"clustering: completed clustering {INSTANT}: 8 file groups rewritten into 2 files, "
        "40 records"
    ]
    none = result(
        "cluster", None, file_groups=0, mode="scheduleAndExecute", pending=0,
        small_file_limit=300 << 20,
    )  # fmt: skip
    assert summary_lines("cluster", none) == [
        "clustering: nothing to do: no file group qualifies for clustering (none has a base "
        "file under 300.0 MB outside pending plans) and none is pending"
    ]


def test_clean_counts_files_and_partitions_by_its_policy():
    line = result(
        "clean",
        action="clean",
        files_deleted=12,
        files_failed=0,
        partitions=2,
        earliest_commit_to_retain="20261127000000000",
        policy="KEEP_LATEST_COMMITS",
        retained=10,
        retained_unit="commits",
    )
    assert summary_lines("clean", line) == [
        f"clean: clean {INSTANT} deleted 12 files in 2 partitions (KEEP_LATEST_COMMITS: the "
        "latest 10 commits kept, commits from 20261127000000000 on)"
    ]
    none = result(
        "clean", None, files_deleted=0, policy="KEEP_LATEST_FILE_VERSIONS", retained=3,
        retained_unit="file versions",
    )  # fmt: skip
    assert summary_lines("clean", none) == [
        "clean: nothing to do: no file slice is past the retention (KEEP_LATEST_FILE_VERSIONS: "
        "the latest 3 file versions kept)"
    ]


def test_archive_counts_the_instants_moved_and_left():
    line = result(
        "archive",
        action="archive",
        instants_archived=8,
        oldest_archived="20261101000000000",
        active_instants=24,
        keep_min_commits=20,
        keep_max_commits=30,
    )
    assert summary_lines("archive", line) == [
        f"archive: archived 8 instants (20261101000000000 .. {INSTANT}); 24 instants stay on "
        "the active timeline"
    ]
    none = result("archive", None, instants_archived=0, active_instants=12, keep_max_commits=30)
    assert summary_lines("archive", none) == [
        "archive: nothing to do: the active timeline holds 12 instants; archival starts beyond "
        "30 completed commits (hoodie.keep.max.commits)"
    ]


def test_hive_sync_counts_tables_and_partitions():
    outcome = {"hive": {"synced_to": INSTANT}, "partition_commit": {"committed": ["city=a"]}}
    line = result(
        "hive_sync",
        action="hive_sync",
        tables_created=2,
        tables=["default.trips_ro", "default.trips_rt"],
        columns_updated=0,
        partitions_added=3,
        partitions_updated=1,
        partitions_dropped=0,
        partitions_committed=1,
        partitions_waiting=2,
        outcome=outcome,
    )
    assert summary_lines("hive_sync", line) == [
        f"hive_sync: synced default.trips_ro, default.trips_rt to commit {INSTANT}: 2 tables "
        "created, 3 partitions added, 1 moved, 0 dropped",
        "hive_sync: partition commit: 1 partition committed, 2 waiting",
    ]
    unchanged = {**line, "counts": {"outcome": {"hive": {}, "partition_commit": None}}}
    assert summary_lines("hive_sync", unchanged) == [
        f"hive_sync: the Hive tables are in sync with commit {INSTANT}: nothing changed"
    ]
    off = result("hive_sync", None, outcome={"hive": None, "partition_commit": None})
    assert summary_lines("hive_sync", off)[0].startswith(
        "hive_sync: nothing to do: the Hive sync is off (hoodie.datasource.hive_sync.enable)"
    )


def test_bootstrap_lists_its_commits_and_counts():
    line = result(
        "bootstrap",
        "00000000000002",
        action="commit",
        source_path="/warehouse/trips",
        instants=["00000000000001", "00000000000002"],
        operations={"00000000000001": "BOOTSTRAP", "00000000000002": "BULK_INSERT"},
        partitions=4,
        files_written=10,
        rows_written=1000,
    )
    assert summary_lines("bootstrap", line) == [
        "bootstrap: bootstrapped /warehouse/trips in 2 commits (00000000000001 BOOTSTRAP, "
        "00000000000002 BULK_INSERT): 4 partitions, 10 files, 1000 records"
    ]


def test_a_job_without_phrasing_lists_its_counts():
    line = result("mystery", action="commit", widgets=3)
    assert summary_lines("mystery", line) == [f"mystery: commit {INSTANT}: widgets 3"]


# ---- the operators and sensors log it


@pytest.fixture
def mor_table(tmp_path, monkeypatch):
    """A merge-on-read table with two delta commits (hudi_core, no Spark); the platform's
    database lock on a SQLite file."""
    monkeypatch.setenv("HUDI_LOCK_DB_URL", f"sqlite:///{tmp_path / 'locks.db'}")
    path = str(tmp_path / "trips")
    table = HudiTable.create(path, "trips", "MERGE_ON_READ", ["uuid"], ["city"], "ts")
    for seed in (1, 2):
        table.write(datagen.trips(list(range(10)), seed=seed, ts=seed, cities=["a", "b"]))
    return path


def _schedule(path: str, max_delta_commits: int):
    operator = HudiScheduleCompactionOperator(
        task_id="schedule",
        base_path=path,
        hoodie_options={"hoodie.compact.inline.max.delta.commits": str(max_delta_commits)},
    )
    ti = FakeTaskInstance()
    with capture_logs() as logs:
        try:
            outcome = operator.execute({"ti": ti})
        except Exception as exc:  # noqa: BLE001 - the skip, returned for the test to check
            outcome = exc
    return outcome, [entry["event"] for entry in logs], ti


def test_the_schedule_operator_logs_why_it_skips(mor_table):
    from airflow.sdk.exceptions import AirflowSkipException

    outcome, logged, ti = _schedule(mor_table, 5)
    reason = (
        "compaction: nothing to do: no compaction is due (2 of 5 delta commits since the last) "
        "and none is pending"
    )
    assert isinstance(outcome, AirflowSkipException) and str(outcome) == reason
    assert reason in logged
    assert ti.pushed == {}


def test_the_schedule_operator_logs_what_it_planned(mor_table):
    planned, logged, ti = _schedule(mor_table, 2)
    assert ti.pushed["instant_time"] == planned
    assert f"compaction: planned compaction {planned} of 2 file groups" in logged
    assert f"compaction: to execute: {planned} (the oldest of 1 pending, FIFO)" in logged


def test_the_hive_sync_operator_logs_why_it_skips(tmp_path):
    from airflow.sdk.exceptions import AirflowSkipException

    operator = HudiHiveSyncOperator(task_id="sync", base_path=str(tmp_path / "none"))
    with capture_logs() as logs, pytest.raises(AirflowSkipException):
        operator.execute({"ti": FakeTaskInstance()})
    reason = f"hive_sync: nothing to do: no table at {tmp_path / 'none'} yet: nothing to sync"
    assert reason in [entry["event"] for entry in logs]


def test_a_sensor_that_times_out_says_what_it_waited_for(tmp_path):
    from airflow.sdk.exceptions import AirflowSkipException

    sensor = HudiInstantSensor(
        task_id="wait",
        base_path=str(tmp_path / "none"),
        action="deltacommit",
        after_instant=INSTANT,
        timeout=0,
        poke_interval=0,
        soft_fail=True,
    )
    with capture_logs() as logs, pytest.raises(AirflowSkipException):
        sensor.execute({"ti": FakeTaskInstance()})
    assert (
        f"sensor: no completed deltacommit newer than {INSTANT} on {tmp_path / 'none'} "
        "within 0 s: skipping"
    ) in [entry["event"] for entry in logs]
