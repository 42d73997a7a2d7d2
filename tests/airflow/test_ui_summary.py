"""The Hudi view's table summary (hudi_airflow/ui/summary.py) on merge-on-read tables
written with hudi_core: timeline counts, per-instant times, durations and stats, the
compaction backlog, last clean, archival and archived instants, files per partition and file
group, links to the Airflow task of each commit, bad entries of the tables file; and the page
rendered from it."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hudi_airflow.tables_config import EntryError, TableEntry, TablesFile
from hudi_airflow.ui.app import duration, templates, utc
from hudi_airflow.ui.instants import utc_text
from hudi_airflow.ui.summary import (
    ERROR,
    INVALID,
    NOT_CREATED,
    OK,
    FileStats,
    summarize,
    summarize_all,
    summarize_file,
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
        options=OPTIONS,
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
    assert [i.timestamp for i in summary.instants] == [*writes, compaction, requested.timestamp]
    assert [(i.timestamp, i.action, i.state) for i in summary.instants] == [
        (i.timestamp, i.action, i.state.value) for i in table.timeline()
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


def _utc_mtime(path: Path) -> str:
    moment = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_each_instant_has_its_state_times_durations_and_stats(tmp_path):
    path, table = _mor_table(tmp_path)
    first, second = _upserts(table, range(1, 3))

    rows = {r.timestamp: r for r in summarize(_entry("trips", path)).instants}

    for timestamp in (first, second):
        row = rows[timestamp]
        hoodie = Path(path) / ".hoodie"
        # Table version 6: the state files' modification times, in UTC.
        assert row.requested_at == _utc_mtime(hoodie / f"{timestamp}.deltacommit.requested")
        assert row.inflight_at == _utc_mtime(hoodie / f"{timestamp}.deltacommit.inflight")
        assert row.completed_at == _utc_mtime(hoodie / f"{timestamp}.deltacommit")
        assert row.requested_at <= row.inflight_at <= row.completed_at
        assert row.queued_s is not None and row.ran_s is not None
        assert row.total_s == pytest.approx(row.queued_s + row.ran_s, abs=0.002)
        assert row.time_utc == utc_text(timestamp, "UTC") and not row.compaction
    first_stats, second_stats = rows[first].stats, rows[second].stats
    assert first_stats is not None and second_stats is not None
    assert (first_stats.operation, first_stats.partitions, first_stats.files_added) == (
        "UPSERT",
        4,
        4,
    )
    assert (first_stats.rows_inserted, first_stats.rows_updated) == (8, 0)
    assert (second_stats.rows_inserted, second_stats.rows_updated) == (0, 8)
    assert second_stats.bytes_written == table.inspect.commit(second).totals.bytes_written > 0


def test_the_compaction_backlog_and_compactions_apart_from_writes(tmp_path):
    path, table = _mor_table(tmp_path)
    _upserts(table, range(1, 4))
    planned = table.compaction.schedule()
    assert planned is not None
    an_hour_later = datetime.strptime(planned, "%Y%m%d%H%M%S%f").replace(tzinfo=UTC)
    an_hour_later += timedelta(hours=1)

    backlog = summarize(_entry("trips", path), now=an_hour_later).compaction_backlog

    assert backlog is not None
    (pending,) = backlog.pending
    assert (pending.timestamp, pending.state) == (planned, "REQUESTED")
    assert pending.age_s == pytest.approx(3600, abs=0.01)
    logs = _files_on_disk(path)  # every log file on storage is in the plan
    assert (pending.file_groups, pending.log_files, pending.log_bytes) == (
        4,
        logs.log_files,
        logs.log_bytes,
    )
    assert (backlog.delta_commits_since, backlog.max_delta_commits) == (3, 2)
    assert backlog.last_compaction is None and backlog.trigger_strategy == "NUM_COMMITS"

    table.compaction.run(planned)
    later = _upserts(table, range(4, 5))
    summary = summarize(_entry("trips", path))
    done = next(r for r in summary.instants if r.timestamp == planned)
    assert (done.action, done.state, done.compaction) == ("commit", "COMPLETED", True)
    assert done.stats is not None and done.stats.operation == "COMPACT"
    assert done.stats.log_records_compacted > 0
    assert not any(r.compaction for r in summary.instants if r.timestamp != planned)
    backlog = summary.compaction_backlog
    assert backlog is not None and backlog.pending == []
    assert (backlog.last_compaction, backlog.delta_commits_since) == (planned, len(later))


def test_files_drill_down_by_partition_and_file_group(tmp_path):
    path, table = _mor_table(tmp_path)
    _upserts(table, range(1, 4))
    planned = table.compaction.schedule()

    summary = summarize(_entry("trips", path))

    assert [p.partition for p in summary.partitions] == sorted(table.inspect.partitions())
    for partition in summary.partitions:
        (group,) = partition.file_groups  # two keys of each city: one file group each
        (only,) = group.slices
        assert (group.log_files, only.log_files, group.pending_compaction) == (2, 2, planned)
        assert only.latest and only.committed and only.base_file is not None
        folder = Path(path) / partition.partition
        logs = [f for f in folder.iterdir() if ".log." in f.name]
        assert group.log_bytes == only.log_bytes == sum(f.stat().st_size for f in logs)
        assert only.base_bytes == (Path(path) / only.base_file).stat().st_size
    _same_files(summary.all_files, _files_on_disk(path))


def test_archived_instants_are_listed_newest_first(tmp_path):
    path, table = _mor_table(tmp_path)
    _upserts(table, range(1, 4))
    table.compaction.run(table.compaction.schedule())
    _upserts(table, range(4, 6))
    table.clean()
    archived = table.archive()

    newest = summarize(_entry("trips", path)).archival.newest

    assert [r.timestamp for r in newest] == sorted({i.timestamp for i in archived}, reverse=True)
    assert all(r.state == "COMPLETED" and r.completed_at for r in newest)


def test_commits_link_to_the_airflow_task_that_made_them(tmp_path):
    path, table = _mor_table(tmp_path)
    run = {
        "_hoodie.airflow.dag_id": "trips_ingest",
        "_hoodie.airflow.run_id": "manual__2026-11-24T10:00:00+00:00",
        "_hoodie.airflow.task_id": "ingest",
    }
    linked = table.write(datagen.trips(KEYS, seed=1, ts=1), "upsert", run)
    plain = table.write(datagen.trips(KEYS, seed=2, ts=2), "upsert")

    rows = {r.timestamp: r for r in summarize(_entry("trips", path)).instants}

    link = rows[linked].airflow
    assert link is not None and (link.dag_id, link.task_id) == ("trips_ingest", "ingest")
    assert link.path == (
        "dags/trips_ingest/runs/manual__2026-11-24T10%3A00%3A00%2B00%3A00/tasks/ingest"
    )
    assert rows[plain].airflow is None


def test_a_bad_entry_is_summarized_beside_the_good_ones(tmp_path):
    path, table = _mor_table(tmp_path)
    _upserts(table, range(1, 2))
    bad = EntryError(2, "broken", "tables.yaml: table entry #2 ('broken'): key 'table_type' ...")
    nameless = EntryError(3, None, "tables.yaml: table entry #3: must be a mapping of keys")

    summaries = summarize_file(TablesFile(tmp_path, (_entry("trips", path), bad, nameless)))

    assert [(s.name, s.status) for s in summaries] == [
        ("trips", OK),
        ("broken", INVALID),
        ("entry #3", INVALID),
    ]
    assert summaries[1].error == bad.message


def test_times_are_shown_in_utc(monkeypatch):
    assert utc_text("20240105103000123", "UTC") == "2024-01-05T10:30:00.123Z"
    assert utc_text("00000000000001", "UTC") is None  # a bootstrap instant: no date
    monkeypatch.setenv("TZ", "Asia/Kolkata")  # a LOCAL timeline's times are local ones
    time.tzset()
    try:
        assert utc_text("20240105103000123", "LOCAL") == "2024-01-05T05:00:00.123Z"
    finally:
        monkeypatch.undo()
        time.tzset()
    assert utc("2024-01-05T10:30:00.123Z") == "2024-01-05 10:30:00.123 UTC"
    assert (duration(None), duration(0.25), duration(75), duration(7500)) == (
        "-",
        "0.25 s",
        "1 min 15 s",
        "2 h 5 min",
    )


def test_the_page_shows_what_the_summary_holds(tmp_path):
    path, table = _mor_table(tmp_path)
    run = {
        "_hoodie.airflow.dag_id": "d",
        "_hoodie.airflow.run_id": "r",
        "_hoodie.airflow.task_id": "t",
    }
    write = table.write(datagen.trips(KEYS, seed=1, ts=1), "upsert", run)
    _upserts(table, range(2, 4))
    planned = table.compaction.schedule()
    bad = EntryError(2, "broken", "table entry #2 ('broken'): key 'source_format' must be ...")
    summaries = summarize_file(TablesFile(tmp_path, (_entry("trips", path), bad)))
    context = {"tables": summaries, "config_error": None, "config_path": "t", "user_name": "u"}

    html = templates.env.get_template("index.html").render(context)

    assert f'<tr class="pending-compaction" data-instant="{planned}">' in html
    assert f'class="instant compaction" data-instant="{planned}"' in html
    assert 'href="../dags/d/runs/r/tasks/t"' in html and f'data-instant="{write}"' in html
    assert 'id="files-trips"' in html and 'id="archived-trips"' in html
    assert 'data-status="invalid"' in html and bad.message.replace("'", "&#39;") in html
