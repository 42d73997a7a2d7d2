"""Cleaning (HudiTable.clean): which file slices Apache Hudi 0.14's cleaner lets go, what it
records on the timeline, and that every read the policy promises still works afterwards (ours
and hudi-rs's alike)."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import datetime
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest

from hudi_core import HudiTable
from hudi_core.errors import ConcurrentServiceError, HudiError
from hudi_core.model.file_names import BaseFileName, LogFileName
from hudi_core.services import cleaner
from hudi_core.timeline import ActiveTimeline, State, avro_metadata
from hudi_core.timeline.instant_time import parse_instant_time
from tests import datagen, oracle
from tests.killed_writer import ROOT, beating_elsewhere, kill_during_write
from tests.tables import create_trips_table

# Keys that datagen (and the killed writer) put in one partition: one small file group there.
CITY = "san_francisco"
KEYS = list(range(0, 80, 4))
ELSEWHERE = "chennai"
OTHER_KEYS = list(range(1003, 1043, 4))
COMMITS = "hoodie.cleaner.commits.retained"
POLICY = "hoodie.cleaner.policy"
VERSIONS = "hoodie.cleaner.fileversions.retained"
HOURS = "hoodie.cleaner.hours.retained"
FAST_HEARTBEAT = {
    "hoodie.client.heartbeat.interval_in_ms": 100,
    "hoodie.client.heartbeat.tolerable.misses": 2,
}


# ---- helpers


def _create(tmp_path: Path, options: dict, table_type: str = "COPY_ON_WRITE"):
    return create_trips_table(tmp_path, table_type, options)


def _batch(seed: int, keys: list[int] = KEYS, city: str = CITY) -> pa.Table:
    return datagen.trips(keys, seed=seed, ts=seed, cities=[city])


def _upsert(table: HudiTable, seed: int, keys: list[int] = KEYS, city: str = CITY) -> str:
    return table.write(_batch(seed, keys, city), operation="upsert")


def _slices(path: str, city: str = CITY) -> list[str]:
    """Base instant times of the file slices with files in a partition, oldest first."""
    times = set()
    for file in Path(path, city).iterdir():
        if (base := BaseFileName.parse(file.name)) is not None:
            times.add(base.instant_time)
        elif (log := LogFileName.parse(file.name)) is not None:
            times.add(log.base_instant_time)
    return sorted(times)


def _data_files(path: str) -> set[str]:
    return {
        str(p.relative_to(path))
        for p in Path(path).rglob("*")
        if p.is_file() and ".hoodie" not in p.parts and not p.name.startswith(".hoodie_")
    }


def _clean_files(path: str) -> list[str]:
    return sorted(p.name for p in Path(path, ".hoodie").iterdir() if ".clean" in p.name)


def _avro(path: str, name: str) -> dict:
    return avro_metadata.deserialize(Path(path, ".hoodie", name).read_bytes())


def _assert_reads_as_before(table: HudiTable, path: str, before: dict[str | None, pa.Table]):
    """Snapshot (key None) and time travel read as before the clean, and as hudi-rs reads."""
    for as_of, expected in before.items():
        ours = table.read(as_of=as_of)
        oracle.assert_same_table(ours, expected, f"ours as of {as_of} vs before the clean")
        oracle.assert_same_table(ours, oracle.snapshot(path, as_of=as_of), f"hudi-rs as of {as_of}")


def _reads(table: HudiTable, as_ofs: list[str]) -> dict[str | None, pa.Table]:
    return {None: table.read(), **{c: table.read(as_of=c) for c in as_ofs}}


def _freeze_cleaner_clock(monkeypatch, moment: datetime) -> None:
    """KEEP_LATEST_BY_HOURS measures hours back from now: pin now to a chosen moment."""

    class Frozen(datetime):
        @classmethod
        def now(cls, tz=None):
            return moment.replace(tzinfo=tz) if tz is not None else moment

    monkeypatch.setattr(cleaner, "datetime", Frozen)


# ---- KEEP_LATEST_COMMITS


def test_keep_latest_commits_cleans_nothing_until_more_than_n_commits(tmp_path):
    path, table = _create(tmp_path, {COMMITS: 6})
    commits = [_upsert(table, seed) for seed in range(1, 6)]

    assert table.clean() is None
    assert _clean_files(path) == []
    assert _slices(path) == commits


def test_keep_latest_commits_deletes_exactly_the_slices_outside_the_window(tmp_path):
    path, table = _create(tmp_path, {COMMITS: 2})
    commits = [_upsert(table, seed) for seed in range(1, 7)]
    before = _reads(table, commits)

    clean_time = table.clean()

    # The earliest commit to retain is the 2nd newest (c5); c4 is the newest slice before it.
    assert clean_time is not None
    assert _slices(path) == commits[3:]
    assert [i.timestamp for i in table.timeline() if i.action == "clean"] == [clean_time]
    assert _avro(path, f"{clean_time}.clean")["earliestCommitToRetain"] == commits[4]
    _assert_reads_as_before(table, path, {c: before[c] for c in (None, *commits[3:])})
    for gone in commits[:3]:  # their slices are gone: both readers find nothing then
        oracle.assert_same_table(table.read(as_of=gone), oracle.snapshot(path, as_of=gone))
    assert table.clean() is None  # nothing new to delete


# ---- KEEP_LATEST_FILE_VERSIONS and KEEP_LATEST_BY_HOURS


def test_keep_latest_file_versions_keeps_that_many_slices_per_file_group(tmp_path):
    path, table = _create(tmp_path, {POLICY: "KEEP_LATEST_FILE_VERSIONS", VERSIONS: 2})
    single = _upsert(table, 0, OTHER_KEYS, ELSEWHERE)  # a group with one slice only
    commits = [_upsert(table, seed) for seed in range(1, 6)]
    before = _reads(table, commits[-2:])

    clean_time = table.clean()

    assert clean_time is not None
    assert _slices(path) == commits[-2:]
    assert _slices(path, ELSEWHERE) == [single]
    plan = _avro(path, f"{clean_time}.clean.requested")
    assert plan["policy"] == "KEEP_LATEST_FILE_VERSIONS"
    assert plan["earliestInstantToRetain"] is None
    assert _avro(path, f"{clean_time}.clean")["earliestCommitToRetain"] == ""
    _assert_reads_as_before(table, path, before)


def test_file_versions_count_a_savepointed_slice_among_the_versions_kept(tmp_path):
    path, table = _create(tmp_path, {POLICY: "KEEP_LATEST_FILE_VERSIONS", VERSIONS: 2})
    commits = [_upsert(table, seed) for seed in range(1, 5)]
    table.savepoint(commits[1])
    table.savepoint(commits[3])
    commits.append(_upsert(table, 5))
    before = _reads(table, [commits[1], *commits[3:]])

    table.clean()

    # c5 and the savepointed c4 are the 2 versions kept; of the older ones the savepointed c2
    # stays, c3 and c1 go.
    assert _slices(path) == [commits[1], *commits[3:]]
    _assert_reads_as_before(table, path, before)


def test_keep_latest_by_hours_retains_the_commits_of_the_last_hours(tmp_path, monkeypatch):
    path, table = _create(tmp_path, {POLICY: "KEEP_LATEST_BY_HOURS"})
    commits = [_upsert(table, seed) for seed in range(1, 7)]
    before = _reads(table, commits[2:])

    # Every commit is older than now, so with 0 hours none is "in the window": like Hudi's
    # planner, which then has no earliest commit to retain, we scan nothing.
    assert table.clean({HOURS: 0}) is None
    # Now = c4's time: 0 hours retains c4 on; a day retains everything.
    _freeze_cleaner_clock(monkeypatch, parse_instant_time(commits[3]))
    assert table.clean({HOURS: 24}) is None
    assert _slices(path) == commits
    clean_time = table.clean({HOURS: 0})

    assert clean_time is not None
    assert _slices(path) == commits[2:]  # c3 stays: the newest slice before the window
    plan = _avro(path, f"{clean_time}.clean.requested")
    assert plan["policy"] == "KEEP_LATEST_BY_HOURS"
    assert plan["earliestInstantToRetain"]["timestamp"] == commits[3]
    _assert_reads_as_before(table, path, before)


# ---- what a clean never deletes


@pytest.mark.parametrize(
    "aggressive",
    [
        {POLICY: "KEEP_LATEST_FILE_VERSIONS", VERSIONS: 1},
        {POLICY: "KEEP_LATEST_COMMITS", COMMITS: 1},
    ],
    ids=["file-versions-1", "commits-1"],
)
def test_slices_a_pending_compaction_reads_are_never_cleaned(tmp_path, aggressive):
    path, table = _create(
        tmp_path, {"hoodie.compact.inline.max.delta.commits": 1}, table_type="MERGE_ON_READ"
    )
    first = _upsert(table, 1)
    _upsert(table, 2)
    compacted = table.compaction.run(table.compaction.schedule())  # slice 2 of the group
    _upsert(table, 4, KEYS[:10])  # a log on slice 2
    pending = table.compaction.schedule()  # reads slice 2
    _upsert(table, 6, KEYS[5:15])  # a log on the slice the pending compaction starts
    expected = _without_file_names(table.read())

    table.clean(aggressive)

    assert _slices(path) == [compacted, pending]  # only the first slice could go
    oracle.assert_same_table(_without_file_names(table.read()), expected, "while pending")
    assert first not in _slices(path)
    table.compaction.run(pending)
    oracle.assert_same_table(_without_file_names(table.read()), expected, "after compacting")
    oracle.assert_same_table(table.read(), oracle.snapshot(path), "hudi-rs after compacting")
    # No longer pinned, slice 2 goes with the next aggressive clean (due after one more
    # commit: the compaction's commit is older than the last clean's last commit).
    _upsert(table, 7, KEYS[:3])
    expected = table.read()
    table.clean({POLICY: "KEEP_LATEST_FILE_VERSIONS", VERSIONS: 1})
    assert _slices(path) == [pending]
    oracle.assert_same_table(table.read(), expected, "after cleaning")
    oracle.assert_same_table(expected, oracle.snapshot(path), "hudi-rs after cleaning")


def _without_file_names(table: pa.Table) -> pa.Table:
    """Compaction rewrites rows into a new base file: only their file name changes."""
    return table.drop_columns(["_hoodie_file_name"])


def test_savepointed_slices_are_not_cleaned_and_stay_readable(tmp_path):
    path, table = _create(tmp_path, {COMMITS: 2})
    commits = [_upsert(table, 1), _upsert(table, 2)]
    table.savepoint(commits[1])
    commits += [_upsert(table, seed) for seed in range(3, 8)]
    before = _reads(table, [commits[1], *commits[4:]])

    table.clean()

    # Retained from c6: c7, c6, c5 (newest before the window) and the savepointed c2 stay.
    assert _slices(path) == [commits[1], *commits[4:]]
    _assert_reads_as_before(table, path, before)


def test_savepoint_before_the_cleaners_retained_window_is_refused(tmp_path):
    path, table = _create(tmp_path, {COMMITS: 2})
    commits = [_upsert(table, seed) for seed in range(1, 7)]
    table.clean()  # retains from c5 on

    for too_old in (commits[0], commits[3]):
        with pytest.raises(HudiError):
            table.savepoint(too_old)
    assert table.savepoint(commits[4]) == commits[4]
    assert [s.timestamp for s in table.timeline() if s.action == "savepoint"] == [commits[4]]


# ---- replaced file groups


def _replace(table: HudiTable, operation: str) -> str:
    """Retires the file group in CITY: insert_overwrite rewrites it, delete_partition drops it."""
    return table.write(_batch(2), operation=operation)


@pytest.mark.parametrize("operation", ["insert_overwrite", "delete_partition"])
def test_replaced_file_groups_go_whole_once_the_replacecommit_leaves_the_window(
    tmp_path, operation
):
    path, table = _create(tmp_path, {COMMITS: 2})
    _upsert(table, 1)
    _upsert(table, 2, KEYS[:10])  # a second slice of the group to be replaced
    retired = _data_files(path)
    _replace(table, operation)
    _upsert(table, 3, OTHER_KEYS, ELSEWHERE)

    # The replacecommit is the earliest commit to retain: its replaced files stay.
    table.clean()
    assert retired <= _data_files(path)
    _upsert(table, 4, OTHER_KEYS, ELSEWHERE)
    before = _reads(table, [])
    assert table.clean() is not None

    assert retired & _data_files(path) == set()
    assert Path(path, CITY).exists() == (operation == "insert_overwrite")
    _assert_reads_as_before(table, path, before)


@pytest.mark.parametrize("operation", ["insert_overwrite", "delete_partition"])
def test_file_versions_policy_cleans_replaced_file_groups_right_away(tmp_path, operation):
    path, table = _create(tmp_path, {POLICY: "KEEP_LATEST_FILE_VERSIONS", VERSIONS: 3})
    _upsert(table, 1)
    _upsert(table, 1, OTHER_KEYS, ELSEWHERE)
    retired = {f for f in _data_files(path) if f.startswith(CITY)}
    _replace(table, operation)
    before = _reads(table, [])

    clean_time = table.clean()

    assert retired & _data_files(path) == set()
    _assert_reads_as_before(table, path, before)
    # A partition left without file groups goes too, as Hudi's cleaner deletes it.
    emptied = [CITY] if operation == "delete_partition" else []
    assert Path(path, CITY).exists() == (not emptied)
    assert _avro(path, f"{clean_time}.clean.requested")["partitionsToBeDeleted"] == emptied
    deleted = _avro(path, f"{clean_time}.clean")["partitionMetadata"]
    assert {p for p, m in deleted.items() if m["isPartitionDeleted"]} == set(emptied)
    _upsert(table, 3)  # writing into it again
    oracle.assert_same_table(table.read(), oracle.snapshot(path), "after writing again")


# ---- plan and metadata files


def test_clean_plan_and_metadata_are_hudis_avro_records(tmp_path):
    path, table = _create(tmp_path, {COMMITS: 2})
    commits = [_upsert(table, seed) for seed in range(1, 6)]
    doomed = sorted(f for f in _data_files(path) if any(c in f for c in commits[:2]))
    assert len(doomed) == 2

    clean_time = table.clean()

    requested, inflight = f"{clean_time}.clean.requested", f"{clean_time}.clean.inflight"
    assert _clean_files(path) == sorted([f"{clean_time}.clean", inflight, requested])
    _assert_record_of(path, requested, "HoodieCleanerPlan")
    _assert_record_of(path, inflight, "HoodieCleanerPlan")
    _assert_record_of(path, f"{clean_time}.clean", "HoodieCleanMetadata")
    plan = _avro(path, requested)
    assert _avro(path, inflight) == plan
    assert plan["policy"] == "KEEP_LATEST_COMMITS"
    assert plan["version"] == 2
    assert plan["earliestInstantToRetain"] == {
        "timestamp": commits[3],
        "action": "commit",
        "state": "COMPLETED",
    }
    assert plan["lastCompletedCommitTimestamp"] == commits[-1]
    assert plan["filesToBeDeletedPerPartition"] == {}
    assert plan["partitionsToBeDeleted"] == []
    planned = plan["filePathsToBeDeletedPerPartition"][CITY]
    assert sorted(_relative(path, f["filePath"]) for f in planned) == doomed
    assert not any(f["isBootstrapBaseFile"] for f in planned)
    _assert_clean_metadata(path, clean_time, commits, [d.rsplit("/", 1)[1] for d in doomed])


def _assert_record_of(path: str, name: str, record: str) -> None:
    """The file is an Avro container of one `record` with exactly the declared fields."""
    reader = fastavro.reader(io.BytesIO(Path(path, ".hoodie", name).read_bytes()))
    written = json.loads(reader.metadata["avro.schema"])
    declared = avro_metadata.schema_of(record)
    assert written["name"] in (record, f"org.apache.hudi.avro.model.{record}")
    assert [f["name"] for f in written["fields"]] == [f["name"] for f in declared["fields"]]
    assert len(list(reader)) == 1


def _relative(path: str, file_path: str) -> str:
    """A fully qualified plan path (`file:/...`, as Hadoop prints local paths) relative to
    the table; fails for anything not under it."""
    assert file_path.startswith("file:/"), file_path
    local = file_path.removeprefix("file:")
    assert os.path.isabs(local), file_path
    return str(Path(local).relative_to(path))


def _assert_clean_metadata(path: str, clean_time: str, commits: list[str], names: list[str]):
    metadata = _avro(path, f"{clean_time}.clean")
    assert metadata["startCleanTime"] == clean_time
    assert metadata["totalFilesDeleted"] == len(names)
    assert metadata["earliestCommitToRetain"] == commits[3]
    assert metadata["lastCompletedCommitTimestamp"] == commits[-1]
    assert metadata["version"] == 2
    partition = metadata["partitionMetadata"][CITY]
    assert partition["partitionPath"] == CITY
    assert partition["policy"] == "KEEP_LATEST_COMMITS"
    assert sorted(partition["successDeleteFiles"]) == names  # file names, not paths
    assert sorted(partition["deletePathPatterns"]) == names
    assert partition["failedDeleteFiles"] == []
    assert partition["isPartitionDeleted"] is False


# ---- trigger and automatic cleaning


def test_max_commits_spaces_cleans_that_many_commits_apart(tmp_path):
    path, table = _create(tmp_path, {COMMITS: 1, "hoodie.clean.max.commits": 3})
    commits = [_upsert(table, 1), _upsert(table, 2)]
    assert table.clean() is None  # 2 commits so far
    commits.append(_upsert(table, 3))
    assert table.clean() is not None
    assert _slices(path) == commits[1:]

    commits += [_upsert(table, 4), _upsert(table, 5)]
    assert table.clean() is None  # only 2 commits since the last clean
    assert _slices(path) == commits[1:]
    commits.append(_upsert(table, 6))
    assert table.clean() is not None
    assert _slices(path) == commits[-2:]
    assert len([i for i in table.timeline() if i.action == "clean"]) == 2


def test_automatic_clean_runs_after_each_write(tmp_path):
    path, table = _create(tmp_path, {COMMITS: 2, "hoodie.clean.automatic": True})
    commits = []
    for seed in range(1, 7):
        commits.append(_upsert(table, seed))
        assert _slices(path) == commits[-3:]

    cleans = [i for i in table.timeline() if i.action == "clean"]
    assert len(cleans) == 3 and all(c.is_completed for c in cleans)  # after c4, c5 and c6
    oracle.assert_same_table(table.read(), oracle.snapshot(path))


# ---- failed writes


def test_eager_policy_rolls_back_a_crashed_write_with_the_next_write_not_the_clean(tmp_path):
    path, table = _create(tmp_path, {COMMITS: 1})
    commits = [_upsert(table, seed) for seed in (1, 2, 3)]
    known = _data_files(path)
    kill_during_write(path, "commit", "COMPLETED", KEYS)
    failed = [i for i in table.timeline() if not i.is_completed]
    written = _data_files(path) - known
    assert len(failed) == 1 and written

    table.clean()

    assert [i for i in table.timeline() if not i.is_completed] == failed
    assert not any(i.action == "rollback" for i in table.timeline())
    assert written <= _data_files(path)
    assert _slices(path) == [*commits[1:], failed[0].timestamp]  # c1 went, c2 is the last before
    _upsert(table, 4)
    rollbacks = [i for i in table.timeline() if i.action == "rollback"]
    assert len(rollbacks) == 1
    assert _avro(path, rollbacks[0].file_name)["commitsRollback"] == [failed[0].timestamp]
    assert failed[0].timestamp not in {i.timestamp for i in table.timeline()}
    assert written & _data_files(path) == set()
    oracle.assert_same_table(table.read(), oracle.snapshot(path))


def test_lazy_policy_leaves_crashed_writes_to_the_clean_once_their_heartbeat_expired(tmp_path):
    lazy = {
        "hoodie.cleaner.policy.failed.writes": "LAZY",
        "hoodie.client.heartbeat.interval_in_ms": 5000,
        "hoodie.client.heartbeat.tolerable.misses": 2,
    }
    path, table = _create(tmp_path, {**lazy, COMMITS: 1})
    commits = [_upsert(table, 1)]
    kill_during_write(path, "commit", "COMPLETED", KEYS)
    failed = next(i for i in table.timeline() if not i.is_completed)
    commits += [_upsert(table, 2), _upsert(table, 3)]  # LAZY: these writes leave it alone
    assert failed in table.timeline()
    heartbeat = Path(path, ".hoodie", ".heartbeat", failed.timestamp)

    beating_elsewhere(heartbeat)  # the writer may still be running, on another machine
    # Left alone, and the pending write holds the window back: c1, before it, is retained.
    assert table.clean() is None
    assert failed in table.timeline()
    assert _slices(path) == sorted([*commits, failed.timestamp])

    stopped = time.time() - 60  # 60 s > 2 misses of 5 s
    os.utime(heartbeat, (stopped, stopped))
    assert table.clean() is not None

    assert failed.timestamp not in {i.timestamp for i in table.timeline()}
    rollbacks = [i for i in table.timeline() if i.action == "rollback"]
    assert _avro(path, rollbacks[0].file_name)["commitsRollback"] == [failed.timestamp]
    assert not heartbeat.exists()
    assert _slices(path) == commits[1:]  # the failed write's files, then c1 by the window
    oracle.assert_same_table(table.read(), oracle.snapshot(path))


# ---- cleans cut off


def _schedule(table: HudiTable) -> str:
    """Plans a clean without running it: what a clean cut off right after planning leaves."""
    return cleaner.Cleaner(table.storage, table.config, table.options).schedule()


def test_a_clean_cut_off_after_planning_is_finished_by_the_next_clean(tmp_path):
    path, table = _create(tmp_path, {COMMITS: 2})
    [_upsert(table, seed) for seed in range(1, 6)]
    before = _data_files(path)
    clean_time = _schedule(table)
    assert _clean_files(path) == [f"{clean_time}.clean.requested"]
    assert _data_files(path) == before  # planned, nothing deleted yet

    assert table.clean() is None  # nothing new to plan ...

    assert _clean_files(path)[0] == f"{clean_time}.clean"  # ... but the old plan ran
    metadata = _avro(path, f"{clean_time}.clean")
    assert metadata["totalFilesDeleted"] == len(before - _data_files(path)) == 2


def test_a_resumed_inflight_clean_reports_files_gone_before_as_failed_deletes(tmp_path):
    path, table = _create(tmp_path, {COMMITS: 2})
    [_upsert(table, seed) for seed in range(1, 6)]
    before = _reads(table, [])
    clean_time = _schedule(table)
    timeline = ActiveTimeline.load(table.storage)
    requested = next(i for i in timeline.instants if i.timestamp == clean_time)
    timeline.transition(requested, State.INFLIGHT, timeline.read_bytes(requested))
    planned = _avro(path, f"{clean_time}.clean.requested")["filePathsToBeDeletedPerPartition"]
    gone, left = (Path(f["filePath"].removeprefix("file:")) for f in planned[CITY])
    gone.unlink()  # deleted by the run that was cut off

    table.clean()

    assert not left.exists()
    partition = _avro(path, f"{clean_time}.clean")["partitionMetadata"][CITY]
    assert partition["successDeleteFiles"] == [left.name]
    assert partition["failedDeleteFiles"] == [gone.name]  # as Java's fs.delete returns false
    _assert_reads_as_before(table, path, before)


_KILLED_CLEAN = textwrap.dedent(
    """
    import os, signal, sys
    sys.path.insert(0, {root!r})
    from hudi_core import HudiTable
    from hudi_core.storage import Storage

    original = Storage.delete
    deleted = []

    def delete(self, relative):
        if relative.endswith(".parquet"):
            deleted.append(relative)
            if len(deleted) == 2:
                os.kill(os.getpid(), signal.SIGKILL)
        return original(self, relative)

    Storage.delete = delete
    HudiTable.open({path!r}, options={options!r}).clean()
    """
)


def test_a_clean_killed_mid_delete_leaves_a_readable_table_and_is_resumed(tmp_path):
    path, table = _create(tmp_path, {COMMITS: 2})
    commits = [_upsert(table, seed) for seed in range(1, 7)]
    before = _reads(table, commits[3:])
    code = _KILLED_CLEAN.format(root=str(ROOT), path=path, options={COMMITS: 2})
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert result.returncode == -signal.SIGKILL, result.stderr.decode()
    clean_time = _clean_files(path)[0].split(".")[0]
    assert _clean_files(path) == [f"{clean_time}.clean.inflight", f"{clean_time}.clean.requested"]
    assert len(_slices(path)) == 5  # one of the three planned files went
    _assert_reads_as_before(table, path, before)

    attempt = next((Path(path) / ".hoodie" / ".aux" / ".attempts" / clean_time).iterdir())
    beating_elsewhere(attempt)  # its attempt may still be beating, on another machine
    with pytest.raises(ConcurrentServiceError):
        table.clean()
    time.sleep(0.3)
    table.clean(FAST_HEARTBEAT)

    assert f"{clean_time}.clean" in _clean_files(path)
    assert _slices(path) == commits[3:]
    _assert_reads_as_before(table, path, before)
