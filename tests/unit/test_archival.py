"""Archival (HudiTable.archive): which instants Apache Hudi 0.14's timeline archiver moves off
the active timeline, where they go, and that reads (ours and hudi-rs's) do not change."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_core import HudiTable
from hudi_core.errors import InvalidOptionError
from hudi_core.io.log_format import HeaderKey, read_log_blocks
from hudi_core.services.archiver import Archiver
from hudi_core.timeline import Instant, State
from hudi_core.timeline.archived_timeline import (
    archive_files,
    archive_folder_path,
    read_archive_file,
    read_archived_instants,
)
from hudi_core.timeline.avro_metadata import schema_of
from tests import datagen, oracle
from tests.killed_writer import kill_during_write
from tests.tables import create_trips_table

CITY = "san_francisco"
KEYS = list(range(0, 80, 4))  # the killed writer puts these in CITY too
ELSEWHERE = "chennai"
OTHER_KEYS = list(range(1003, 1043, 4))
MIN, MAX, RETAINED = (
    "hoodie.keep.min.commits",
    "hoodie.keep.max.commits",
    "hoodie.cleaner.commits.retained",
)
BOUNDS = {MIN: 3, MAX: 5, RETAINED: 2}
FOLDER = archive_folder_path()
NOT_BY_DELTA_COMMITS = {"hoodie.compact.inline.trigger.strategy": "TIME_ELAPSED"}


# ---- helpers


def _create(tmp_path: Path, options: dict, table_type: str = "COPY_ON_WRITE"):
    return create_trips_table(tmp_path, table_type, options)


def _upsert(table: HudiTable, seed: int, keys: list[int] = KEYS, city: str = CITY) -> str:
    return table.write(datagen.trips(keys, seed=seed, ts=seed, cities=[city]), operation="upsert")


def _varied(table: HudiTable, seed: int) -> str:
    """A commit touching a moving window of keys, every other one also in a second partition:
    incremental reads of different ranges differ."""
    batch = datagen.trips(KEYS[seed % 15 : seed % 15 + 5], seed=seed, ts=seed, cities=[CITY])
    if seed % 2:
        other = OTHER_KEYS[seed % 7 : seed % 7 + 3]
        batch = pa.concat_tables([batch, datagen.trips(other, seed, seed, cities=[ELSEWHERE])])
    return table.write(batch, operation="upsert")


def _times(instants: list[Instant]) -> list[str]:
    return [i.timestamp for i in instants]


def _active_commits(table: HudiTable) -> list[str]:
    return [i.timestamp for i in table.timeline() if i.action in ("commit", "deltacommit")]


def _assert_reads_unchanged(table: HudiTable, path: str, before: dict[str | None, pa.Table]):
    for as_of, expected in before.items():
        ours = table.read(as_of=as_of)
        oracle.assert_same_table(ours, expected, f"ours as of {as_of} vs before archival")
        oracle.assert_same_table(ours, oracle.snapshot(path, as_of=as_of), f"hudi-rs as of {as_of}")


def _assert_whole_timeline(table: HudiTable, expected: list[Instant]) -> None:
    """The archived and active timeline together list every instant once, in order,
    completed."""
    listed = table.timeline(archived=True)
    assert listed == sorted(expected)
    assert len({(i.timestamp, i.action) for i in listed}) == len(listed)
    assert all(i.is_completed for i in listed)


# ---- what gets archived, and where


def test_archive_keeps_min_commits_active_and_moves_the_rest_to_the_archive(tmp_path):
    path, table = _create(tmp_path, BOUNDS)
    commits = [_varied(table, seed) for seed in range(1, 6)]
    assert table.archive() == []  # 5 commits: not more than keep.max.commits
    commits += [_varied(table, 6), _varied(table, 7)]
    everything = table.timeline()
    metadata = {c: json.loads(Path(path, ".hoodie", f"{c}.commit").read_bytes()) for c in commits}
    before = {None: table.read(), **{c: table.read(as_of=c) for c in commits[-3:]}}

    archived = table.archive()

    assert _times(archived) == commits[:4]
    assert _active_commits(table) == commits[4:]
    assert [Path(f).name for f in archive_files(table.storage, FOLDER)] == [
        ".commits_.archive.1_1-0-1"
    ]
    assert not any(Path(path, ".hoodie", f"{c}.commit").exists() for c in commits[:4])
    _assert_whole_timeline(table, everything)
    _assert_reads_unchanged(table, path, before)
    _assert_archived_entries(table, commits[:4], metadata)
    assert table.archive() == []


def _assert_archived_entries(table: HudiTable, archived: list[str], metadata: dict) -> None:
    """Every state of each archived commit is a HoodieArchivedMetaEntry; completed ones carry
    the commit's metadata (as Avro HoodieCommitMetadata)."""
    entries = read_archived_instants(table.storage, FOLDER)
    assert [(e.instant.timestamp, e.instant.state) for e in entries] == [
        (c, state) for c in archived for state in State
    ]
    for entry in entries:
        if entry.instant.is_completed:
            original = metadata[entry.instant.timestamp]
            assert entry.metadata["operationType"] == original["operationType"] == "UPSERT"
            assert _stat_paths(entry.metadata) == _stat_paths(original)
    (path,) = archive_files(table.storage, FOLDER)
    fields = {f["name"] for f in schema_of("HoodieArchivedMetaEntry")["fields"]}
    for block in read_log_blocks(table.storage, path):
        assert json.loads(block.header[HeaderKey.SCHEMA])["name"] == "HoodieArchivedMetaEntry"
    records = list(read_archive_file(table.storage, path))
    assert len(records) == len(entries) and all(set(r) <= fields for r in records)
    assert {r["actionType"] for r in records} == {"commit"}


def _stat_paths(metadata: dict) -> list[str]:
    return sorted(s["path"] for stats in metadata["partitionToWriteStats"].values() for s in stats)


# ---- bounds


def test_archival_stops_before_a_leftover_failed_write(tmp_path):
    path, table = _create(tmp_path, {**BOUNDS, "hoodie.cleaner.policy.failed.writes": "NEVER"})
    commits = [_upsert(table, 1), _upsert(table, 2)]
    kill_during_write(path, "commit", "COMPLETED", KEYS)
    commits += [_upsert(table, seed) for seed in range(3, 9)]
    before = {None: table.read()}

    # The last commit completed before the failed write stays, so does everything after.
    assert _times(table.archive()) == commits[:1]
    assert any(not i.is_completed for i in table.timeline())
    _assert_reads_unchanged(table, path, before)


def test_archival_stops_before_a_pending_compaction_and_takes_it_whole_once_done(tmp_path):
    options = {**BOUNDS, "hoodie.compact.inline.max.delta.commits": 1}
    path, table = _create(tmp_path, options, table_type="MERGE_ON_READ")
    commits = [_upsert(table, 1), _upsert(table, 2, KEYS[:5])]
    compaction = table.compaction.schedule()
    commits += [_upsert(table, seed, KEYS[seed : seed + 5]) for seed in range(3, 9)]
    everything = table.timeline()

    assert _times(table.archive(NOT_BY_DELTA_COMMITS)) == commits[:1]
    table.compaction.run(compaction)
    before = {None: table.read()}
    assert _times(table.archive(NOT_BY_DELTA_COMMITS)) == [commits[1], compaction, *commits[2:5]]

    done = Instant(compaction, "commit", State.COMPLETED)
    _assert_whole_timeline(table, [i if i.timestamp != compaction else done for i in everything])
    states = [(e.instant.action, e.instant.state) for e in _entries_of(table, compaction)]
    assert states == [
        ("compaction", State.REQUESTED),
        ("compaction", State.INFLIGHT),
        ("commit", State.COMPLETED),
    ]
    assert not list(Path(path, ".hoodie").glob(f"{compaction}.*"))
    _assert_reads_unchanged(table, path, before)


def _entries_of(table: HudiTable, timestamp: str):
    return [
        e for e in read_archived_instants(table.storage, FOLDER) if e.instant.timestamp == timestamp
    ]


def test_archival_stops_at_the_first_savepoint_unless_told_to_go_beyond(tmp_path):
    path, table = _create(tmp_path, BOUNDS)
    commits = [_upsert(table, 1), _upsert(table, 2)]
    table.savepoint(commits[1])
    commits += [_upsert(table, seed) for seed in range(3, 9)]
    before = {None: table.read(), commits[1]: table.read(as_of=commits[1])}

    assert _times(table.archive()) == commits[:1]
    # Beyond the savepoint: the savepointed commit goes too (its savepoint stays).
    assert _times(table.archive({"hoodie.archive.beyond.savepoint": True})) == commits[1:5]

    assert _active_commits(table) == commits[-3:]
    assert [i.timestamp for i in table.timeline() if i.action == "savepoint"] == [commits[1]]
    _assert_reads_unchanged(table, path, before)


def test_archival_stops_at_the_earliest_commit_the_last_clean_retained(tmp_path):
    path, table = _create(tmp_path, BOUNDS)
    commits = [_upsert(table, seed) for seed in range(1, 5)]
    table.clean()  # retains from c3 on
    commits += [_upsert(table, seed) for seed in range(5, 11)]
    before = {None: table.read()}

    assert _times(table.archive()) == commits[:2]
    _assert_reads_unchanged(table, path, before)


@pytest.mark.parametrize("operation", ["insert_overwrite", "delete_partition"])
def test_a_replacecommit_is_archived_only_once_the_files_it_replaced_are_cleaned(
    tmp_path, operation
):
    path, table = _create(tmp_path, BOUNDS)
    commits = [_upsert(table, 1)]
    commits.append(table.write(datagen.trips(KEYS, 2, 2, cities=[CITY]), operation=operation))
    commits += [_upsert(table, seed, OTHER_KEYS, ELSEWHERE) for seed in range(3, 9)]
    before = {None: table.read()}

    # Archived, the replacecommit could no longer hide the file group it replaced.
    assert _times(table.archive()) == commits[:1]
    _assert_reads_unchanged(table, path, before)
    table.clean()  # retains from c7: the replaced files go
    assert _times(table.archive()) == commits[1:5]
    _assert_reads_unchanged(table, path, before)


def test_merge_on_read_keeps_the_delta_commits_the_compaction_trigger_counts(tmp_path):
    path, table = _create(tmp_path, BOUNDS, table_type="MERGE_ON_READ")
    commits = [_upsert(table, seed, KEYS[seed % 12 : seed % 12 + 8]) for seed in range(1, 11)]
    before = {None: table.read(), commits[-1]: table.read(as_of=commits[-1])}

    # NUM_COMMITS with 5 max delta commits still counts the last 5: 5 of 10 go, not 7.
    assert _times(table.archive()) == commits[:5]
    _assert_reads_unchanged(table, path, before)
    commits += [_upsert(table, seed, KEYS[seed % 12 : seed % 12 + 8]) for seed in (11, 12)]
    before = {None: table.read(), commits[-1]: table.read(as_of=commits[-1])}
    # A trigger by time alone counts no delta commits: down to min.
    assert _times(table.archive(NOT_BY_DELTA_COMMITS)) == commits[5:9]
    _assert_reads_unchanged(table, path, before)


def test_clean_and_rollback_instants_are_archived_per_action_by_min_and_max(tmp_path):
    path, table = _create(tmp_path, {MIN: 2, MAX: 3, RETAINED: 1})
    cleans = []
    for seed in range(1, 6):  # from the 3rd commit on, each clean deletes one slice
        _upsert(table, seed)
        cleans.append(table.clean())
    cleans = [c for c in cleans if c is not None]
    assert len(cleans) == 3
    assert [i for i in table.archive() if i.action == "clean"] == []  # 3 cleans: not > max
    _upsert(table, 6)
    cleans.append(table.clean())

    archived = table.archive()
    assert [i.timestamp for i in archived if i.action == "clean"] == cleans[:2]
    rollbacks = []
    for seed in range(7, 11):
        rollbacks.append(table.rollback(_upsert(table, seed)))
    archived = table.archive()
    assert [i.timestamp for i in archived if i.action == "rollback"] == rollbacks[:2]
    left = [i for i in table.timeline() if i.action in ("clean", "rollback")]
    assert _times(left) == [*cleans[2:], *rollbacks[2:]]
    assert all(i.is_completed for i in table.timeline(archived=True))
    oracle.assert_same_table(table.read(), oracle.snapshot(path))


@pytest.mark.parametrize(
    "bounds",
    [{MIN: 5, MAX: 5}, {MIN: 6, MAX: 5}, {MIN: 3, MAX: 5, RETAINED: 3}, {MIN: 3, RETAINED: 4}],
    ids=["max-equals-min", "max-below-min", "min-equals-retained", "min-below-retained"],
)
def test_invalid_archival_bounds_are_refused(tmp_path, bounds):
    _, table = _create(tmp_path, {RETAINED: 2, MAX: 30})
    _upsert(table, 1)
    with pytest.raises(InvalidOptionError):
        table.archive(bounds)


# ---- archival cut off, reads after archival, automatic archival


def test_an_archival_cut_off_while_deleting_instant_files_is_completed_by_the_next(
    tmp_path, monkeypatch
):
    path, table = _create(tmp_path, BOUNDS)
    commits = [_upsert(table, seed) for seed in range(1, 8)]
    everything = table.timeline()
    before = {None: table.read(), **{c: table.read(as_of=c) for c in commits[-3:]}}
    delete = Archiver._delete_from_active

    def cut_off(self, timeline, entries):
        delete(self, timeline, entries[:4])  # all of c1's files and c2's requested one
        raise OSError("archival cut off")

    monkeypatch.setattr(Archiver, "_delete_from_active", cut_off)
    with pytest.raises(OSError):
        table.archive()
    monkeypatch.undo()

    assert _active_commits(table) == commits[1:]
    _assert_whole_timeline(table, everything)
    _assert_reads_unchanged(table, path, before)
    assert _times(table.archive()) == commits[1:4]
    assert _active_commits(table) == commits[4:]
    assert len(archive_files(table.storage, FOLDER)) == 2
    _assert_whole_timeline(table, everything)
    _assert_reads_unchanged(table, path, before)


def test_incremental_reads_over_the_active_range_are_unchanged_by_archival(tmp_path):
    path, table = _create(tmp_path, BOUNDS)
    commits = [_varied(table, seed) for seed in range(1, 10)]
    ranges = [(commits[5], commits[8]), (commits[6], commits[7]), (commits[5], commits[6])]
    before = {r: _incremental(table, *r) for r in ranges}

    assert _times(table.archive()) == commits[:6]

    for begin, end in ranges:
        ours = _incremental(table, begin, end)
        assert ours.num_rows > 0
        oracle.assert_same_table(ours, before[(begin, end)], f"({begin}, {end}] vs before")
        oracle.assert_same_table(ours, oracle.incremental(path, begin, end), f"({begin}, {end}]")


def _incremental(table: HudiTable, begin: str, end: str) -> pa.Table:
    return table.read(query_type="incremental", begin=begin, end=end)


def test_automatic_archival_runs_after_each_write(tmp_path):
    path, table = _create(tmp_path, {**BOUNDS, "hoodie.archive.automatic": True})
    commits, active = [], []
    for seed in range(1, 9):
        commits.append(_upsert(table, seed))
        active.append(len(_active_commits(table)))

    assert active == [1, 2, 3, 4, 5, 3, 4, 5]  # the 6th commit was one too many
    assert _active_commits(table) == commits[-5:]
    assert _times(table.timeline(archived=True)) == commits
    assert archive_files(table.storage, FOLDER)
    oracle.assert_same_table(table.read(), oracle.snapshot(path))


def test_archiving_beyond_a_savepoint_leaves_no_hole_in_the_timeline(tmp_path):
    """A commit archived after a savepointed one must still count as committed, in our
    reader and in hudi-rs (which starts the timeline at the earliest active commit)."""
    path, table = _create(tmp_path, BOUNDS)
    commits = [_upsert(table, 1), _upsert(table, 2)]
    table.savepoint(commits[1])
    commits.append(_upsert(table, 3, city="elsewhere"))  # the only commit of its partition
    commits += [_upsert(table, seed) for seed in range(4, 10)]
    before = {None: table.read(), commits[1]: table.read(as_of=commits[1])}

    table.archive({"hoodie.archive.beyond.savepoint": True})

    assert commits[2] not in _active_commits(table)
    assert "elsewhere" in table.read().column("city").to_pylist()
    _assert_reads_unchanged(table, path, before)


def test_a_hole_apache_hudi_leaves_after_a_kept_savepoint_reads_as_committed(tmp_path):
    """Apache Hudi's archiver keeps savepointed commits active while archiving later ones;
    files of those later commits count as committed (its first non-savepoint commit rule)."""
    path, table = _create(tmp_path, BOUNDS)
    commits = [_upsert(table, 1), _upsert(table, 2, city="elsewhere")]
    table.savepoint(commits[0])
    commits += [_upsert(table, seed) for seed in range(3, 6)]
    before = table.read()
    for name in os.listdir(f"{path}/.hoodie"):  # what Java's archival of commits[1] leaves
        if name.startswith(commits[1]) and "savepoint" not in name:
            os.remove(f"{path}/.hoodie/{name}")

    oracle.assert_same_table(table.read(), before, "the commit behind the hole still counts")
