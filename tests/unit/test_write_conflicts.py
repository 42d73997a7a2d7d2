"""Optimistic concurrency in one process, with writes interleaved by hand: a write whose file
groups another instant changed after it started fails at commit with WriteConflictError and
is rolled back, leaving exactly the other write's rows; writes on different file groups both
commit; a compaction planned while a write runs fails that write (OCC) or is refused (single
writer)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_core import HudiTable
from hudi_core.errors import ConcurrentServiceError, WriteConflictError
from hudi_core.model.commit_metadata import CommitMetadata
from hudi_core.model.compaction_plan import read_plan
from hudi_core.timeline import ActiveTimeline, avro_metadata
from hudi_core.write.client import WriteClient, WriteJob
from hudi_core.write.transaction import WriteTransaction
from tests import datagen, oracle
from tests.tables import create_trips_table, data_files

OCC = {"hoodie.write.concurrency.mode": "OPTIMISTIC_CONCURRENCY_CONTROL"}
MAX_COMMITS = "hoodie.compact.inline.max.delta.commits"
KEYS = list(range(40))  # ten keys per city: key k lives in datagen.CITIES[k % 4]
SF, NY, SP, CH = datagen.CITIES
CONFLICT = re.compile(
    r"write (\d{17}) conflicts with (\w+) (\d{17}), which (completed|was planned)"
)


def _keys_in(city: str) -> list[int]:
    return [k for k in KEYS if datagen.CITIES[k % len(datagen.CITIES)] == city]


def _rows_by_key(*batches: pa.Table) -> dict[str, dict]:
    """The table a sequence of committed upserts leaves: per key, its last row."""
    return {row["uuid"]: row for batch in batches for row in batch.to_pylist()}


def _create(tmp_path: Path, table_type: str, options: dict | None = None):
    """A trips table holding KEYS (ts 1); returns its path, the table and its rows by key."""
    path, table = create_trips_table(tmp_path, table_type, OCC if options is None else options)
    first = datagen.trips(KEYS, seed=1, ts=1)
    table.write(first)
    return path, table, _rows_by_key(first)


def _start(table: HudiTable, options: dict | None = None) -> WriteJob:
    """An upsert that has loaded the timeline, as a writer does before it plans."""
    client = WriteClient(table.storage, table.config, table.engine)
    return client.start("upsert", {**table.options, **(options or {})})


def _run(job: WriteJob, batch: pa.Table) -> str:
    return job.run(*job.prepare(batch))


def _assert_rows(
    table: HudiTable, path: str, expected: dict[str, dict], context: str, oracle_too: bool = True
) -> None:
    """Our reader returns exactly `expected` (data columns), once per key; hudi-rs agrees."""
    ours = table.read()
    data = ours.drop_columns([c for c in ours.column_names if c.startswith("_hoodie_")])
    assert data.num_rows == len(expected), f"{context}: {data.num_rows} rows"
    assert oracle.sorted_rows(data) == oracle.sorted_rows(
        pa.Table.from_pylist(list(expected.values()), schema=datagen.SCHEMA)
    ), f"{context}: rows differ"
    if oracle_too:
        oracle.assert_same_table(ours, oracle.snapshot(path), f"{context} (hudi-rs)")


def _file_id(path: str, city: str) -> str:
    """The one file group of `city` (each city's ten keys fill one)."""
    names = [f.split("/")[-1] for f in data_files(path) if f.startswith(f"{city}/")]
    ids = {name.lstrip(".").split("_")[0] for name in names}
    assert len(ids) == 1, ids
    return ids.pop()


def _rolled_back(table: HudiTable, instant_time: str) -> bool:
    """Whether `instant_time` left the timeline through a completed rollback."""
    timeline = table.timeline()
    if any(i.timestamp == instant_time for i in timeline):
        return False
    hoodie = Path(table.storage.base_path) / ".hoodie"
    for rollback in (i for i in timeline if i.action == "rollback" and i.is_completed):
        metadata = avro_metadata.deserialize((hoodie / rollback.file_name).read_bytes())
        if metadata["commitsRollback"] == [instant_time]:
            return not (hoodie / ".temp" / instant_time).exists()  # markers gone too
    return False


@pytest.fixture
def during_write(monkeypatch) -> Callable[[str, Callable[[], object]], None]:
    """during_write(moment, action) runs `action` once inside the next write: at 'inflight'
    (planned, inflight file written, no data file yet) or at 'written' (data files written,
    commit not yet checked)."""

    def arrange(moment: str, action: Callable[[], object]) -> None:
        method = {"inflight": "start_execution", "written": "complete"}[moment]
        original = getattr(WriteTransaction, method)
        fired = []

        def hooked(self, *args, **kwargs):
            if moment == "inflight":
                original(self, *args, **kwargs)
            if not fired:
                fired.append(self.instant_time)  # first, so a write inside `action` passes
                action()
            if moment == "written":
                original(self, *args, **kwargs)

        monkeypatch.setattr(WriteTransaction, method, hooked)

    return arrange


# ---- two writers


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_the_later_commit_on_a_shared_file_group_fails_and_is_rolled_back(tmp_path, table_type):
    path, table, rows = _create(tmp_path, table_type)
    sf = _keys_in(SF)[:5]
    first_batch, second_batch = datagen.trips(sf, 2, ts=2), datagen.trips(sf, 3, ts=3)
    first, second = _start(table), _start(table)  # both from the same timeline
    winner = _run(first, first_batch)
    with pytest.raises(WriteConflictError) as caught:
        _run(second, second_batch)

    message = str(caught.value)
    loser, action, other, how = CONFLICT.search(message).groups()
    assert (action, other, how) == (table.timeline()[-2].action, winner, "completed"), message
    assert f"{SF}/{_file_id(path, SF)}" in message and "rolled back" in message, message
    assert _rolled_back(table, loser)
    if table_type == "COPY_ON_WRITE":
        assert not [f for f in data_files(path) if loser in f]  # its merged base file is gone
    _assert_rows(table, path, {**rows, **_rows_by_key(first_batch)}, "after the conflict")
    assert oracle.completed_commit_times(path)[-1] == winner


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_commit_landing_while_another_write_writes_its_files_keeps_its_rows(
    tmp_path, table_type, during_write
):
    # The second write plans from the same listing as the first and writes its files after the
    # first committed: on merge-on-read both add the next log version of the same file group.
    path, table, rows = _create(tmp_path, table_type)
    sf = _keys_in(SF)
    committed_batch, failed_batch = datagen.trips(sf, 2, ts=2), datagen.trips(sf, 3, ts=3)
    committed = []
    during_write("inflight", lambda: committed.append(_run(_start(table), committed_batch)))
    with pytest.raises(WriteConflictError) as caught:
        _run(_start(table), failed_batch)

    loser, _, other, _ = CONFLICT.search(str(caught.value)).groups()
    assert committed == [other]
    assert _rolled_back(table, loser)
    _assert_rows(table, path, {**rows, **_rows_by_key(committed_batch)}, "committed write kept")


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_writes_on_different_file_groups_both_commit(tmp_path, table_type, during_write):
    path, table, rows = _create(tmp_path, table_type)
    sf_batch, ny_batch = datagen.trips(_keys_in(SF), 2, ts=2), datagen.trips(_keys_in(NY), 3, ts=3)
    inner = []
    during_write("written", lambda: inner.append(_run(_start(table), ny_batch)))
    outer = _run(_start(table), sf_batch)  # started before the NY write, committed after it

    assert [i.timestamp for i in table.timeline()][-2:] == [outer, *inner]
    assert oracle.completed_commit_times(path)[-2:] == sorted([outer, *inner])
    _assert_rows(table, path, {**rows, **_rows_by_key(sf_batch, ny_batch)}, "both writes")


# ---- a writer and compaction


def _mor_with_logs(tmp_path: Path, options: dict | None = None):
    """A merge-on-read table whose four file groups each have a log file."""
    path, table, rows = _create(tmp_path, "MERGE_ON_READ", options)
    update = datagen.trips(KEYS, seed=2, ts=2)
    table.write(update)
    return path, table, {**rows, **_rows_by_key(update)}


@pytest.mark.parametrize("moment", ["inflight", "written"])
def test_a_compaction_planned_during_a_write_fails_that_write(tmp_path, during_write, moment):
    path, table, rows = _mor_with_logs(tmp_path)
    planned = []
    during_write(moment, lambda: planned.append(table.compaction.schedule({MAX_COMMITS: 1})))
    with pytest.raises(WriteConflictError) as caught:
        _run(_start(table), datagen.trips(_keys_in(SF), 3, ts=3))

    [compaction] = planned
    assert compaction is not None
    plan = read_plan(ActiveTimeline.load(table.storage), compaction)
    assert (SF, _file_id(path, SF)) in plan.file_groups() and len(plan.file_groups()) == 4
    message = str(caught.value)
    loser, action, other, how = CONFLICT.search(message).groups()
    assert (action, other, how) == ("compaction", compaction, "was planned"), message
    assert f"{SF}/{_file_id(path, SF)}" in message, message
    assert _rolled_back(table, loser)
    _assert_rows(table, path, rows, "the failed write left nothing")

    # A write started after the plan puts its log on the slice the compaction starts.
    later_batch = datagen.trips(_keys_in(SF), 4, ts=4)
    later = _run(_start(table), later_batch)
    rows.update(_rows_by_key(later_batch))
    # hudi-rs 0.5 skips the logs on a pending compaction's slice: ours alone until it runs.
    _assert_rows(table, path, rows, "write after the plan", oracle_too=False)
    assert table.compaction.run(compaction) == compaction
    assert table.compaction.pending() == []
    _assert_rows(table, path, rows, "after the compaction")
    assert oracle.completed_commit_times(path)[-2:] == [compaction, later]  # by instant time


def test_a_compaction_completing_during_a_write_started_after_its_plan_is_no_conflict(
    tmp_path, during_write
):
    path, table, rows = _mor_with_logs(tmp_path)
    compaction = table.compaction.schedule({MAX_COMMITS: 1})
    assert compaction is not None
    batch = datagen.trips(_keys_in(SF), 3, ts=3)
    during_write("written", lambda: table.compaction.run(compaction))
    written = _run(_start(table), batch)  # its log went on the compaction's new slice

    assert oracle.completed_commit_times(path)[-2:] == [compaction, written]
    _assert_rows(table, path, {**rows, **_rows_by_key(batch)}, "write and compaction")


def test_a_single_writer_table_refuses_to_plan_a_compaction_while_a_write_runs(
    tmp_path, during_write
):
    path, table, rows = _mor_with_logs(tmp_path, options={})  # SINGLE_WRITER
    refused = []

    def schedule() -> None:
        with pytest.raises(ConcurrentServiceError, match="still in flight") as caught:
            table.compaction.schedule({MAX_COMMITS: 1})
        refused.append(caught.value)

    during_write("inflight", schedule)
    batch = datagen.trips(_keys_in(SF), 3, ts=3)
    written = _run(_start(table), batch)

    assert len(refused) == 1 and written in str(refused[0])
    assert table.compaction.pending() == []
    _assert_rows(table, path, {**rows, **_rows_by_key(batch)}, "the write went on")
    assert table.compaction.schedule({MAX_COMMITS: 1}) is not None  # once the write is done


# ---- a writer and clustering


@pytest.mark.parametrize("moment", ["inflight", "written"])
def test_a_clustering_completed_during_a_write_fails_that_write(tmp_path, during_write, moment):
    """The write started before the plan (so it was not refused), and the clustering that
    rewrote its file group completed first: the write fails at commit and is rolled back."""
    path, table, rows = _create(tmp_path, "COPY_ON_WRITE")
    done = []
    during_write(moment, lambda: done.append(table.clustering.run(table.clustering.schedule())))
    with pytest.raises(WriteConflictError) as caught:
        _run(_start(table), datagen.trips(_keys_in(SF), 3, ts=3))
    [clustering] = done
    message = str(caught.value)
    loser, action, other, how = CONFLICT.search(message).groups()
    assert (action, other, how) == ("replacecommit", clustering, "completed"), message
    assert _rolled_back(table, loser)
    _assert_rows(table, path, rows, "the clustered rows, without the failed write's")


# ---- the bucket index


def test_two_writers_making_the_same_new_bucket_conflict(tmp_path, during_write):
    """Both writers find bucket 0 of a new partition empty and each makes a file group for
    it, with different file ids: the later commit fails (a bucket holds one file group), as
    Apache Hudi's bucket-index conflict strategy decides; a different bucket would not."""
    bucket = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "1"}
    path, table, rows = _create(tmp_path, "MERGE_ON_READ", {**OCC, **bucket})
    new_city = ["lisbon"]
    first, second = (datagen.trips([100 + k], k, ts=5, cities=new_city) for k in (1, 2))
    inner = []
    during_write("written", lambda: inner.append(_run(_start(table), first)))
    with pytest.raises(WriteConflictError, match=CONFLICT) as raised:
        _run(_start(table), second)
    loser = CONFLICT.search(str(raised.value)).group(1)
    assert _rolled_back(table, loser)
    assert len({f.split("_")[0] for f in data_files(path) if f.startswith("lisbon/")}) == 1
    _assert_rows(table, path, {**rows, **_rows_by_key(first)}, "the first bucket write")


# ---- schema evolution out of order


def test_columns_of_a_write_completing_after_a_newer_one_stay_in_the_table_schema(
    tmp_path, during_write
):
    """Two streams of a wide table start at once; the newer one completes first, so the
    newest commit by instant time, where every reader takes the schema from, lacks the older
    one's columns. The older write's commit publishes them first in an empty commit: readers
    (ours, hudi-rs) and a compaction see both streams' columns."""
    path = str(tmp_path / "wide")
    options = {
        "hoodie.datasource.write.payload.class": (
            "org.apache.hudi.common.model.PartialUpdateAvroPayload"
        ),
        "hoodie.index.type": "BUCKET",
        "hoodie.bucket.index.num.buckets": "2",
        "hoodie.write.concurrency.mode": "NON_BLOCKING_CONCURRENCY_CONTROL",
        "hoodie.write.lock.provider": "in_process",
    }
    table = HudiTable.create(
        path, "wide", "MERGE_ON_READ", ["uuid"], [], "_ts1:name;_ts2:age", options=options
    )
    names = pa.table({"uuid": ["a", "b"], "name": ["x", "y"], "_ts1": [1, 1]})
    ages = pa.table({"uuid": ["b", "c"], "age": [7, 8], "_ts2": [1, 1]})
    inner = []
    during_write(
        "written",
        lambda: inner.append(_run(_start(table, {"hoodie.write.log.suffix": "job2"}), ages)),
    )
    outer = _run(_start(table, {"hoodie.write.log.suffix": "job1"}), names)

    timeline = ActiveTimeline.load(table.storage)
    published = timeline.last_completed_write()
    assert outer < inner[0] < published.timestamp  # the empty commit is the newest
    metadata = CommitMetadata.from_json_bytes(timeline.read_bytes(published))
    assert metadata.write_stats() == []
    expected = {"uuid", "name", "_ts1", "age", "_ts2"}
    assert set(table.schema().names) == expected
    rows = {r["uuid"]: r for r in table.read(columns=sorted(expected)).to_pylist()}
    assert rows == {
        "a": {"uuid": "a", "name": "x", "_ts1": 1, "age": None, "_ts2": None},
        "b": {"uuid": "b", "name": "y", "_ts1": 1, "age": 7, "_ts2": 1},
        "c": {"uuid": "c", "name": None, "_ts1": None, "age": 8, "_ts2": 1},
    }
    compaction = table.compaction.schedule({MAX_COMMITS: 1})
    table.compaction.run(compaction)
    assert {r["uuid"]: r for r in table.read(columns=sorted(expected)).to_pylist()} == rows
    ours = table.read()
    oracle.assert_same_table(ours, oracle.snapshot(path), "compacted wide table (hudi-rs)")
