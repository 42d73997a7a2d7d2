"""The Hudi view's table summary (hudi_airflow/ui/summary.py) on merge-on-read tables
written with hudi_core: timeline counts, pending compactions, last clean, archival, files."""

from __future__ import annotations

import json
from pathlib import Path

from hudi_airflow.tables_config import TableEntry
from hudi_airflow.ui.summary import (
    ERROR,
    NOT_CREATED,
    OK,
    FileStats,
    instant_time_text,
    summarize,
    summarize_all,
)
from hudi_core import HudiTable
from hudi_core.timeline import ActiveTimeline, State
from tests import datagen
from tests.tables import create_trips_table, data_files

KEYS = list(range(8))  # two keys in each of datagen's four cities: four file groups
OPTIONS = {
    "hoodie.compact.inline.max.delta.commits": "2",
    "hoodie.cleaner.commits.retained": "1",
    "hoodie.keep.min.commits": "2",
    "hoodie.keep.max.commits": "3",
}


def _entry(name: str, base_path: str) -> TableEntry:
    return TableEntry(
        name=name,
        base_path=base_path,
        table_type="MERGE_ON_READ",
        record_key_field="uuid",
        partition_path_field="city",
        precombine_field="ts",
        source_path="/nowhere",
        source_format="parquet",
    )


def _mor_table(tmp_path: Path) -> tuple[str, HudiTable]:
    return create_trips_table(tmp_path, "MERGE_ON_READ", OPTIONS)


def _upserts(table: HudiTable, seeds: range) -> list[str]:
    return [table.write(datagen.trips(KEYS, seed=s, ts=s), operation="upsert") for s in seeds]


def _files_on_disk(path: str) -> FileStats:
    """What the data files under `path` add up to, counted from the file names."""
    stats = FileStats()
    for relative in data_files(path):
        size = (Path(path) / relative).stat().st_size
        if relative.endswith(".parquet"):
            stats.base_files += 1
            stats.base_bytes += size
        else:
            assert ".log." in relative, relative
            stats.log_files += 1
            stats.log_bytes += size
    return stats


def _same_files(stats: FileStats, expected: FileStats) -> None:
    for name in ("base_files", "base_bytes", "log_files", "log_bytes"):
        assert getattr(stats, name) == getattr(expected, name), name


def test_a_table_not_created_yet_is_reported_as_such(tmp_path):
    summary = summarize(_entry("later", str(tmp_path / "absent")))

    assert summary.status == NOT_CREATED
    assert summary.table_type == "MERGE_ON_READ"
    assert summary.instants == [] and summary.last_clean is None


def test_timeline_counts_pending_compaction_and_files(tmp_path):
    path, table = _mor_table(tmp_path)
    writes = _upserts(table, range(1, 4))
    compaction = table.compaction.schedule()
    assert compaction is not None
    timeline = ActiveTimeline.load(table.storage)
    requested = timeline.create_requested("deltacommit", timeline.new_instant_time())
    timeline.transition(requested, State.INFLIGHT)  # a writer still at work

    summary = summarize(_entry("trips", path))

    assert summary.status == OK and summary.table_type == "MERGE_ON_READ"
    assert [i["timestamp"] for i in summary.instants] == [*writes, compaction, requested.timestamp]
    assert summary.instants == [
        {"timestamp": i.timestamp, "action": i.action, "state": i.state.value}
        for i in table.timeline()
    ]
    assert summary.counts_by_action == {"compaction": 1, "deltacommit": 4}
    assert summary.counts_by_state == {"COMPLETED": 3, "INFLIGHT": 1, "REQUESTED": 1}
    assert summary.pending_compactions == [compaction]
    assert summary.last_clean is None and summary.archival.archived_instants == 0
    # An insert then two updates: a base file and two log files in each file group.
    assert (summary.latest_files.slices, summary.latest_files.base_files) == (4, 4)
    assert summary.latest_files.log_files == 8
    _same_files(summary.latest_files, _files_on_disk(path))
    _same_files(summary.all_files, _files_on_disk(path))
    json.dumps(summary.to_dict())  # what the JSON endpoint serves


def test_compaction_clean_and_archival(tmp_path):
    path, table = _mor_table(tmp_path)
    _upserts(table, range(1, 4))
    compaction = table.compaction.run(table.compaction.schedule())
    later = _upserts(table, range(4, 6))

    compacted = summarize(_entry("trips", path))
    assert compacted.counts_by_action == {"commit": 1, "deltacommit": 5}
    assert compacted.pending_compactions == []
    # The slices before the compaction stay on storage until the cleaner deletes them.
    assert (compacted.latest_files.slices, compacted.all_files.slices) == (4, 8)
    _same_files(compacted.all_files, _files_on_disk(path))

    before = data_files(path)
    clean = table.clean()
    cleaned = summarize(_entry("trips", path))
    assert cleaned.last_clean is not None and cleaned.last_clean.timestamp == clean
    assert cleaned.last_clean.files_deleted == len(before - data_files(path)) == 12
    assert cleaned.last_clean.earliest_commit_to_retain == later[-1]
    assert cleaned.all_files == cleaned.latest_files == compacted.latest_files

    archived = table.archive()
    assert archived, "the bounds allow archiving the oldest commits"
    summary = summarize(_entry("trips", path))
    assert summary.archival.archived_instants == len(archived)
    assert summary.archival.newest_archived == archived[-1].timestamp == compaction
    assert summary.archival.archive_files == 1
    assert summary.archival.last_archived_at is not None
    assert len(summary.instants) == len(cleaned.instants) - len(archived)
    assert summary.last_clean == cleaned.last_clean


def test_an_unreadable_table_is_reported_without_hiding_the_others(tmp_path):
    path, table = _mor_table(tmp_path / "good")
    _upserts(table, range(1, 2))
    broken = tmp_path / "broken" / ".hoodie"
    broken.mkdir(parents=True)
    (broken / "hoodie.properties").write_text("hoodie.table.name=broken\n")

    summaries = summarize_all(
        [_entry("broken", str(broken.parent)), _entry("trips", path), _entry("later", "/absent")]
    )

    assert [s.status for s in summaries] == [ERROR, OK, NOT_CREATED]
    assert summaries[0].error.startswith("cannot read the table: ")


def test_instant_times_read_as_dates():
    assert instant_time_text("20240105103000123") == "2024-01-05 10:30:00.123"
    assert instant_time_text("20240105103000") == "2024-01-05 10:30:00.000"
    assert instant_time_text("00000000000001") == "00000000000001"  # a bootstrap instant
