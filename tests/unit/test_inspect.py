"""HudiTable.inspect: timelines, commit metadata, file groups, pending services and partitions,
checked against what the tables' own files show."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path

import pytest

from hudi_core import HudiTable
from hudi_core.errors import TimelineError
from hudi_core.inspect import CommitInfo, FileGroupId, InstantInfo, TableInspector
from hudi_core.timeline import ActiveTimeline, State
from hudi_core.timeline.instant_time import parse_instant_time
from tests import datagen
from tests.tables import create_trips_table, data_files, request_clustering

KEYS = list(range(8))  # two keys in each of datagen's four cities: four file groups
MOR_OPTIONS = {"hoodie.compact.inline.max.delta.commits": "2"}
ARCHIVAL = {
    "hoodie.cleaner.commits.retained": "1",
    "hoodie.keep.min.commits": "2",
    "hoodie.keep.max.commits": "3",
}
_COMPLETED_FILE = re.compile(r"^(\d{14,17})\.(commit|deltacommit|replacecommit)$")


def _upsert(table: HudiTable, seed: int, keys: list[int] = KEYS) -> str:
    instant = table.write(datagen.trips(keys, seed=seed, ts=seed), operation="upsert")
    assert instant is not None
    return instant


def _disk_files(path: str) -> dict[str, tuple[list[int], list[int]]]:
    """file id -> (sizes of its base files, sizes of its log files), from the file names."""
    found: dict[str, tuple[list[int], list[int]]] = {}
    for relative in data_files(path):
        name, size = Path(relative).name, (Path(path) / relative).stat().st_size
        is_log = ".log." in name
        file_id = (name[1:] if is_log else name).split("_")[0]
        found.setdefault(file_id, ([], []))[1 if is_log else 0].append(size)
    return found


def _raw_commit(path: str | Path, instant_time: str, action: str) -> dict:
    return json.loads((Path(path) / ".hoodie" / f"{instant_time}.{action}").read_text())


def _assert_totals_match_file(info: CommitInfo, raw: dict) -> None:
    """The totals are the sums over the commit file's write stats, read here as plain JSON."""
    stats = [s for stats in raw["partitionToWriteStats"].values() for s in stats]
    totals = info.totals
    assert totals.rows_written == sum(s["numWrites"] for s in stats)
    assert totals.rows_inserted == sum(s["numInserts"] for s in stats)
    assert totals.rows_updated == sum(s["numUpdateWrites"] for s in stats)
    assert totals.rows_deleted == sum(s["numDeletes"] for s in stats)
    assert totals.bytes_written == sum(s["totalWriteBytes"] for s in stats)
    assert totals.files_added == sum(1 for s in stats if s["prevCommit"] == "null")
    assert totals.files_added + totals.files_updated == len(stats)
    assert [p.partition for p in info.partitions] == sorted(raw["partitionToWriteStats"])
    assert info.operation_type == raw["operationType"]


# ---- tables written here


def test_active_timeline_has_every_instant_and_when_it_changed_state(tmp_path):
    _, table = create_trips_table(tmp_path, "MERGE_ON_READ", MOR_OPTIONS)
    writes = [_upsert(table, seed) for seed in (1, 2)]
    timeline = ActiveTimeline.load(table.storage)
    running = timeline.transition(
        timeline.create_requested("deltacommit", timeline.new_instant_time()), State.INFLIGHT
    )

    instants = table.inspect.timeline()

    assert [(i.timestamp, i.action, i.state) for i in instants] == [
        (i.timestamp, i.action, i.state.value) for i in table.timeline()
    ]
    assert [i.timestamp for i in instants] == [*writes, running.timestamp]
    for info in instants[:2]:
        assert info.is_completed
        assert info.requested_time <= info.inflight_time <= info.completed_time
        started = parse_instant_time(info.timestamp)
        assert abs((parse_instant_time(info.requested_time) - started).total_seconds()) < 60
    assert (instants[2].state, instants[2].completed_time) == ("INFLIGHT", None)
    assert instants[2].inflight_time is not None
    assert table.inspect.instant(writes[0]) == instants[0]
    with pytest.raises(TimelineError, match="no instant 20000101000000000"):
        table.inspect.instant("20000101000000000")


def test_file_groups_of_a_merge_on_read_table_count_logs_and_bytes(tmp_path):
    path, table = create_trips_table(tmp_path, "MERGE_ON_READ", MOR_OPTIONS)
    first = _upsert(table, 1)
    _upsert(table, 2)
    _upsert(table, 3)

    groups = table.inspect.file_groups()

    disk = _disk_files(path)
    assert {g.file_id for g in groups} == set(disk) and len(groups) == 4
    for group in groups:
        bases, logs = disk[group.file_id]
        assert len(group.slices) == 1 and not group.replaced
        assert group.latest == group.slices[0]
        assert group.latest.base_instant_time == first and group.latest.committed
        assert group.latest.base_file.size == bases[0]
        assert group.latest.base_file.path.startswith(f"{group.partition}/{group.file_id}_")
        assert len(logs) == 2  # one log file per update
        assert (group.latest.log_files, group.latest.log_bytes) == (len(logs), sum(logs))
        assert group.pending_compaction is None and group.pending_clustering is None
    partitions = table.inspect.partitions()
    assert (
        partitions == tuple(sorted(datagen.CITIES)) == tuple(sorted({g.partition for g in groups}))
    )
    assert table.inspect.file_groups(partition="chennai") == tuple(
        g for g in groups if g.partition == "chennai"
    )
    json.dumps([g.to_json() for g in groups])


def test_commit_metadata_totals_per_partition_and_file(tmp_path):
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE")
    inserted = _upsert(table, 1)
    updated = table.write(datagen.trips([0, 1, 100], seed=2, ts=2), operation="upsert")
    deleted = table.write(datagen.trips([2], seed=3, ts=3), operation="delete")

    first, second, third = (table.inspect.commit(i) for i in (inserted, updated, deleted))

    assert first.totals.rows_inserted == 8 and first.totals.files_added == 4
    assert first.totals.files_updated == 0 and len(first.partitions) == 4
    assert (second.totals.rows_inserted, second.totals.rows_updated) == (1, 2)
    assert third.totals.rows_deleted == 1 and third.operation_type == "DELETE"
    for info, instant in ((first, inserted), (second, updated), (third, deleted)):
        _assert_totals_match_file(info, _raw_commit(path, instant, "commit"))
        assert info.instant == table.inspect.instant(instant) and not info.compacted
        for partition in info.partitions:
            assert all(f.partition == partition.partition for f in partition.files)
            assert partition.totals.rows_written == sum(f.rows_written for f in partition.files)
        assert info.extra_metadata["schema"]
    # Each file write names the file it wrote, there on storage.
    for partition in second.partitions:
        for write in partition.files:
            assert write.path in data_files(path) and write.prev_commit == inserted
            assert write.file_size == os.path.getsize(Path(path) / write.path)
    assert json.loads(json.dumps(second.to_json()))["totals"]["rows_updated"] == 2
    with pytest.raises(TimelineError, match=f"commit {inserted} is not a compaction"):
        table.inspect.compaction(inserted)


def test_a_pending_compaction_its_file_groups_and_its_commit(tmp_path):
    path, table = create_trips_table(tmp_path, "MERGE_ON_READ", MOR_OPTIONS)
    for seed in (1, 2, 3):
        _upsert(table, seed)
    planned = table.compaction.schedule()
    assert planned is not None
    _upsert(table, 4)  # logs written past the plan, on the slice the compaction starts

    inspector = table.inspect
    (pending,) = inspector.pending_compactions()
    groups = inspector.file_groups()

    assert pending.instant.timestamp == planned and pending.instant.state == "REQUESTED"
    assert pending.file_groups == tuple(sorted(FileGroupId(g.partition, g.file_id) for g in groups))
    assert pending.log_files == 8  # two updates' log files in each of four groups
    for group in groups:
        assert group.pending_compaction == planned
        assert [s.base_instant_time for s in group.slices][-1] == planned
        assert not group.slices[-1].committed and group.slices[-1].base_file is None
        assert group.latest.log_files == 3  # the newest log read on top of the old slice
    with pytest.raises(TimelineError, match=f"compaction {planned} is REQUESTED"):
        inspector.commit(planned)

    done = table.compaction.run(planned)
    compacted = table.inspect.commit(done)
    assert table.inspect.pending_compactions() == ()
    assert compacted.compacted and compacted.operation_type == "COMPACT"
    assert compacted.instant.action == "commit" and compacted.instant.requested_time
    assert compacted.totals.files_updated == 4 and compacted.totals.rows_written == 8
    assert compacted.totals.log_records_compacted > 0
    assert table.inspect.instant(done, "compaction") == compacted.instant
    plan = table.inspect.compaction(done)
    assert plan.instant == compacted.instant and plan.file_groups == pending.file_groups
    assert plan.log_files == pending.log_files
    with pytest.raises(TimelineError, match="no instant compaction"):
        table.inspect.compaction(table.inspect.timeline()[0].timestamp)  # a deltacommit
    _assert_totals_match_file(compacted, _raw_commit(path, done, "commit"))


def test_a_pending_clustering_and_replaced_file_groups(tmp_path):
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE")
    _upsert(table, 1)
    clustering = request_clustering(path, "chennai")

    (pending,) = table.inspect.pending_clusterings()
    assert pending.instant.timestamp == clustering and pending.instant.action == "replacecommit"
    (clustered,) = pending.file_groups
    assert clustered.partition == "chennai"
    by_group = {FileGroupId(g.partition, g.file_id): g for g in table.inspect.file_groups()}
    assert by_group[clustered].pending_clustering == clustering
    assert all(g.pending_clustering is None for k, g in by_group.items() if k != clustered)

    table.rollback(clustering)
    overwrite = table.write(
        datagen.trips([1], seed=2, ts=2, cities=["sao_paulo"]), operation="insert_overwrite"
    )
    replaced = table.inspect.commit(overwrite).replaced_file_groups
    assert {g.partition for g in replaced} == {"sao_paulo"}
    assert table.inspect.pending_clusterings() == ()  # its plan is gone, and the overwrite had none
    after = {FileGroupId(g.partition, g.file_id): g for g in table.inspect.file_groups()}
    for key in replaced:
        assert after[key].replaced and after[key].latest is None
        assert after[key].slices == by_group[key].slices  # still on storage, for the cleaner
    live = [g for g in after.values() if g.partition == "sao_paulo" and not g.replaced]
    assert len(live) == 1 and live[0].latest.base_instant_time == overwrite


def test_archived_instants_keep_their_commit_metadata_and_times(tmp_path):
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE", ARCHIVAL)
    writes = [_upsert(table, seed) for seed in range(1, 6)]
    active = {i.timestamp: i for i in table.inspect.timeline()}
    commits = {w: table.inspect.commit(w) for w in writes}
    assert table.inspect.archived_timeline() == () and table.inspect.archive_files() == ()

    archived = table.archive()
    assert archived, "the bounds allow archiving the oldest commits"

    inspector = table.inspect
    history = inspector.archived_timeline()
    assert [(i.timestamp, i.action, i.state) for i in history] == [
        (i.timestamp, i.action, i.state.value) for i in archived
    ]
    assert {i.timestamp for i in history}.isdisjoint(i.timestamp for i in inspector.timeline())
    for info in history:
        # The archive records when each state was reached, as the active timeline showed it.
        assert info == active[info.timestamp] and info.completed_time is not None
        assert inspector.instant(info.timestamp) == info
        assert inspector.commit(info.timestamp) == commits[info.timestamp]
        assert inspector.instant_metadata(info.timestamp)["operationType"] == "UPSERT"
    (archive_file,) = inspector.archive_files()
    assert archive_file.size == os.path.getsize(Path(path) / archive_file.path)
    assert archive_file.modified_ms is not None


def test_service_metadata_and_refusals(tmp_path):
    path, table = create_trips_table(
        tmp_path, "COPY_ON_WRITE", {"hoodie.cleaner.commits.retained": "1"}
    )
    writes = [_upsert(table, seed) for seed in (1, 2, 3)]
    files = data_files(path)
    clean = table.clean()
    table.savepoint(writes[-1])

    inspector = table.inspect
    metadata = inspector.instant_metadata(clean)
    assert metadata["totalFilesDeleted"] == len(files - data_files(path)) > 0
    assert inspector.instant(writes[-1]).action == "commit"  # not the savepoint at its time
    assert inspector.instant(writes[-1]).is_write and not inspector.instant(clean).is_write
    assert inspector.instant(writes[-1], "savepoint").action == "savepoint"
    assert inspector.instant_metadata(writes[-1], "savepoint")["savepointedBy"] is not None
    assert inspector.instant_metadata(writes[0])["operationType"] == "UPSERT"
    with pytest.raises(TimelineError, match=f"clean {clean} is COMPLETED"):
        inspector.commit(clean)
    with pytest.raises(TimelineError, match="no instant"):
        inspector.commit("20000101000000000")


def test_an_inspector_answers_from_its_first_listing(tmp_path):
    _, table = create_trips_table(tmp_path, "COPY_ON_WRITE")
    _upsert(table, 1)
    inspector = table.inspect
    assert isinstance(inspector, TableInspector) and len(inspector.timeline()) == 1
    _upsert(table, 2)
    assert len(inspector.timeline()) == 1 and len(table.inspect.timeline()) == 2


# ---- tables Apache Hudi wrote


FIXTURES = [
    ("cow", "v6_simplekeygen_nonhivestyle_overwritetable"),
    ("cow", "v6_nonpartitioned"),
    ("mor", "v6_trips_8i1u_avrolog"),
    ("mor", "v6_simplekeygen_nonhivestyle_overwritetable_parquetlog"),
    ("mor", "v6_empty_parquetlog"),
]


@pytest.mark.parametrize(("kind", "stem"), FIXTURES)
def test_fixture_tables_read_as_their_files_show(hudi_fixture, kind, stem):
    path = hudi_fixture(kind, stem)
    inspector = HudiTable.open(str(path)).inspect

    completed = [
        _COMPLETED_FILE.match(f.name).groups()
        for f in sorted((path / ".hoodie").iterdir())
        if _COMPLETED_FILE.match(f.name)
    ]
    assert [(i.timestamp, i.action) for i in inspector.timeline() if i.is_completed] == completed
    for instant_time, action in completed:
        info = inspector.commit(instant_time)
        raw = _raw_commit(path, instant_time, action)
        _assert_totals_match_file(info, raw)
        replaced = raw.get("partitionToReplaceFileIds") or {}
        assert Counter(g.partition for g in info.replaced_file_groups) == Counter(
            {p: len(ids) for p, ids in replaced.items() if ids}
        )
        json.dumps(info.to_json())

    disk = _disk_files(str(path))
    groups = inspector.file_groups()
    assert {g.file_id for g in groups} == set(disk)
    for group in groups:
        bases, logs = disk[group.file_id]
        assert sorted(s.base_file.size for s in group.slices if s.base_file) == sorted(bases)
        assert sum(s.log_files for s in group.slices) == len(logs)
        assert sum(s.log_bytes for s in group.slices) == sum(logs)
    folders = {f.parent.relative_to(path).as_posix() for f in path.rglob(".hoodie_partition_*")}
    assert set(inspector.partitions()) == {"" if f == "." else f for f in folders}
    assert inspector.pending_compactions() == () and inspector.pending_clusterings() == ()
    assert inspector.archived_timeline() == ()


def test_results_are_frozen_plain_values():
    info = InstantInfo("20240105103000123", "commit", "COMPLETED")
    with pytest.raises(AttributeError):
        info.state = "INFLIGHT"  # type: ignore[misc]
    assert info.to_json() == {
        "timestamp": "20240105103000123",
        "action": "commit",
        "state": "COMPLETED",
        "requested_time": None,
        "inflight_time": None,
        "completed_time": None,
    }
