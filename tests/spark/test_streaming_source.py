"""`spark.readStream.format("hudi")` on merge-on-read tables: micro-batches (Trigger.AvailableNow
and processingTime) with commits landing between triggers (inserts, updates, deletes, a
compaction, a clean) add up to every change (changelog mode) or to each batch range's latest
states; a query stopped, or failed in a batch, and restarted from its checkpoint emits
nothing twice and misses nothing; startOffset earliest, latest and an instant start where
they say; commits cleaned before the stream read them fail the query clearly, or are read by
a full scan when the fallback option allows it."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.errors import StreamingQueryException

from tests.cdc import CDC, STORED, cdc_batch, create_events_table, stored_batch

pytestmark = pytest.mark.spark

START = "hoodie.datasource.streaming.startOffset"
CHANGELOG = {"hoodie.datasource.read.changelog.enabled": "true"}
ONE_COMMIT_A_BATCH = {"hoodie.datasource.streaming.max.instants.per.trigger": "1"}
COMPACT_NOW = {"hoodie.compact.inline.max.delta.commits": "1"}


def _rows(changes: list[tuple[str, int, int]]) -> pa.Table:
    """(key, ts, value) rows to upsert."""
    return cdc_batch([(k, "I", ts, v) for k, ts, v in changes]).drop_columns(["_hoodie_operation"])


class Collector:
    """A foreachBatch sink keeping each completed micro-batch's rows by batch id; it can
    fail a batch once (as a crash would), before the batch completes."""

    def __init__(self) -> None:
        self.batches: dict[int, list[dict]] = {}
        self.replays = 0
        self.fail_batch: int | None = None

    def __call__(self, df, batch_id: int) -> None:
        rows = df.toArrow().to_pylist()
        if batch_id == self.fail_batch:
            self.fail_batch = None
            raise RuntimeError(f"crash in batch {batch_id}")
        if batch_id in self.batches:
            self.replays += 1
        self.batches[batch_id] = rows

    def rows(self) -> list[dict]:
        return [row for _, rows in sorted(self.batches.items()) for row in rows]


def _start(spark, path: str, sink: Collector, checkpoint: Path, options: dict, **trigger):
    return (
        spark.readStream.format("hudi")
        .options(**options)
        .load(path)
        .writeStream.foreachBatch(sink)
        .option("checkpointLocation", str(checkpoint))
        .trigger(**trigger)
        .start()
    )


def _run_available_now(spark, path: str, sink: Collector, checkpoint: Path, options: dict):
    query = _start(spark, path, sink, checkpoint, options, availableNow=True)
    query.awaitTermination()


def _changes(rows: list[dict]) -> list[tuple]:
    return [(r["id"], r["_hoodie_operation"], r["ts"], r["v"]) for r in rows]


def _per_key(changes: list[tuple]) -> dict[str, list[tuple]]:
    """Each key's changes in commit order (within a key, the order they were written)."""
    out: dict[str, list[tuple]] = {}
    for change in changes:
        out.setdefault(change[0], []).append(change)
    return out


def test_a_changelog_stream_emits_every_change_once_across_restarts_and_crashes(spark, tmp_path):
    path = str(tmp_path / "t")
    table = create_events_table(tmp_path / "t", **{"hoodie.allow.operation.metadata.field": "true"})
    checkpoint = tmp_path / "checkpoint"
    sink = Collector()
    options = {START: "earliest", **CHANGELOG}
    table.write(stored_batch())  # a stream needs the table's schema: its first commit
    query = _start(spark, path, sink, checkpoint, options, processingTime="200 milliseconds")
    query.processAllAvailable()
    table.write(cdc_batch(CDC))
    query.processAllAvailable()
    table.compaction.run(table.compaction.schedule(COMPACT_NOW))  # rewrites: nothing new
    query.processAllAvailable()
    query.stop()  # stopped between batches: restarts where it stopped

    later = [("k1", "U", 5, 12), ("k9", "I", 1, 90), ("k7", "D", 1, 70)]
    table.write(cdc_batch(later))
    sink.fail_batch = max(sink.batches) + 1  # the next batch crashes before it completes
    query = _start(spark, path, sink, checkpoint, options, processingTime="200 milliseconds")
    with pytest.raises(StreamingQueryException, match="crash in batch"):
        query.awaitTermination(120)
    table.clean({"hoodie.cleaner.commits.retained": "1"})  # the stream has read those files
    last = [("k2", "D", 3, 22)]
    table.write(cdc_batch(last))
    query = _start(spark, path, sink, checkpoint, options, processingTime="200 milliseconds")
    query.processAllAvailable()
    query.stop()

    expected = [(k, "I", ts, v) for k, ts, v in STORED] + CDC + later + last
    emitted = _changes(sink.rows())
    assert _per_key(emitted) == _per_key(expected)  # every change once, each key in order
    assert sink.replays == 0
    assert sorted(sink.batches) == list(range(len(sink.batches)))


def test_available_now_batches_hold_each_ranges_latest_states(spark, tmp_path):
    path = str(tmp_path / "t")
    table = create_events_table(tmp_path / "t")
    commits = [
        ("upsert", [("k1", 1, 10), ("k2", 1, 20), ("k3", 1, 30)]),
        ("upsert", [("k1", 2, 11), ("k4", 1, 40)]),
        ("delete", [("k2", 1, 0)]),
        ("upsert", [("k3", 3, 31), ("k3", 4, 32)]),  # two versions: the later ts wins
    ]
    state: dict[str, int] = {}
    expected = []
    for operation, changes in commits:
        table.write(_rows(changes), operation=operation)
        for key, _, value in changes:
            state.pop(key, None) if operation == "delete" else state.__setitem__(key, value)
        expected.append({k: state[k] for k, _, _ in changes if k in state})
    table.compaction.run(table.compaction.schedule(COMPACT_NOW))
    expected.append({})  # the compaction's batch: nothing new
    sink = Collector()
    options = {START: "earliest", **ONE_COMMIT_A_BATCH}
    _run_available_now(spark, path, sink, tmp_path / "checkpoint", options)

    batches = [sink.batches[i] for i in sorted(sink.batches)]
    emitted = [{r["id"]: r["v"] for r in rows} for rows in batches]
    assert emitted == expected
    assert all(len({r["id"] for r in rows}) == len(rows) for rows in batches)  # one per key
    table.write(_rows([("k5", 1, 50)]))
    _run_available_now(spark, path, sink, tmp_path / "checkpoint", options)  # resumes
    assert {r["id"]: r["v"] for r in sink.batches[max(sink.batches)]} == {"k5": 50}


def test_start_offsets_start_where_they_say(spark, tmp_path):
    path = str(tmp_path / "t")
    table = create_events_table(tmp_path / "t")
    table.write(_rows([("k1", 1, 10)]))
    second = table.write(_rows([("k2", 1, 20)]))
    table.write(_rows([("k3", 1, 30)]))
    started = {}
    for name, start in [("earliest", "earliest"), ("latest", "latest"), ("instant", second)]:
        sink = Collector()
        _run_available_now(spark, path, sink, tmp_path / name, {START: start})
        started[name] = sorted(r["id"] for r in sink.rows())
    assert started == {"earliest": ["k1", "k2", "k3"], "latest": [], "instant": ["k2", "k3"]}


def test_cleaned_history_fails_the_query_unless_it_may_scan_the_table(spark, tmp_path):
    path = str(tmp_path / "t")
    table = create_events_table(tmp_path / "t")
    table.write(_rows([("k1", 1, 10), ("k2", 1, 20)]))
    sink = Collector()
    options = {START: "latest"}
    _run_available_now(spark, path, sink, tmp_path / "checkpoint", options)  # at the first
    for ts in range(2, 5):  # the stream falls behind while updates pile up
        table.write(_rows([("k1", ts, 10 + ts)]))
    table.compaction.run(table.compaction.schedule(COMPACT_NOW))
    table.write(_rows([("k2", 5, 25)]))
    table.clean({"hoodie.cleaner.commits.retained": "1"})

    with pytest.raises(StreamingQueryException, match="fallback.fulltablescan.enable=true"):
        _run_available_now(spark, path, sink, tmp_path / "checkpoint", options)
    fallback = {**options, "hoodie.datasource.read.incr.fallback.fulltablescan.enable": "true"}
    _run_available_now(spark, path, sink, tmp_path / "checkpoint", fallback)
    assert {r["id"]: r["v"] for r in sink.rows()} == {"k1": 14, "k2": 25}
