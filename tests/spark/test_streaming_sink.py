"""spark_jobs.streaming.hudi_sink: every micro-batch one commit recording its batch and query,
written exactly once across replays, restarts and a process killed mid-commit; new queries,
other identifiers and deletes are never skipped; compaction between batches is harmless."""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_core import HudiTable
from hudi_core.config.write_options import STREAMING_CHECKPOINT_IDENTIFIER
from hudi_core.errors import InvalidOptionError
from hudi_core.schema.meta_fields import is_meta_field
from spark_jobs.streaming import (
    APPLICATION_ID_KEY,
    CHECKPOINT_KEY,
    QUERY_ID_KEY,
    hudi_sink,
    sink_options,
)
from tests import oracle
from tests.datagen import trips
from tests.streaming_sink_child import TABLE_OPTIONS, kill_while_committing, run_stream

OPERATION = "hoodie.datasource.write.operation"
# These small batches are written on the driver (hudi_core's local engine), which is quicker;
# the first test alone takes the executors' path, as large batches do.
ON_DRIVER = {"hoodie.spark.local.threshold.bytes": str(1 << 30)}
UPSERT = {**TABLE_OPTIONS, **ON_DRIVER}
INSERT = {**UPSERT, OPERATION: "insert"}
IDENTIFIER_OPTION = STREAMING_CHECKPOINT_IDENTIFIER.key
DEFAULT_IDENTIFIER = STREAMING_CHECKPOINT_IDENTIFIER.default


def test_each_micro_batch_is_one_commit_recording_its_batch_and_query(spark, tmp_path):
    source, path = tmp_path / "source", str(tmp_path / "trips")
    drops = [_trips(range(6), 1), _trips([0, 1, 2, 9], 2)]  # inserts, then upserts
    _drop_files(source, drops)

    query_id = run_stream(spark, str(source), str(tmp_path / "ck"), hudi_sink(path, TABLE_OPTIONS))

    commits = _sink_commits(path)
    assert [c["action"] for c in commits] == ["deltacommit"] * 2
    assert [c[CHECKPOINT_KEY] for c in commits] == [{DEFAULT_IDENTIFIER: str(b)} for b in range(2)]
    assert {c[QUERY_ID_KEY] for c in commits} == {query_id}
    assert {c[APPLICATION_ID_KEY] for c in commits} == {spark.sparkContext.applicationId}
    recorded = HudiTable.open(path).inspect.commit(commits[0]["instant"]).extra_metadata
    assert recorded[CHECKPOINT_KEY] == '{"default_single_writer":"0"}'  # as Apache Hudi writes it
    _assert_rows(path, _latest_by_key(drops))


def test_a_batch_committed_but_not_logged_by_spark_is_skipped_on_restart(spark, tmp_path):
    """The query died after the commit, before Spark logged the batch: Spark replays it."""
    source, path, checkpoint = tmp_path / "source", str(tmp_path / "trips"), tmp_path / "ck"
    drops = [_trips(range(4), 1), _trips(range(4, 8), 2)]
    _drop_files(source, drops)
    sink = hudi_sink(path, INSERT)
    run_stream(spark, str(source), str(checkpoint), sink)
    before = _sink_commits(path)
    _forget_last_batch(checkpoint)

    run_stream(spark, str(source), str(checkpoint), sink)

    assert _sink_commits(path) == before
    assert (checkpoint / "commits" / "1").exists()  # the replayed batch ended this time
    _assert_rows(path, pa.concat_tables(drops))  # inserts: a second write would duplicate


def test_a_stream_killed_mid_commit_resumes_exactly_once(spark, tmp_path):
    source, path, checkpoint = tmp_path / "source", str(tmp_path / "trips"), tmp_path / "ck"
    drops = [_trips(range(4), 1), _trips(range(4, 8), 2), _trips(range(8, 12), 3)]
    _drop_files(source, drops)
    kill_while_committing(path, str(source), str(checkpoint), kill_batch=1)
    timeline = HudiTable.open(path).inspect.timeline()
    [killed] = [i.timestamp for i in timeline if not i.is_completed]
    child_commits = _sink_commits(path)

    query_id = run_stream(spark, str(source), str(checkpoint), hudi_sink(path, INSERT))

    commits = _sink_commits(path)
    assert commits[0] == child_commits[0]
    assert [c[CHECKPOINT_KEY] for c in commits] == [{DEFAULT_IDENTIFIER: str(b)} for b in range(3)]
    assert {c[QUERY_ID_KEY] for c in commits} == {query_id}  # the checkpoint keeps the query
    assert commits[0][APPLICATION_ID_KEY] != commits[1][APPLICATION_ID_KEY]
    inspector = HudiTable.open(path).inspect
    assert killed not in {i.timestamp for i in inspector.timeline() if i.action == "deltacommit"}
    rollbacks = [i for i in inspector.timeline() if i.action == "rollback" and i.is_completed]
    rolled_back = [inspector.instant_metadata(r.timestamp)["commitsRollback"] for r in rollbacks]
    assert rolled_back == [[killed]]
    _assert_rows(path, pa.concat_tables(drops))


def test_a_new_query_is_not_skipped(spark, tmp_path):
    """Apache Hudi would skip it: a new checkpoint location starts batch ids at 0 again."""
    path = str(tmp_path / "trips")
    first, second = [_trips(range(4), 1), _trips(range(4, 8), 2)], [_trips(range(8, 11), 3)]
    _drop_files(tmp_path / "first", first)
    _drop_files(tmp_path / "second", second)
    sink = hudi_sink(path, INSERT)
    first_query = run_stream(spark, str(tmp_path / "first"), str(tmp_path / "ck1"), sink)

    second_query = run_stream(spark, str(tmp_path / "second"), str(tmp_path / "ck2"), sink)

    commits = _sink_commits(path)
    assert [(c[QUERY_ID_KEY], c[CHECKPOINT_KEY][DEFAULT_IDENTIFIER]) for c in commits] == [
        (first_query, "0"),
        (first_query, "1"),
        (second_query, "0"),
    ]
    _assert_rows(path, pa.concat_tables(first + second))


def test_each_identifier_and_query_skips_only_its_own_batches(spark, tmp_path):
    """Direct calls, as Spark's stream thread makes them, with the query id it sets."""
    path = str(tmp_path / "trips")
    mine = hudi_sink(path, {**INSERT, IDENTIFIER_OPTION: "mine"})
    theirs = hudi_sink(path, {**INSERT, IDENTIFIER_OPTION: "theirs"})
    batch = [spark.createDataFrame(_trips([k], 1)) for k in range(5)]
    with _in_query(spark, "query-1"):
        assert mine(batch[0], 3) is not None
        assert mine(batch[0], 3) is None  # replayed
        assert mine(batch[0], 2) is None  # older
        assert theirs(batch[1], 0) is not None  # another identifier's batch ids
        assert mine(batch[2], 4) is not None
    with _in_query(spark, "query-2"):
        assert mine(batch[3], 0) is not None  # a new query's
    with _in_query(spark, None):  # unknown query: batch ids alone decide, as Apache Hudi
        assert mine(batch[4], 0) is None
    assert [c[CHECKPOINT_KEY] for c in _sink_commits(path)] == [
        {"mine": "3"},
        {"theirs": "0"},
        {"mine": "4"},
        {"mine": "0"},
    ]
    _assert_rows(path, pa.concat_tables([_trips([k], 1) for k in range(4)]))


def test_delete_batches_are_never_skipped(spark, tmp_path):
    path = str(tmp_path / "trips")
    upsert = hudi_sink(path, UPSERT)
    delete = hudi_sink(path, {**UPSERT, OPERATION: "delete"})
    rows = _trips(range(6), 1)
    with _in_query(spark, "query-1"):
        assert upsert(spark.createDataFrame(rows), 5) is not None
        assert upsert(spark.createDataFrame(rows), 5) is None
        assert delete(spark.createDataFrame(_trips([0, 1], 1)), 5) is not None
        assert delete(spark.createDataFrame(_trips([2], 1)), 5) is not None

    _assert_rows(path, rows.slice(3))


def test_compaction_between_micro_batches_keeps_the_stream_going(spark, tmp_path):
    source, path = tmp_path / "source", str(tmp_path / "trips")
    drops = [_trips(range(6), 1), _trips(range(4), 2), _trips([1, 2, 7], 3)]
    _drop_files(source, drops)
    sink = hudi_sink(path, UPSERT)
    compacted = []

    def compacting_after_batch_1(df, batch_id: int) -> None:
        sink(df, batch_id)
        if batch_id == 1:  # as an async compaction beside the stream would
            table = HudiTable.open(path, {"hoodie.compact.inline.max.delta.commits": "1"})
            planned = table.compaction.schedule()
            table.compaction.run(planned)
            compacted.append(planned)

    run_stream(spark, str(source), str(tmp_path / "ck"), compacting_after_batch_1)

    timeline = HudiTable.open(path).inspect.timeline()
    assert [(i.action, i.state) for i in timeline] == [
        ("deltacommit", "COMPLETED"),
        ("deltacommit", "COMPLETED"),
        ("commit", "COMPLETED"),
        ("deltacommit", "COMPLETED"),
    ]
    assert timeline[2].timestamp == compacted[0]
    batches = [c[CHECKPOINT_KEY][DEFAULT_IDENTIFIER] for c in _sink_commits(path)]
    assert batches == ["0", "1", "2"]
    _assert_rows(path, _latest_by_key(drops))


def test_an_empty_batch_writes_nothing(spark, tmp_path):
    path = str(tmp_path / "trips")
    sink = hudi_sink(path, UPSERT)
    empty = spark.createDataFrame(_trips([], 1))

    assert sink(empty, 0) is None
    assert not Path(path).exists()  # not even the table
    sink(spark.createDataFrame(_trips([1], 1)), 1)
    assert sink(empty, 2) is None
    assert len(HudiTable.open(path).inspect.timeline()) == 1


def test_bad_options_fail_before_anything_is_written(tmp_path):
    path = str(tmp_path / "trips")
    with pytest.raises(InvalidOptionError, match="'upsrt' is not one of"):
        hudi_sink(path, {**TABLE_OPTIONS, OPERATION: "upsrt"})
    with pytest.raises(InvalidOptionError, match="creating a table needs"):
        hudi_sink(path, {"hoodie.table.name": "trips"})
    with pytest.raises(InvalidOptionError, match="no operation of a stream"):
        hudi_sink(path, {**TABLE_OPTIONS, OPERATION: "bootstrap"})
    assert not Path(path).exists()
    HudiTable.create(path, "trips", record_key_fields=["uuid"])
    assert hudi_sink(path).identifier == DEFAULT_IDENTIFIER  # a table to write: no fields needed


def test_sink_options_are_strings_as_a_write_reads_them():
    given = {"hoodie.allow.empty.commit": False, "hoodie.bulkinsert.shuffle.parallelism": 4}
    assert sink_options(given) == {
        "hoodie.allow.empty.commit": "false",
        "hoodie.bulkinsert.shuffle.parallelism": "4",
    }


# ---- helpers


def _trips(keys, seed: int) -> pa.Table:
    """Trips of `keys` whose precombine field is `seed`: a later batch's rows win."""
    return trips(list(keys), seed, seed)


def _drop_files(source: Path, batches: list[pa.Table]) -> None:
    """One parquet file per batch, modified in batch order (the order the stream takes)."""
    source.mkdir(parents=True)
    for index, batch in enumerate(batches):
        file = source / f"{index:03d}.parquet"
        pq.write_table(batch, file)
        os.utime(file, (1_700_000_000 + index, 1_700_000_000 + index))


def _forget_last_batch(checkpoint: Path) -> None:
    """Spark's log of finished batches loses its last entry, as when the query died between
    the sink's commit and that entry."""
    last = max((checkpoint / "commits").glob("[0-9]*"), key=lambda f: int(f.name))
    last.unlink()
    (checkpoint / "commits" / f".{last.name}.crc").unlink(missing_ok=True)


def _sink_commits(path: str) -> list[dict]:
    """The sink's metadata of each completed write that recorded a sink checkpoint."""
    inspector = HudiTable.open(path).inspect
    found = []
    for instant in inspector.timeline():
        done = instant.is_write and instant.is_completed
        extra = inspector.commit(instant.timestamp).extra_metadata if done else {}
        if CHECKPOINT_KEY in extra:
            ids = {key: extra.get(key) for key in (QUERY_ID_KEY, APPLICATION_ID_KEY)}
            checkpoint = json.loads(extra[CHECKPOINT_KEY])
            found.append({"instant": instant.timestamp, "action": instant.action, **ids})
            found[-1][CHECKPOINT_KEY] = checkpoint
    return found


@contextmanager
def _in_query(spark, query_id: str | None):
    """This thread runs as a batch of streaming query `query_id` (None: of no known query)."""
    context = spark.sparkContext
    context.setLocalProperty("sql.streaming.queryId", query_id)
    try:
        yield
    finally:
        context.setLocalProperty("sql.streaming.queryId", None)


def _latest_by_key(batches: list[pa.Table]) -> pa.Table:
    """The model of upserts: each key's row of the last batch holding it."""
    rows = {row["uuid"]: row for batch in batches for row in batch.to_pylist()}
    return pa.Table.from_pylist(list(rows.values()), schema=batches[0].schema)


def _assert_rows(path: str, expected: pa.Table) -> None:
    """The table holds exactly `expected`'s rows, by our reader and by hudi-rs."""
    ours = HudiTable.open(path).read()
    oracle.assert_same_table(ours, oracle.snapshot(path), "hudi-rs")
    data = ours.drop_columns([name for name in ours.column_names if is_meta_field(name)])
    assert data.num_rows == expected.num_rows
    assert _by_key(data) == _by_key(expected.select(data.column_names))


def _by_key(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda row: row["uuid"])
