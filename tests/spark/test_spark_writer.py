"""SparkWriter: DataFrame writes give the tables hudi_core's local writes give, while the rows
stay on the executors (the driver collects counts and write stats only), each bucket is
written by one task (small ones share a Spark partition), a failed task attempt leaves no
file behind, and a bad batch is refused before an instant exists."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark import RDD, TaskContext, cloudpickle
from pyspark.sql.classic.dataframe import DataFrame as ClassicDataFrame

from hudi_core import HudiTable
from hudi_core.errors import RecordKeyError, WriteConflictError
from hudi_core.model.file_names import BaseFileName, LogFileName
from hudi_core.schema.meta_fields import PARTITION_PATH_FIELD, RECORD_KEY_FIELD, is_meta_field
from spark_jobs import writer as spark_writer
from spark_jobs.writer import SparkWriter
from tests import cdc, oracle
from tests.datagen import trips
from tests.tables import create_trips_table, data_files, request_clustering

pytestmark = pytest.mark.spark

# The wrappers below run on executors, which cannot import this test module: ship their code.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

NO_SMALL_FILES = {"hoodie.parquet.small.file.limit": "0"}
IS_DELETED = "_hoodie_is_deleted"
PAYLOAD = "hoodie.datasource.write.payload.class"


class Pair:
    """Two tables of the same kind: one written by the SparkWriter, one by hudi_core locally,
    always with the same batches."""

    def __init__(self, spark, folder: Path, table_type: str, options: dict | None = None):
        self.spark = spark
        self.spark_path, spark_table = create_trips_table(folder / "spark", table_type, options)
        self.local_path, self.local = create_trips_table(folder / "local", table_type, options)
        self.writer = SparkWriter(spark, spark_table)

    def write(self, batch: pa.Table, operation: str, options: dict | None = None) -> str:
        instant = self.writer.write(self.spark.createDataFrame(batch), operation, options)
        self.local.write(batch, operation, options)
        return instant

    def seed(self, batch: pa.Table, operation: str = "upsert") -> None:
        """Writes `batch` into both tables locally: a quick start for tests of later writes."""
        HudiTable.open(self.spark_path).write(batch, operation)
        self.local.write(batch, operation)

    def snapshot(self) -> pa.Table:
        return HudiTable.open(self.spark_path).read()

    def assert_same_contents(self, step: str) -> None:
        """Same data rows in both tables, by our reader and by hudi-rs (commit times and file
        names differ between the tables, so meta columns are compared per table only)."""
        ours = self.snapshot()
        oracle.assert_same_table(ours, oracle.snapshot(self.spark_path), f"{step}: hudi-rs")
        local = HudiTable.open(self.local_path).read()
        oracle.assert_same_table(_data(ours), _data(local), f"{step}: spark vs local")
        theirs_local = oracle.snapshot(self.local_path)
        oracle.assert_same_table(_data(ours), _data(theirs_local), f"{step}: hudi-rs local")


def _data(table: pa.Table) -> pa.Table:
    return table.drop_columns([name for name in table.column_names if is_meta_field(name)])


def _rows_by_key(table: pa.Table) -> dict[str, list[dict]]:
    by_key: dict[str, list[dict]] = {}
    for row in table.to_pylist():
        by_key.setdefault(row["uuid"], []).append(row)
    return by_key


def _key(k: int) -> str:
    return f"key-{k:06d}"


def _commit_stats(path: str, instant: str) -> list[dict]:
    (completed,) = [i for i in HudiTable.open(path).timeline() if i.timestamp == instant]
    metadata = json.loads((Path(path) / ".hoodie" / completed.file_name).read_text())
    return [s for stats in metadata["partitionToWriteStats"].values() for s in stats]


def _assert_keys_sorted_in_every_base_file(path: str, instant: str) -> None:
    for stat in _commit_stats(path, instant):
        keys = pq.read_table(Path(path) / stat["path"], columns=[RECORD_KEY_FIELD])
        keys = keys.column(0).to_pylist()
        assert keys == sorted(keys), f"{stat['path']} is not sorted by key"


def _with_duplicates(keys: range, winners: range, losers: range, ts: int) -> pa.Table:
    """An upsert batch with duplicate keys: `winners` again with a larger ts, `losers` again
    with a smaller one."""
    return pa.concat_tables(
        [
            trips(list(winners), seed=ts + 100, ts=ts + 1),
            trips(list(keys), seed=ts, ts=ts),
            trips(list(losers), seed=ts + 200, ts=ts - 1),
        ]
    )


def _with_is_deleted(batch: pa.Table) -> pa.Table:
    """Marks the rows of even keys deleted through `_hoodie_is_deleted`."""
    flags = [int(key[-6:]) % 2 == 0 for key in batch.column("uuid").to_pylist()]
    return batch.append_column(IS_DELETED, pa.array(flags))


def _assert_duplicates_pre_combined(pair: Pair, winners: range, losers: range, ts: int) -> None:
    by_key = _rows_by_key(pair.snapshot())
    for k in winners:
        assert [r["ts"] for r in by_key[_key(k)]] == [ts + 1], "larger ts wins"
    for k in losers:
        assert [r["ts"] for r in by_key[_key(k)]] == [ts], "smaller ts loses"


# ---- rows stay on the executors

# What the writer may collect, by the columns collected: never a data column.
ALLOWED_COLLECTS = {
    (PARTITION_PATH_FIELD,): "partitions a bulk insert writes",
    ("partition", "file_id", "is_delete", "rows", "bytes"): "rows per file group",
    ("stat",): "write stats",
    ("p",): "partitions to delete",
}


@pytest.fixture
def driver_collects(monkeypatch):
    """Records the columns of every DataFrame collected to the driver; fails any other way of
    bringing rows there (Arrow, pandas, local iterators, RDDs)."""
    collected: list[tuple[str, ...]] = []
    original = ClassicDataFrame.collect

    def collect(self):
        collected.append(tuple(self.columns))
        return original(self)

    def refuse(name):
        def refused(self, *args, **kwargs):
            raise AssertionError(f"the writer called {name} on {self.columns}")

        return refused

    monkeypatch.setattr(ClassicDataFrame, "collect", collect)
    for name in ("toArrow", "toPandas", "_collect_as_arrow", "toLocalIterator", "tail"):
        monkeypatch.setattr(ClassicDataFrame, name, refuse(name))
    monkeypatch.setattr(RDD, "collect", refuse("RDD.collect"))
    return collected


def _assert_only_counts_and_stats_collected(collected: list[tuple[str, ...]]) -> None:
    unexpected = [columns for columns in collected if columns not in ALLOWED_COLLECTS]
    assert not unexpected, f"data reached the driver: {unexpected}"
    assert ("stat",) in collected, "the guard saw the writes"


def test_copy_on_write_writes_match_local_writes_and_keep_rows_off_the_driver(
    spark, tmp_path, driver_collects
):
    pair = Pair(spark, tmp_path, "COPY_ON_WRITE")
    first = pair.write(trips(list(range(60)), 1, 1), "bulk_insert")  # GLOBAL_SORT: the default
    _assert_keys_sorted_in_every_base_file(pair.spark_path, first)
    pair.assert_same_contents("bulk_insert GLOBAL_SORT")

    pair.write(_with_duplicates(range(40, 80), range(50, 55), range(70, 73), ts=2), "upsert")
    pair.assert_same_contents("upsert with duplicates")
    _assert_duplicates_pre_combined(pair, range(50, 55), range(70, 73), ts=2)

    allow = {"hoodie.merge.allow.duplicate.on.inserts": "true"}
    pair.write(trips([*range(5), *range(100, 110)], 3, 3), "insert", allow)
    pair.assert_same_contents("insert allowing duplicates")
    by_key = _rows_by_key(pair.snapshot())
    assert all(len(by_key[_key(k)]) == 2 for k in range(5)), "inserted keys kept twice"

    pair.write(trips(list(range(10)), 4, 4), "delete")
    pair.assert_same_contents("delete")
    assert not {_key(k) for k in range(10)} & set(_rows_by_key(pair.snapshot()))

    pair.write(trips(list(range(200, 210)), 5, 5, cities=["chennai"]), "insert_overwrite")
    pair.assert_same_contents("insert_overwrite")
    chennai = [r["uuid"] for r in pair.snapshot().to_pylist() if r["city"] == "chennai"]
    assert sorted(chennai) == [_key(k) for k in range(200, 210)]

    pair.write(trips([2], 6, 6), "delete_partition")  # the partition of key 2: sao_paulo
    pair.assert_same_contents("delete_partition")
    assert "sao_paulo" not in pair.snapshot().column("city").to_pylist()

    pair.write(_with_is_deleted(trips(list(range(40, 50)), 7, 7)), "upsert")
    pair.assert_same_contents("_hoodie_is_deleted upsert")
    by_key = _rows_by_key(pair.snapshot())
    assert all((_key(k) in by_key) == (k % 2 == 1) for k in range(40, 50))
    _assert_only_counts_and_stats_collected(driver_collects)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_first_upsert_pre_combines_in_its_write_tasks_as_locally(spark, tmp_path, table_type):
    """Into a new table no stored key is looked up, so a key's rows meet in the write task of
    its insert bucket (no shuffle by key): duplicates, keys inserted and deleted in the batch,
    deletes of keys never written and a partition of deletes only come out as locally."""
    pair = Pair(spark, tmp_path, table_type)
    batch = _with_duplicates(range(0, 40), range(5, 10), range(30, 33), ts=2)
    inserted_then_deleted = _with_is_deleted(trips(list(range(10, 20)), 3, 3))
    never_written = trips(list(range(100, 104)), 4, 4, cities=["pune"])  # deletes only
    never_written = never_written.append_column(IS_DELETED, pa.array([True] * 4))
    batch = batch.append_column(IS_DELETED, pa.array([False] * len(batch)))
    pair.write(pa.concat_tables([batch, inserted_then_deleted, never_written]), "upsert")
    pair.assert_same_contents("first upsert")
    _assert_duplicates_pre_combined(pair, range(5, 10), range(30, 33), ts=2)
    by_key = _rows_by_key(pair.snapshot())
    assert all((_key(k) in by_key) == (k % 2 == 1) for k in range(10, 20))
    assert not {_key(k) for k in range(100, 104)} & set(by_key)
    assert "pune" not in pair.snapshot().column("city").to_pylist()


def test_merge_on_read_writes_match_local_writes_and_keep_rows_off_the_driver(
    spark, tmp_path, driver_collects
):
    pair = Pair(spark, tmp_path, "MERGE_ON_READ", NO_SMALL_FILES)
    sort = {"hoodie.bulkinsert.sort.mode": "PARTITION_SORT"}
    first = pair.write(trips(list(range(60)), 1, 1), "bulk_insert", sort)
    _assert_keys_sorted_in_every_base_file(pair.spark_path, first)
    pair.assert_same_contents("bulk_insert PARTITION_SORT")

    batch = _with_duplicates(range(30, 90), range(30, 35), range(35, 38), ts=2)
    updated = pair.write(batch, "upsert")
    pair.assert_same_contents("upsert with duplicates")
    _assert_duplicates_pre_combined(pair, range(30, 35), range(35, 38), ts=2)
    _assert_updates_appended_to_logs(pair.spark_path, first, updated)

    deleted = pair.write(trips(list(range(15)), 3, 3), "delete")
    pair.assert_same_contents("delete")
    stats = _commit_stats(pair.spark_path, deleted)
    assert stats and all(s["logVersion"] >= 1 and s["numDeletes"] for s in stats)

    drop = {"hoodie.datasource.write.partitions.to.delete": "chennai,new york"}
    pair.write(trips([0], 4, 4), "delete_partition", drop)
    pair.assert_same_contents("delete_partition")
    assert set(pair.snapshot().column("city").to_pylist()) == {"san_francisco", "sao_paulo"}

    pair.write(
        trips(list(range(300, 320)), 4, 4), "bulk_insert", {"hoodie.bulkinsert.sort.mode": "NONE"}
    )
    pair.assert_same_contents("bulk_insert NONE")

    pair.write(trips(list(range(400, 410)), 5, 5), "insert")
    pair.assert_same_contents("insert")

    pair.write(trips(list(range(500, 530)), 6, 6), "insert_overwrite_table")
    pair.assert_same_contents("insert_overwrite_table")
    assert set(_rows_by_key(pair.snapshot())) == {_key(k) for k in range(500, 530)}

    pair.write(_with_is_deleted(trips(list(range(500, 510)), 7, 7)), "upsert")
    pair.assert_same_contents("_hoodie_is_deleted upsert")
    by_key = _rows_by_key(pair.snapshot())
    assert all((_key(k) in by_key) == (k % 2 == 1) for k in range(500, 510))
    _assert_only_counts_and_stats_collected(driver_collects)


def _assert_updates_appended_to_logs(path: str, base_instant: str, instant: str) -> None:
    """The upsert's updates went to new log files on the base files of `base_instant`; only
    its new keys made base files (of new file groups)."""
    base_groups = {s["fileId"] for s in _commit_stats(path, base_instant)}
    stats = _commit_stats(path, instant)
    appends = [s for s in stats if s.get("logVersion") is not None]
    assert appends, "no log append in the deltacommit"
    for stat in appends:
        name = LogFileName.parse(Path(stat["path"]).name)
        assert name is not None and name.version == stat["logVersion"] >= 1
        assert name.base_instant_time == stat["prevCommit"] == base_instant
        assert stat["fileId"] in base_groups and stat["numUpdateWrites"] > 0
        assert (Path(path) / stat["path"]).is_file()
    created = [s for s in stats if s.get("logVersion") is None]
    assert created and all(s["prevCommit"] == "null" for s in created), "no merge on MOR"
    assert not {s["fileId"] for s in created} & base_groups


# ---- buckets over Spark partitions, and failed attempts


class _RecordBuckets:
    """Wraps the writer's bucket-writing function: notes which buckets each Spark partition
    was given, in a file per partition (executors share no memory with the test)."""

    def __init__(self, inner, folder: str) -> None:
        self.inner = inner
        self.folder = folder

    def __call__(self, batches):
        batches = list(batches)
        buckets = sorted({b for batch in batches for b in batch.column("part").to_pylist()})
        partition = TaskContext.get().partitionId()
        Path(self.folder, f"{partition}.json").write_text(json.dumps(buckets))
        yield from self.inner(iter(batches))


class _FailFirstAttempt:
    """Spark partition 0 writes its bucket twice: first as a task attempt that dies after
    writing its files (its stats never reach the driver), then as the retry (attempt 1)."""

    def __init__(self, inner, folder: str) -> None:
        self.inner = inner
        self.folder = folder

    def __call__(self, batches):
        batches = list(batches)
        if TaskContext.get().partitionId() != 0:
            yield from self.inner(iter(batches))
            return
        lost = [s for out in self.inner(iter(batches)) for s in out.column(0).to_pylist()]
        paths = [json.loads(stat)["path"] for stat in lost]
        Path(self.folder, "lost.json").write_text(json.dumps(paths))
        original = spark_writer.current_attempt
        spark_writer.current_attempt = lambda: 1  # what Spark reports to a retried task
        try:
            yield from self.inner(iter(batches))
        finally:
            spark_writer.current_attempt = original


@pytest.fixture
def wrap_bucket_writes(monkeypatch):
    """wrap(cls, folder): the SparkWriter's bucket-writing functions get wrapped by `cls`."""

    def wrap(wrapper: type, folder: Path) -> None:
        original = ClassicDataFrame.mapInArrow

        def map_in_arrow(self, func, schema, *args, **kwargs):
            if isinstance(getattr(func, "fn", func), spark_writer._RunBuckets):  # guarded
                func = wrapper(func, str(folder))
            return original(self, func, schema, *args, **kwargs)

        monkeypatch.setattr(ClassicDataFrame, "mapInArrow", map_in_arrow)

    return wrap


def test_small_buckets_share_a_few_spark_partitions_each_written_once(
    spark, tmp_path, wrap_bucket_writes
):
    split = {"hoodie.copyonwrite.insert.auto.split": "false"}
    split["hoodie.copyonwrite.insert.split.size"] = "10"
    pair = Pair(spark, tmp_path, "COPY_ON_WRITE", {**NO_SMALL_FILES, **split})
    pair.seed(trips(list(range(40)), 1, 1), "bulk_insert")
    record = tmp_path / "buckets"
    record.mkdir()
    wrap_bucket_writes(_RecordBuckets, record)
    # Updates in all four cities, and 40 new keys: 10 per city, one new file group each.
    instant = pair.write(trips(list(range(20, 80)), 2, 2), "upsert")
    pair.assert_same_contents("upsert")

    given = {int(f.stem): json.loads(f.read_text()) for f in record.glob("*.json")}
    stats = _commit_stats(pair.spark_path, instant)
    assert len(stats) >= 8
    assert sorted(b for buckets in given.values() for b in buckets) == list(range(len(stats)))
    # Two tasks per core: Spark's set-up of a Python task costs more than a small bucket.
    assert len(given) == 2 * spark.sparkContext.defaultParallelism, given
    tokens = [BaseFileName.parse(Path(s["path"]).name).write_token for s in stats]
    task_ids = sorted(int(token.split("-")[0]) for token in tokens)
    assert task_ids == list(range(len(stats))), "one write task per bucket"


def test_a_failed_task_attempt_leaves_no_stray_files(spark, tmp_path, wrap_bucket_writes):
    pair = Pair(spark, tmp_path, "MERGE_ON_READ", NO_SMALL_FILES)
    pair.seed(trips(list(range(40)), 1, 1), "bulk_insert")
    wrap_bucket_writes(_FailFirstAttempt, tmp_path)
    instant = pair.write(trips(list(range(20, 60)), 2, 2), "upsert")  # appends and creates
    pair.assert_same_contents("upsert with a retried task")

    lost = json.loads((tmp_path / "lost.json").read_text())
    assert lost and not any((Path(pair.spark_path) / p).exists() for p in lost)
    committed = {p for i in HudiTable.open(pair.spark_path).timeline() for p in _paths(pair, i)}
    assert data_files(pair.spark_path) == committed
    attempts = {_attempt(s["path"]) for s in _commit_stats(pair.spark_path, instant)}
    assert attempts == {0, 1}, "the retried bucket's files are the retry's (attempt 1)"


def _attempt(path: str) -> int:
    """The task attempt in a data file's write token (task-stage-attempt)."""
    name = Path(path).name
    parsed = BaseFileName.parse(name) or LogFileName.parse(name)
    return int(parsed.write_token.split("-")[2])


def _paths(pair: Pair, instant) -> list[str]:
    if not instant.is_completed:
        return []
    return [s["path"] for s in _commit_stats(pair.spark_path, instant.timestamp)]


# ---- bad batches


def test_a_null_record_key_fails_and_leaves_the_table_unchanged(spark, tmp_path):
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE")
    table.write(trips(list(range(20)), 1, 1))
    before = (table.read(), sorted(p.name for p in (Path(path) / ".hoodie").iterdir()))
    files = data_files(path)

    batch = trips(list(range(20, 40)), 2, 2)
    keys = batch.column("uuid").to_pylist()
    batch = batch.set_column(0, "uuid", pa.array([*keys[:-1], None], pa.string()))
    df = spark.createDataFrame(batch).repartition(2)  # the null key in any one partition
    with pytest.raises(RecordKeyError, match="uuid"):
        SparkWriter(spark, table).write(df, "upsert")

    after = (table.read(), sorted(p.name for p in (Path(path) / ".hoodie").iterdir()))
    assert after[1] == before[1], "no instant was requested"
    assert after[0].equals(before[0])
    assert data_files(path) == files


@pytest.mark.parametrize(
    ("table_type", "payload"),
    [
        ("COPY_ON_WRITE", "org.apache.hudi.common.model.EmptyHoodieRecordPayload"),
        ("MERGE_ON_READ", "org.apache.hudi.EmptyHoodieRecordPayload"),  # Flink docs' spelling
    ],
)
def test_an_upsert_with_the_empty_payload_deletes_its_keys(spark, tmp_path, table_type, payload):
    pair = Pair(spark, tmp_path, table_type, NO_SMALL_FILES)
    pair.seed(trips(list(range(12)), seed=1, ts=5))
    # Lower ordering values than stored, and a key the table does not hold: an empty payload
    # deletes whatever the stored record says, and deleting a missing key does nothing.
    pair.write(trips([1, 5, 7, 400], seed=2, ts=1), "upsert", {PAYLOAD: payload})
    keys = set(pair.snapshot()["uuid"].to_pylist())
    assert keys == {f"key-{k:06d}" for k in range(12) if k not in (1, 5, 7)}
    pair.assert_same_contents("after the deleting upsert")


def test_a_cdc_batch_into_a_changelog_table_keeps_every_change_as_locally(spark, tmp_path):
    def create(name: str) -> HudiTable:
        return HudiTable.create(
            str(tmp_path / name),
            name="cdc",
            table_type="MERGE_ON_READ",
            record_key_fields=["id"],
            partition_fields=["p"],
            precombine_field="ts",
            options={"hoodie.allow.operation.metadata.field": "true", **NO_SMALL_FILES},
        )

    spark_table, local = create("spark"), create("local")
    firsts = [t.write(cdc.stored_batch()) for t in (spark_table, local)]
    # One Spark partition: the batch's order is the order of the changes.
    df = spark.createDataFrame(cdc.cdc_batch(cdc.CDC)).coalesce(1)
    seconds = [SparkWriter(spark, spark_table).write(df), local.write(cdc.cdc_batch(cdc.CDC))]
    changelog = {"hoodie.datasource.read.changelog.enabled": "true"}
    reads = [
        table.read(query_type="incremental", begin=first, end=second, options=changelog)
        for table, first, second in zip((spark_table, local), firsts, seconds, strict=True)
    ]
    changes = [
        cdc.by_key([(r["id"], r["_hoodie_operation"], r["ts"], r["v"]) for r in read.to_pylist()])
        for read in reads
    ]
    assert changes[0] == changes[1] == cdc.by_key(cdc.CDC)
    snapshot = HudiTable.open(spark_table.storage.base_path).read()
    assert {r["id"]: r["v"] for r in snapshot.to_pylist()} == cdc.latest_states(cdc.CDC)
    oracle.assert_same_table(snapshot, oracle.snapshot(spark_table.storage.base_path))


def test_updates_of_file_groups_under_pending_clustering_are_refused(spark, tmp_path):
    pair = Pair(spark, tmp_path, "COPY_ON_WRITE", NO_SMALL_FILES)
    pair.seed(trips(list(range(6)), seed=1, ts=1, cities=["chennai", "sao_paulo"]))
    request_clustering(pair.spark_path, "chennai")
    files = data_files(pair.spark_path)
    batch = trips([0, 1, 2, 3], seed=2, ts=2, cities=["chennai", "sao_paulo"])
    with pytest.raises(WriteConflictError, match="pending clustering rewrites .*chennai/"):
        pair.writer.write(spark.createDataFrame(batch), "upsert")
    assert data_files(pair.spark_path) == files
    assert all(i.action != "commit" or i.is_completed for i in pair.writer.table.timeline())


def _persisted_in_memory(spark) -> list[str]:
    """The storage levels of the JVM's persisted RDDs that keep data in the heap."""
    persisted = spark.sparkContext._jsc.getPersistentRDDs()
    levels = [rdd.getStorageLevel() for rdd in persisted.values()]
    return [level.description() for level in levels if level.useMemory()]


@pytest.mark.parametrize("existing", [False, True], ids=["new table", "existing table"])
def test_an_upsert_keeps_no_copy_of_its_rows_in_the_jvm_heap(
    spark, tmp_path, monkeypatch, existing
):
    """Spark's own writers stream; so does this one, within a default 1 GB heap: when the
    buckets are written, the input was never cached (it is read again), and the tagged rows
    of an upsert into an existing table are cached on disk only."""
    pair = Pair(spark, tmp_path, "COPY_ON_WRITE", NO_SMALL_FILES)
    if existing:
        pair.seed(trips(list(range(0, 30)), 1, 1))
    seen: list[tuple[int, list[str]]] = []
    write_buckets = SparkWriter._write_buckets

    def watched(self, *args, **kwargs):
        persisted = spark.sparkContext._jsc.getPersistentRDDs()
        seen.append((len(persisted), _persisted_in_memory(spark)))
        return write_buckets(self, *args, **kwargs)

    monkeypatch.setattr(SparkWriter, "_write_buckets", watched)
    pair.write(trips(list(range(20, 50)), 2, 2), "upsert")
    pair.assert_same_contents("upsert")
    [(persisted, in_memory)] = seen
    assert in_memory == []
    assert persisted == (1 if existing else 0)
