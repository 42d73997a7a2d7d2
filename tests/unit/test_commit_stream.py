"""Streaming reads' offsets and micro-batches (hudi_core.read.streaming.CommitStream): where a
stream starts, how far a micro-batch may go (caps, pending writes), what each batch holds
(merged states or every change), table services in range, and lost history (cleaned files,
archived commits) failing clearly or falling back to a full scan."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from hudi_core import HudiTable, IncrementalHistoryError, InvalidOptionError
from hudi_core.distributed import CommitStream
from hudi_core.read.streaming import BEFORE_FIRST
from hudi_core.timeline import ActiveTimeline
from tests.cdc import CDC, by_key, cdc_batch, create_events_table, stored_batch

MULTI_WRITER = {  # writers leave each other's pending instants alone
    "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
    "hoodie.cleaner.policy.failed.writes": "LAZY",
    "hoodie.write.lock.provider": "in_process",
}
FALLBACK = {"hoodie.datasource.read.incr.fallback.fulltablescan.enable": "true"}


def _rows(ids_values: list[tuple[str, int]], ts: int = 1) -> pa.Table:
    batch = cdc_batch([(key, "I", ts, value) for key, value in ids_values])
    return batch.drop_columns(["_hoodie_operation"])


def _stream(table: HudiTable, **options: str) -> CommitStream:
    return CommitStream(table.storage, table.config, table.engine, options)


def _batch(stream: CommitStream, start: str, end: str) -> dict[str, int]:
    """The micro-batch (start, end] as key -> value."""
    plan = stream.plan(start, end)
    assert plan is not None
    rows = plan.read_all(stream.engine)
    return dict(zip(rows["id"].to_pylist(), rows["v"].to_pylist(), strict=True))


def _three_commits(table: HudiTable) -> list[str]:
    c1 = table.write(_rows([("k1", 10), ("k2", 20), ("k3", 30)]))
    c2 = table.write(_rows([("k1", 11), ("k4", 40)], ts=2))
    c3 = table.write(_rows([("k2", 21)], ts=3))
    return [c1, c2, c3]


# ---- where a stream starts


def test_start_offsets_earliest_latest_and_an_instant(tmp_path):
    table = create_events_table(tmp_path / "t")
    c1, c2, c3 = _three_commits(table)
    earliest = _stream(table, **{"hoodie.datasource.streaming.startOffset": "earliest"})
    assert earliest.initial_offset() == BEFORE_FIRST
    assert _stream(table).initial_offset() == c3  # latest, the default
    for key in ("hoodie.datasource.streaming.startOffset", "read.start-commit"):
        stream = _stream(table, **{key: c2})
        start = stream.initial_offset()
        assert c1 < start < c2  # the stream starts with c2's changes
        assert _batch(stream, start, stream.latest_offset(start)) == {"k1": 11, "k4": 40, "k2": 21}
    assert _batch(earliest, BEFORE_FIRST, c3) == {"k1": 11, "k2": 21, "k3": 30, "k4": 40}
    with pytest.raises(InvalidOptionError, match="use earliest, latest or an instant time"):
        _stream(table, **{"hoodie.datasource.streaming.startOffset": "yesterday"}).initial_offset()


def test_an_empty_table_streams_from_its_first_commit(tmp_path):
    table = create_events_table(tmp_path / "t")
    stream = _stream(table)
    start = stream.initial_offset()
    assert start == BEFORE_FIRST
    assert stream.latest_offset(start) == start  # nothing to read yet
    first = table.write(_rows([("k1", 10)]))
    assert stream.latest_offset(start) == first
    assert _batch(stream, start, first) == {"k1": 10}


# ---- how far a micro-batch goes


def test_max_instants_per_trigger_caps_each_batch(tmp_path):
    table = create_events_table(tmp_path / "t")
    c1, c2, c3 = _three_commits(table)
    stream = _stream(table, **{"hoodie.datasource.streaming.max.instants.per.trigger": "2"})
    assert stream.latest_offset(BEFORE_FIRST) == c2
    assert stream.latest_offset(c2) == c3
    assert stream.latest_offset(BEFORE_FIRST, limited=False) == c3
    with pytest.raises(InvalidOptionError, match="must be 0"):
        _stream(table, **{"hoodie.datasource.streaming.max.instants.per.trigger": "-1"})


def test_a_pending_write_holds_the_stream_back_until_it_completes(tmp_path):
    """A writer that started before a later one completed must not be skipped (Apache Hudi's
    BLOCK handling of hollow commits); pending compactions do not hold the stream."""
    table = create_events_table(tmp_path / "t", **MULTI_WRITER)
    c1 = table.write(_rows([("k1", 10)]))
    timeline = ActiveTimeline.load(table.storage)
    hollow = timeline.create_requested("deltacommit", timeline.new_instant_time())
    c2 = table.write(_rows([("k2", 20)]))
    stream = _stream(table)
    assert stream.latest_offset(BEFORE_FIRST) == c1
    timeline.reload().delete_pending(hollow)  # the writer gave up: nothing blocks any more
    assert stream.latest_offset(BEFORE_FIRST) == c2

    table.write(_rows([("k1", 11)], ts=2))  # an update: a log file to compact
    assert table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": "1"})
    c4 = table.write(_rows([("k3", 30)]))
    assert stream.latest_offset(c2) == c4


# ---- what a micro-batch holds


def test_batches_hold_the_latest_state_of_what_changed_in_range(tmp_path):
    table = create_events_table(tmp_path / "t")
    c1, c2, c3 = _three_commits(table)
    c4 = table.write(_rows([("k4", 0), ("k1", 0)]), operation="delete")
    stream = _stream(table)
    assert _batch(stream, c1, c2) == {"k1": 11, "k4": 40}
    assert _batch(stream, c2, c4) == {"k2": 21}  # k4 and k1 deleted by c4: no state left
    assert _batch(stream, c3, c4) == {}


def test_changelog_batches_hold_every_change_deletes_included(tmp_path):
    changelog = {"hoodie.allow.operation.metadata.field": "true"}
    table = create_events_table(tmp_path / "t", **changelog)
    first = table.write(stored_batch())
    second = table.write(cdc_batch(CDC))
    stream = _stream(table, **{"hoodie.datasource.read.changelog.enabled": "true"})
    plan = stream.plan(first, second)
    assert plan is not None
    rows = plan.read_all(table.engine).to_pylist()
    changes = [(r["id"], r["_hoodie_operation"], r["ts"], r["v"]) for r in rows]
    assert by_key(changes) == by_key(CDC)
    assert {c[1] for c in changes} == {"I", "-U", "U", "D"}


def test_changelog_reads_need_a_changelogcreate_events_table(tmp_path):
    table = create_events_table(tmp_path / "t")
    with pytest.raises(InvalidOptionError, match="hoodie.allow.operation.metadata.field"):
        _stream(table, **{"hoodie.datasource.read.changelog.enabled": "true"})


def test_a_compaction_in_range_emits_nothing_new(tmp_path):
    table = create_events_table(tmp_path / "t")
    c1, c2, c3 = _three_commits(table)  # updates: log files to compact
    compaction = table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": "1"})
    table.compaction.run(compaction)
    compacted = table.timeline()[-1].timestamp
    skipping = _stream(table, **{"hoodie.datasource.read.streaming.skip_compaction": "true"})
    assert _batch(_stream(table), c3, compacted) == {}  # rows keep their commit times
    skipped = skipping.plan(c3, compacted)
    assert skipped is not None and skipped.slices == []  # not even read


def test_skip_clustering_keeps_rows_a_clustering_restamped_out(tmp_path):
    table = create_events_table(tmp_path / "t", "COPY_ON_WRITE")
    c1, c2, c3 = _three_commits(table)
    planned = table.clustering.schedule({"hoodie.clustering.preserve.commit.metadata": "false"})
    assert planned is not None
    table.clustering.run(planned)
    everything = {"k1": 11, "k2": 21, "k3": 30, "k4": 40}
    assert _batch(_stream(table), c3, planned) == everything  # restamped: emitted again
    skipping = _stream(table, **{"hoodie.datasource.read.streaming.skip_clustering": "true"})
    assert _batch(skipping, c3, planned) == {}


# ---- lost history


def test_files_cleaned_before_the_stream_read_them_fail_or_fall_back(tmp_path):
    table = create_events_table(
        tmp_path / "t", "COPY_ON_WRITE", **{"hoodie.cleaner.commits.retained": "1"}
    )
    c1 = table.write(_rows([("k1", 10), ("k2", 20), ("k3", 30)]))
    c2 = table.write(_rows([("k1", 11)], ts=2))
    c3 = table.write(_rows([("k2", 21)], ts=3))
    c4 = table.write(_rows([("k3", 31)], ts=4))
    assert table.clean() is not None  # keeps the versions of c3 and c4 only
    stream = _stream(table)
    with pytest.raises(IncrementalHistoryError, match="cleaner has deleted") as failure:
        stream.plan(c1, c2)
    assert "fallback.fulltablescan.enable=true" in str(failure.value)
    fallback = _stream(table, **FALLBACK)
    assert _batch(fallback, c1, c2) == {"k1": 11}  # c2's change, as the table holds it now
    assert _batch(fallback, c2, c3) == {"k2": 21}
    assert _batch(stream, c3, c4) == {"k3": 31}  # c4's file is still there


def _archived(path: Path) -> tuple[HudiTable, list[str], set[str]]:
    """A table of five commits (key k<i> = i each), the older ones archived; the table, its
    commits and the archived instants."""
    bounds = {
        "hoodie.keep.min.commits": "2",
        "hoodie.keep.max.commits": "3",
        "hoodie.cleaner.commits.retained": "1",
    }
    table = create_events_table(path, "COPY_ON_WRITE", **bounds)
    commits = [table.write(_rows([(f"k{i}", i)], ts=i)) for i in range(5)]
    table.clean()
    archived = {instant.timestamp for instant in table.archive()}
    assert archived & set(commits)
    return table, commits, archived


def test_archived_commits_fail_unless_the_stream_starts_at_earliest(tmp_path):
    table, commits, _ = _archived(tmp_path / "t")
    stream = _stream(table)
    with pytest.raises(IncrementalHistoryError, match="were archived"):
        stream.plan(commits[0], commits[-1])
    after_first = {f"k{i}": i for i in range(1, 5)}
    assert _batch(_stream(table, **FALLBACK), commits[0], commits[-1]) == after_first
    assert _batch(stream, BEFORE_FIRST, commits[-1]) == {f"k{i}": i for i in range(5)}


def test_a_stream_whose_last_commit_was_archived_has_lost_nothing(tmp_path):
    table, commits, archived = _archived(tmp_path / "t")
    active = [c for c in commits if c not in archived]
    last_read = max(c for c in commits if c in archived)  # the stream had read up to it
    batch = _batch(_stream(table), last_read, active[-1])
    assert batch == {f"k{commits.index(c)}": commits.index(c) for c in active}
