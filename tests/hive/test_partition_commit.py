"""Partition commit: success files and metastore partitions appear exactly when each trigger
says (process-time with a delay; partition-time with a watermark), against a real Hive
metastore, with a clock the tests move by hand. What the metastore holds is read through
hmsclient, not through our sync code."""

from __future__ import annotations

import datetime
import uuid
from pathlib import Path

import pyarrow as pa
import pytest
from hmsclient.genthrift.hive_metastore import ttypes

from hudi_core import HudiTable
from hudi_core.errors import InvalidOptionError, SyncError
from hudi_core.sync import sync_table
from hudi_core.sync.partition_commit import STATE_FILE, CommitRun
from tests import oracle

DAY1, DAY2, DAY3 = "dt=2024-01-01", "dt=2024-01-02", "dt=2024-01-03"
T = 1_767_225_600.0  # the fake clock's start: 2026-01-01T00:00:00Z, in seconds
KIND = "sink.partition-commit.policy.kind"
TRIGGER = "sink.partition-commit.trigger"
DELAY = "sink.partition-commit.delay"
SUCCESS_NAME = "sink.partition-commit.success-file.name"
ENABLE = "hoodie.datasource.hive_sync.enable"


class FakeClock:
    """Seconds since the epoch, as time.time gives them, moved only by `advance`."""

    def __init__(self, start: float = T) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += datetime.timedelta(**delta).total_seconds()


def utc_ms(text: str) -> int:
    moment = datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.UTC)
    return int(moment.timestamp() * 1000)


def create_events(folder: Path, table_type: str = "COPY_ON_WRITE") -> tuple[str, HudiTable]:
    path = str(folder / "events")
    table = HudiTable.create(
        path,
        "events",
        table_type=table_type,
        record_key_fields=["id"],
        partition_fields=["dt"],
        precombine_field="ts",
        options={"hoodie.datasource.write.hive_style_partitioning": "true"},
    )
    return path, table


def write(table: HudiTable, rows: list[tuple[str, str, int]]) -> None:
    """Upserts (id, dt, ts) rows; the value column says which write a row came from."""
    table.write(
        pa.table(
            {
                "id": [r[0] for r in rows],
                "dt": [r[1] for r in rows],
                "ts": pa.array([r[2] for r in rows], pa.int64()),
                "v": [f"{r[0]}@{r[2]}" for r in rows],
            }
        )
    )


def hms_options(metastore, database: str, **commit: str) -> dict[str, str]:
    return {
        ENABLE: "true",
        "hoodie.datasource.hive_sync.mode": "hms",
        "hoodie.datasource.hive_sync.metastore.uris": metastore.uri,
        "hoodie.datasource.hive_sync.database": database,
        KIND: "success-file,metastore",
        **commit,
    }


def fresh_database() -> str:
    return f"pc_{uuid.uuid4().hex[:12]}"


def registered(metastore, database: str, table: str) -> dict[str, str]:
    """The metastore's partitions of a table: 'v1/v2' -> location."""
    with metastore.client() as client:
        return {
            "/".join(p.values): p.sd.location for p in client.get_partitions(database, table, -1)
        }


def hive_tables(table_type: str) -> list[str]:
    return ["events"] if table_type == "COPY_ON_WRITE" else ["events_ro", "events_rt"]


def success_files(path: str, name: str = "_SUCCESS") -> set[str]:
    """The partitions holding a success file (each one empty)."""
    found = set()
    for file in Path(path).glob(f"*/{name}"):
        assert file.read_bytes() == b""
        found.add(file.parent.name)
    return found


def assert_run(run: CommitRun, collected, committed, waiting, watermark_ms=None) -> None:
    assert (run.collected, run.committed, run.waiting, run.watermark_ms) == (
        collected,
        committed,
        waiting,
        watermark_ms,
    )


def assert_registered(metastore, database, table_type, path, partitions: list[str]) -> None:
    """Exactly these partitions are in the metastore, in every Hive table, at their folders."""
    expected = {p.removeprefix("dt="): f"file:{path}/{p}" for p in partitions}
    for name in hive_tables(table_type):
        assert registered(metastore, database, name) == expected, name


# --- process-time ---------------------------------------------------------------------------


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_process_time_commits_after_the_delay(tmp_path, metastore, table_type):
    path, table = create_events(tmp_path, table_type)
    database = fresh_database()
    options = hms_options(metastore, database, **{TRIGGER: "process-time", DELAY: "1 h"})
    clock = FakeClock()
    write(table, [("a", "2024-01-01", 1), ("b", "2024-01-02", 1)])

    # first seen at T: the Hive tables are created, their partitions held back
    outcome = sync_table(path, options, clock=clock)
    assert_run(outcome.partition_commit, [DAY1, DAY2], [], [DAY1, DAY2])
    assert outcome.hive.created == [f"{database}.{name}" for name in hive_tables(table_type)]
    assert all(added == [] for added in outcome.hive.partitions_added.values())
    with metastore.client() as client:
        for name in hive_tables(table_type):
            assert client.get_table(database, name).tableName == name
    assert_registered(metastore, database, table_type, path, [])
    assert success_files(path) == set()

    clock.advance(minutes=59)
    outcome = sync_table(path, options, clock=clock)
    assert_run(outcome.partition_commit, [], [], [DAY1, DAY2])
    assert_registered(metastore, database, table_type, path, [])
    assert success_files(path) == set()

    clock.advance(minutes=1)  # T + 1 h: the delay has passed
    outcome = sync_table(path, options, clock=clock)
    assert_run(outcome.partition_commit, [], [DAY1, DAY2], [])
    assert success_files(path) == {DAY1, DAY2}
    assert_registered(metastore, database, table_type, path, [DAY1, DAY2])

    # T + 2 h: more data for a committed partition, and a new partition
    clock.advance(hours=1)
    write(table, [("a", "2024-01-01", 2), ("c", "2024-01-03", 2)])
    outcome = sync_table(path, options, clock=clock)
    assert_run(outcome.partition_commit, [DAY1, DAY3], [], [DAY1, DAY3])
    assert all(added == [] for added in outcome.hive.partitions_added.values())
    assert all(moved == [] for moved in outcome.hive.partitions_updated.values())
    assert success_files(path) == {DAY1, DAY2}  # dt=2024-01-03 has none yet
    assert_registered(metastore, database, table_type, path, [DAY1, DAY2])  # 01 stays

    clock.advance(minutes=59, seconds=59)
    outcome = sync_table(path, options, clock=clock)
    assert_run(outcome.partition_commit, [], [], [DAY1, DAY3])
    assert_registered(metastore, database, table_type, path, [DAY1, DAY2])

    clock.advance(seconds=1)  # T + 3 h
    outcome = sync_table(path, options, clock=clock)
    assert_run(outcome.partition_commit, [], [DAY1, DAY3], [])  # 01 committed again
    assert success_files(path) == {DAY1, DAY2, DAY3}
    assert_registered(metastore, database, table_type, path, [DAY1, DAY2, DAY3])

    clock.advance(days=30)  # nothing new: nothing happens
    outcome = sync_table(path, options, clock=clock)
    assert_run(outcome.partition_commit, [], [], [])
    assert_registered(metastore, database, table_type, path, [DAY1, DAY2, DAY3])


def test_process_time_without_delay_commits_on_the_first_sync(tmp_path, metastore):
    path, table = create_events(tmp_path)
    database = fresh_database()
    options = hms_options(metastore, database, **{TRIGGER: "process-time", DELAY: "0 s"})
    write(table, [("a", "2024-01-01", 1)])
    outcome = sync_table(path, options, clock=FakeClock())
    assert_run(outcome.partition_commit, [DAY1], [DAY1], [])
    assert success_files(path) == {DAY1}
    assert_registered(metastore, database, "COPY_ON_WRITE", path, [DAY1])


# --- partition-time -------------------------------------------------------------------------


def test_partition_time_commits_when_the_watermark_passes(tmp_path, metastore):
    path, table = create_events(tmp_path)
    database = fresh_database()
    options = hms_options(metastore, database, **{TRIGGER: "partition-time", DELAY: "1 h"})
    clock = FakeClock()
    write(table, [("a", "2024-01-01", 1), ("b", "2024-01-02", 1)])

    outcome = sync_table(path, options, clock=clock)  # no watermark yet
    assert_run(outcome.partition_commit, [DAY1, DAY2], [], [DAY1, DAY2])
    assert_registered(metastore, database, "COPY_ON_WRITE", path, [])

    # the clock does not matter for partition-time: nothing commits without a watermark
    for delta in ({"days": 1000}, {"days": -5000}, {"weeks": 10_000}):
        clock.advance(**delta)
        outcome = sync_table(path, options, clock=clock)
        assert_run(outcome.partition_commit, [], [], [DAY1, DAY2])
    assert success_files(path) == set()
    assert_registered(metastore, database, "COPY_ON_WRITE", path, [])

    almost = utc_ms("2024-01-01T00:59:59")
    outcome = sync_table(path, options, clock=clock, watermark_ms=almost)
    assert_run(outcome.partition_commit, [], [], [DAY1, DAY2], almost)
    assert success_files(path) == set()
    assert_registered(metastore, database, "COPY_ON_WRITE", path, [])

    passed = utc_ms("2024-01-01T01:00:00")  # 2024-01-01 + 1 h
    clock.advance(days=-100_000)  # still the clock does not matter
    outcome = sync_table(path, options, clock=clock, watermark_ms=passed)
    assert_run(outcome.partition_commit, [], [DAY1], [DAY2], passed)
    assert success_files(path) == {DAY1}
    assert_registered(metastore, database, "COPY_ON_WRITE", path, [DAY1])

    # an older watermark later does not move it back
    older = utc_ms("2023-12-31T00:00:00")
    outcome = sync_table(path, options, clock=clock, watermark_ms=older)
    assert_run(outcome.partition_commit, [], [], [DAY2], passed)
    outcome = sync_table(path, options, clock=clock)  # none given: the last one stands
    assert_run(outcome.partition_commit, [], [], [DAY2], passed)
    assert success_files(path) == {DAY1}
    assert_registered(metastore, database, "COPY_ON_WRITE", path, [DAY1])

    done = utc_ms("2024-01-02T01:00:00")
    outcome = sync_table(path, options, clock=clock, watermark_ms=done)
    assert_run(outcome.partition_commit, [], [DAY2], [], done)
    assert success_files(path) == {DAY1, DAY2}
    assert_registered(metastore, database, "COPY_ON_WRITE", path, [DAY1, DAY2])

    # a partition whose time the watermark already passed is committed on first sight
    write(table, [("c", "2024-01-01", 5)])
    outcome = sync_table(path, options, clock=clock)
    assert_run(outcome.partition_commit, [DAY1], [DAY1], [], done)


def test_partition_time_in_a_time_zone(tmp_path):
    """2024-01-01 in Kolkata begins at 2023-12-31T18:30Z; with no delay, that is the moment."""
    path, table = create_events(tmp_path)
    options = {
        KIND: "success-file",
        TRIGGER: "partition-time",
        "sink.partition-commit.watermark-time-zone": "Asia/Kolkata",
    }
    write(table, [("a", "2024-01-01", 1)])
    before = utc_ms("2023-12-31T18:29:59")
    outcome = sync_table(path, options, clock=FakeClock(), watermark_ms=before)
    assert_run(outcome.partition_commit, [DAY1], [], [DAY1], before)
    at = utc_ms("2023-12-31T18:30:00")
    outcome = sync_table(path, options, clock=FakeClock(), watermark_ms=at)
    assert_run(outcome.partition_commit, [], [DAY1], [], at)
    assert success_files(path) == {DAY1}


def test_watermark_never_moves_back_even_from_zero(tmp_path):
    path, table = create_events(tmp_path)
    options = {KIND: "success-file", TRIGGER: "partition-time"}
    write(table, [("a", "2024-01-01", 1)])
    assert sync_table(path, options, watermark_ms=0).partition_commit.watermark_ms == 0
    assert sync_table(path, options, watermark_ms=-1).partition_commit.watermark_ms == 0


# --- success file only ----------------------------------------------------------------------


def test_success_file_only_needs_no_metastore(tmp_path):
    path, table = create_events(tmp_path)
    options = {KIND: "success-file", SUCCESS_NAME: "_DONE", DELAY: "30 min"}
    clock = FakeClock()
    write(table, [("a", "2024-01-01", 1), ("b", "2024-01-02", 1)])

    outcome = sync_table(path, options, clock=clock)
    assert outcome.hive is None
    assert_run(outcome.partition_commit, [DAY1, DAY2], [], [DAY1, DAY2])
    clock.advance(minutes=29)
    assert_run(sync_table(path, options, clock=clock).partition_commit, [], [], [DAY1, DAY2])
    clock.advance(minutes=1)
    outcome = sync_table(path, options, clock=clock)
    assert outcome.hive is None
    assert_run(outcome.partition_commit, [], [DAY1, DAY2], [])
    assert success_files(path, "_DONE") == {DAY1, DAY2}
    assert success_files(path) == set()  # not under the default name
    assert (Path(path) / STATE_FILE).is_file()  # the state lives under .hoodie/.aux


# --- readers --------------------------------------------------------------------------------


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_readers_ignore_success_files(tmp_path, table_type):
    path, table = create_events(tmp_path, table_type)
    options = {KIND: "success-file", DELAY: "0 s"}
    write(table, [("a", "2024-01-01", 1), ("b", "2024-01-02", 1), ("c", "2024-01-02", 1)])
    sync_table(path, options, clock=FakeClock())
    write(table, [("a", "2024-01-01", 2), ("d", "2024-01-03", 2)])  # MOR: a log file in 01
    sync_table(path, options, clock=FakeClock())
    assert success_files(path) == {DAY1, DAY2, DAY3}

    ours = table.read()
    oracle.assert_same_table(ours, oracle.snapshot(path), f"{table_type} snapshot")
    values = sorted(zip(ours.column("id").to_pylist(), ours.column("v").to_pylist(), strict=True))
    assert values == [("a", "a@2"), ("b", "b@1"), ("c", "c@1"), ("d", "d@2")]
    filtered = table.read(filters=[("dt", "=", "2024-01-01")])
    theirs = oracle.snapshot(path, filters=[("dt", "=", "2024-01-01")])
    oracle.assert_same_table(filtered, theirs, f"{table_type} dt=2024-01-01")
    assert filtered.column("v").to_pylist() == ["a@2"]


# --- bad options ----------------------------------------------------------------------------


def nothing_written(path: str) -> bool:
    return not (Path(path) / STATE_FILE).exists() and not list(Path(path).glob("*/_SUCCESS"))


def test_unknown_policy_kind_is_refused(tmp_path):
    path, table = create_events(tmp_path)
    write(table, [("a", "2024-01-01", 1)])
    with pytest.raises(InvalidOptionError) as caught:
        sync_table(path, {KIND: "success-file,partition-file"}, clock=FakeClock())
    assert f"option {KIND} names unknown policies partition-file" in str(caught.value)
    assert nothing_written(path)


@pytest.mark.parametrize("delay", ["soon", "1.5 h", "-1 min"])
def test_bad_delay_is_refused(tmp_path, delay):
    path, table = create_events(tmp_path)
    write(table, [("a", "2024-01-01", 1)])
    with pytest.raises(InvalidOptionError) as caught:
        sync_table(path, {KIND: "success-file", DELAY: delay}, clock=FakeClock())
    assert f"option {DELAY}={delay!r} is not a duration" in str(caught.value)
    assert nothing_written(path)


def test_bad_delay_is_refused_before_the_metastore_changes(tmp_path, metastore):
    path, table = create_events(tmp_path)
    write(table, [("a", "2024-01-01", 1)])
    database = fresh_database()
    options = hms_options(metastore, database, **{DELAY: "an hour"})
    with pytest.raises(InvalidOptionError, match=f"option {DELAY}='an hour'"):
        sync_table(path, options, clock=FakeClock())
    with metastore.client() as client, pytest.raises(ttypes.NoSuchObjectException):
        client.get_database(database)
    assert nothing_written(path)


def test_bad_trigger_is_refused(tmp_path):
    path, table = create_events(tmp_path)
    write(table, [("a", "2024-01-01", 1)])
    with pytest.raises(InvalidOptionError) as caught:
        sync_table(path, {KIND: "success-file", TRIGGER: "event-time"}, clock=FakeClock())
    assert f"option {TRIGGER}='event-time' is not one of PROCESS-TIME, PARTITION-TIME" in str(
        caught.value
    )


def test_metastore_policy_without_hive_sync_is_refused(tmp_path, metastore):
    path, table = create_events(tmp_path)
    write(table, [("a", "2024-01-01", 1)])
    database = fresh_database()
    options = hms_options(metastore, database)
    del options[ENABLE]
    with pytest.raises(InvalidOptionError) as caught:
        sync_table(path, options, clock=FakeClock())
    assert f"option {KIND} names metastore" in str(caught.value)
    assert f"{ENABLE}=true" in str(caught.value)
    options[ENABLE] = "false"
    with pytest.raises(InvalidOptionError, match=f"{ENABLE}=true"):
        sync_table(path, options, clock=FakeClock())
    with metastore.client() as client, pytest.raises(ttypes.NoSuchObjectException):
        client.get_database(database)
    assert nothing_written(path)


def test_partition_time_of_an_unreadable_partition_names_it(tmp_path):
    path = str(tmp_path / "cities")
    table = HudiTable.create(
        path, "cities", record_key_fields=["id"], partition_fields=["city"], precombine_field="ts"
    )
    table.write(pa.table({"id": ["a"], "city": ["sf"], "ts": [1]}))
    options = {KIND: "success-file", TRIGGER: "partition-time"}
    with pytest.raises(SyncError) as caught:
        sync_table(path, options, clock=FakeClock(), watermark_ms=utc_ms("2024-01-01T00:00"))
    assert "cannot read a time from partition 'sf'" in str(caught.value)
    assert "partition.time-extractor.timestamp-formatter" in str(caught.value)
    assert not list(Path(path).glob("*/_SUCCESS"))
