"""Writing a Spark DataFrame into a Hudi table, with the rows staying on the executors.

The driver runs hudi_core's write transaction; the data goes through Spark:

1. executors prepare the input's batches (validate, key, flag deletes) with hudi_core's
   preparer and pack them into Arrow blobs by the hash of their record key (spark_jobs.blobs);
2. a shuffle brings every key's rows, and the keys stored in the touched partitions' base
   files (read on executors), into one task: there duplicates are pre-combined and each row
   tagged with the file group holding its key (Apache Hudi's simple index, whatever
   hoodie.index.type says);
3. the driver collects counts only (rows per file group, new rows per partition) and plans
   buckets with hudi_core (small files, new file groups sized by the record size estimate);
4. executors route every row to its bucket, a shuffle puts each bucket in one Spark
   partition, and hudi_core's write task writes it there;
5. the driver collects the write stats and completes the instant.

Only the input crosses from the JVM to Python row by row; after that rows travel as blobs,
so a shuffle moves a few large values (see spark_jobs.blobs for why).

Bulk inserts take Spark's own sort instead: rows are range-partitioned by partition path and
key (or left where they are with hoodie.bulkinsert.sort.mode=NONE) and every Spark
partition writes new file groups of its rows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import StorageLevel, TaskContext
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from hudi_core import errors
from hudi_core.config import write_options as W
from hudi_core.engine import running_attempt
from hudi_core.errors import HudiError
from hudi_core.index.base import IndexContext, match_keys
from hudi_core.keygen.partition import require_safe_partition_paths
from hudi_core.merge.record_merger import DELETE_COLUMN
from hudi_core.model.commit_metadata import WriteStat
from hudi_core.model.file_group import FileSlice
from hudi_core.model.file_names import new_file_id
from hudi_core.model.partition_metadata import ensure_partition_metadata
from hudi_core.schema.meta_fields import PARTITION_PATH_FIELD, RECORD_KEY_FIELD
from hudi_core.table import HudiTable
from hudi_core.write.bucket_plan import NO_BUCKET, BucketPlan, plan_buckets
from hudi_core.write.client import WriteClient, WriteJob
from hudi_core.write.handles import CreateTask, WriteSettings
from hudi_core.write.prepare import BatchPreparer
from hudi_core.write.transaction import WriteTransaction
from spark_jobs import blobs
from spark_jobs.blobs import FILE_ID
from spark_jobs.engine import SparkEngine, current_attempt
from spark_jobs.sources import ArrowFiles

STATS_SCHEMA = "stat string"
FLUSH_BYTES = 64 << 20  # prepared rows a task packs into blobs at a time
Counts = list[tuple[str, str | None, bool, int]]  # (partition path, file id, delete, rows)


class SparkWriter:
    """Writes DataFrames into one table; `write` is HudiTable.write for Spark."""

    def __init__(self, spark: SparkSession, table: HudiTable) -> None:
        self.spark = spark
        self.table = table
        self.engine = SparkEngine(spark)

    def write(
        self,
        df: DataFrame | ArrowFiles,
        operation: str = "upsert",
        options: Mapping[str, Any] | None = None,
        extra_metadata: Mapping[str, str] | None = None,
    ) -> str | None:
        """Writes `df` (or files Python reads on the executors); returns the instant time,
        None when there was nothing to write."""
        merged = {**self.table.options, **(options or {})}
        client = WriteClient(self.table.storage, self.table.config, self.engine)
        with raised_as_hudi_errors(), _Cache(self.spark) as cache:
            job = client.start(operation, merged)
            if job.op in ("DELETE_PARTITION", "BULK_INSERT") and isinstance(df, ArrowFiles):
                df = df.to_dataframe(self.spark)
            if job.op == "DELETE_PARTITION":
                return self._delete_partitions(job, df, extra_metadata)
            if job.op == "BULK_INSERT":
                return self._bulk_insert(job, df, cache, extra_metadata)
            return self._routed_write(job, df, cache, extra_metadata)

    def _routed_write(
        self,
        job: WriteJob,
        source: DataFrame | ArrowFiles,
        cache: _Cache,
        extra_metadata: Mapping[str, str] | None,
    ) -> str | None:
        if isinstance(source, ArrowFiles):
            arrow_schema, files, df = source.schema, source, source.names(self.spark)
        else:
            arrow_schema, files, df = _arrow_schema(self.spark, source), None, source
        rows_schema, data_schema = _prepared_schema(job, arrow_schema)
        shuffle = _shuffle_values(self.spark, self._shuffle_partitions(job, df))
        preparer = _PrepareBlobs(job.preparer, rows_schema, shuffle, files)
        split = df.mapInArrow(preparer, blobs.SPARK_SCHEMA)
        # Counting prepares every row before an instant exists, as hudi_core does, so a bad
        # batch (null keys, say) fails with nothing to roll back.
        split, counts = cache.counted(split)
        if not counts and job.skips_empty_batch:
            return None
        if data_schema is None:
            raise HudiError("nothing to write: the table has no schema and the batch none")
        with job.transaction() as transaction:
            touched = {partition for partition, *_ in counts}
            replaced, candidates, keep = _what_to_tag(
                job, transaction.view.latest_slices(), touched
            )
            tagged = split
            if job.combine or candidates:
                combined = self._combined_and_tagged(
                    job, split, candidates, keep, rows_schema, shuffle
                )
                tagged, counts = cache.counted(combined)
            plan = self._plan(job, transaction, counts, replaced is None)
            settings = job.settings(transaction.instant_time, data_schema)
            for partition in sorted({b.partition_path for b in plan.buckets}):
                ensure_partition_metadata(job.storage, partition, transaction.instant_time)
            transaction.start_execution(b.planned_work() for b in plan.buckets)
            stats = []
            if plan.buckets:
                allow_duplicates = job.options.get_option(W.MERGE_ALLOW_DUPLICATE_ON_INSERTS)
                match = not (job.op == "INSERT" and allow_duplicates)
                stats = self._write_buckets(tagged, plan, settings, match, rows_schema)
            transaction.complete(stats, data_schema, replaced, extra_metadata)
        return transaction.instant_time

    def _combined_and_tagged(
        self,
        job: WriteJob,
        split: DataFrame,
        candidates: list[FileSlice],
        keep: str,
        rows_schema: pa.Schema,
        shuffle: np.ndarray,
    ) -> DataFrame:
        """Blobs of the rows pre-combined (when the operation does) and tagged with their file
        group: each key slot's rows meet the keys stored for that slot in one task."""
        keyed = split
        if candidates:
            keyed = split.unionByName(self._stored_keys(job, candidates, shuffle))
        reducer = _CombineAndTag(job.preparer, job.combine, candidates, keep, rows_schema)
        return keyed.repartition(len(shuffle), "slot").mapInArrow(reducer, blobs.SPARK_SCHEMA)

    def _shuffle_partitions(self, job: WriteJob, df: DataFrame) -> int:
        """The operation's hoodie.*.shuffle.parallelism, else the input's partitions (at
        least the engine's parallelism), as Apache Hudi infers it."""
        configured = job.shuffle_parallelism
        if configured > 0:
            return configured
        return max(df.rdd.getNumPartitions(), self.engine.parallelism)

    def _stored_keys(
        self, job: WriteJob, candidates: list[FileSlice], shuffle: np.ndarray
    ) -> DataFrame:
        """Blobs of the keys stored in `candidates`, by key slot; read on executors, one
        slice per task (no engine of their own needed there)."""
        context = IndexContext(
            job.storage, None, candidates, job.key_generator, job.config.populate_meta_fields
        )
        ids = self.spark.range(len(candidates), numPartitions=max(1, min(len(candidates), 64)))
        return ids.mapInArrow(_StoredKeyBlobs(context, shuffle), blobs.SPARK_SCHEMA)

    def _plan(
        self, job: WriteJob, transaction: WriteTransaction, counts: Counts, use_small_files: bool
    ) -> BucketPlan:
        updates: dict[tuple[str, str], int] = {}
        inserts: dict[str, int] = {}
        for partition, file_id, is_delete, count in counts:
            if file_id is not None:
                updates[(partition, file_id)] = updates.get((partition, file_id), 0) + count
            elif not is_delete or job.keeps_every_change:  # see BucketPlan.every_change
                inserts[partition] = inserts.get(partition, 0) + count
        job.refuse_updates_under_clustering(updates)
        view = transaction.view
        return plan_buckets(
            updates,
            inserts,
            view.latest_slices(),
            job.sizing,
            job.log_targets(view),
            use_small_files and job.tops_up_small_files,
            job.keeps_every_change,
            job.held_by_clustering,
        )

    def _write_buckets(
        self,
        tagged: DataFrame,
        plan: BucketPlan,
        settings: WriteSettings,
        match_keys: bool,
        rows_schema: pa.Schema,
    ) -> list[WriteStat]:
        count = len(plan.buckets)
        shuffle = _shuffle_values(self.spark, count)
        routed = tagged.mapInArrow(_RouteBlobs(plan, shuffle), blobs.SPARK_SCHEMA)
        runner = _RunBuckets(plan, settings, match_keys, rows_schema)
        stats = routed.repartition(count, "slot").mapInArrow(runner, STATS_SCHEMA)
        return [WriteStat.from_json(json.loads(row.stat)) for row in stats.collect()]

    # ---- bulk insert

    def _bulk_insert(
        self,
        job: WriteJob,
        df: DataFrame,
        cache: _Cache,
        extra_metadata: Mapping[str, str] | None,
    ) -> str | None:
        rows_schema, data_schema = _prepared_schema(job, _arrow_schema(self.spark, df))
        spark_schema = from_arrow_schema(rows_schema, prefer_timestamp_ntz=False)
        partitions = self._shuffle_partitions(job, df)
        if job.combine:
            # A key's record key columns decide its key: rows of one key meet in one task.
            key_columns = [F.col(name) for name in job.config.record_key_fields]
            df = df.repartition(partitions, *key_columns)
        prepared = df.mapInArrow(_Prepare(job.preparer, rows_schema, job.combine), spark_schema)
        prepared = prepared.where(~F.col(DELETE_COLUMN))
        prepared, with_rows = cache.partitions_of(prepared)
        if not with_rows and job.skips_empty_batch:
            return None
        if data_schema is None:
            raise HudiError("nothing to write: the table has no schema and the batch none")
        mode = job.options.get_option(W.BULK_INSERT_SORT_MODE)
        if mode == "GLOBAL_SORT":
            order = [PARTITION_PATH_FIELD, RECORD_KEY_FIELD]
            prepared = prepared.repartitionByRange(partitions, *order).sortWithinPartitions(*order)
        elif mode == "PARTITION_SORT":
            prepared = prepared.sortWithinPartitions(PARTITION_PATH_FIELD, RECORD_KEY_FIELD)
        with job.transaction() as transaction:
            settings = job.settings(transaction.instant_time, data_schema)
            transaction.start_execution([])
            for partition in sorted(with_rows):
                ensure_partition_metadata(job.storage, partition, settings.instant_time)
            writer = _CreateFileGroups(settings, rows_schema)
            stats = prepared.mapInArrow(writer, STATS_SCHEMA).collect()
            stats = [WriteStat.from_json(json.loads(row.stat)) for row in stats]
            transaction.complete(stats, data_schema, None, extra_metadata)
        return transaction.instant_time

    # ---- delete_partition

    def _delete_partitions(
        self, job: WriteJob, df: DataFrame, extra_metadata: Mapping[str, str] | None
    ) -> str:
        listed = job.options.get_option(W.PARTITIONS_TO_DELETE)
        if listed:
            partitions = {p.strip() for p in listed.split(",") if p.strip()}
            require_safe_partition_paths(sorted(partitions), W.PARTITIONS_TO_DELETE.key)
        else:
            paths = df.mapInArrow(_PartitionPaths(job.key_generator), "p string")
            partitions = {row.p for row in paths.distinct().collect()}
        if not partitions:
            raise HudiError(
                "delete_partition needs hoodie.datasource.write.partitions.to.delete or rows "
                "naming the partitions"
            )
        with job.transaction() as transaction:
            doomed = [s for s in transaction.view.latest_slices() if s.partition_path in partitions]
            transaction.start_execution([])
            replaced = _file_ids_by_partition(doomed)
            transaction.complete([], job.table_schema, replaced, extra_metadata)
        return transaction.instant_time


# ---- what runs on executors (picklable callables over Arrow batches)


class _PrepareBlobs:
    """Prepares the input's rows (or the rows of the files it names) and packs them into
    blobs by key slot."""

    def __init__(
        self,
        preparer: BatchPreparer,
        schema: pa.Schema,
        shuffle: np.ndarray,
        files: ArrowFiles | None = None,
    ) -> None:
        self.preparer = preparer
        self.schema = schema  # of the prepared rows
        self.shuffle = shuffle  # the shuffle value of each key slot
        self.files = files

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        tables = self.files.tables(batches) if self.files else map(pa.table, batches)
        pending, size = [], 0
        for table in tables:
            rows, _ = self.preparer.prepare(table, combine=False)
            pending.append(rows.cast(self.schema))
            size += rows.nbytes
            if size >= FLUSH_BYTES:
                yield from self._packed(pending)
                pending, size = [], 0
        yield from self._packed(pending)

    def _packed(self, pending: list[pa.Table]) -> Iterator[pa.RecordBatch]:
        if not pending:
            return
        for slot, rows in blobs.by_key_slot(pa.concat_tables(pending), len(self.shuffle)):
            yield from blobs.batches_of(rows, int(self.shuffle[slot]), counted=True)


class _StoredKeyBlobs:
    """The keys stored in some slices' base files, packed by key slot (part: the slice)."""

    def __init__(self, context: IndexContext, shuffle: np.ndarray) -> None:
        self.context = context
        self.shuffle = shuffle

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                keys = self.context.stored_keys(self.context.slices[index])
                stored = pa.table({RECORD_KEY_FIELD: keys.cast(pa.string())})
                for slot, part in blobs.by_key_slot(stored, len(self.shuffle)):
                    yield from blobs.batches_of(part, int(self.shuffle[slot]), blobs.KEYS, index)


class _CombineAndTag:
    """All rows of some keys, with the stored copies of those keys: pre-combines them and
    tags each with the file group holding its key. `keep`: "tagged" (upserts, deletes),
    "new" (inserts dropping keys the table holds) or "all" (no tagging)."""

    def __init__(
        self,
        preparer: BatchPreparer,
        combine: bool,
        candidates: list[FileSlice],
        keep: str,
        schema: pa.Schema,
    ) -> None:
        self.preparer = preparer
        self.combine = combine
        self.candidates = candidates
        self.keep = keep
        self.schema = schema

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        received = _all_rows(batches)
        if received is None:
            return
        rows = blobs.decode_rows(received, self.schema)
        if rows.num_rows == 0:
            return
        if self.combine:
            rows = self.preparer.precombine(rows)
        file_ids = pa.nulls(rows.num_rows, pa.string())
        if self.candidates:
            file_ids = match_keys(rows, self.candidates, self._stored(received))
        if self.keep == "new":
            rows = rows.filter(pc.is_null(file_ids))
        if self.keep != "tagged":
            file_ids = pa.nulls(rows.num_rows, pa.string())
        yield from blobs.batches_of(rows.append_column(FILE_ID, file_ids), -1, counted=True)

    def _stored(self, received: pa.Table) -> list[pa.ChunkedArray]:
        parts: list[list[pa.Array]] = [[] for _ in self.candidates]
        for index, keys in blobs.decode(received, blobs.KEYS):
            parts[index].extend(keys.column(0).chunks)
        return [pa.chunked_array(chunks, pa.string()) for chunks in parts]


class _RouteBlobs:
    """Splits tagged rows by bucket (the blob's part), shuffled to the bucket's partition."""

    def __init__(self, plan: BucketPlan, shuffle: np.ndarray) -> None:
        self.plan = plan
        self.shuffle = shuffle  # the shuffle value of each bucket

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for _, rows in blobs.decode(pa.table(batch)):
                if FILE_ID in rows.column_names:
                    file_ids = rows.column(FILE_ID)
                else:
                    file_ids = pa.nulls(rows.num_rows, pa.string())
                buckets = self.plan.route(rows, file_ids)
                for bucket, part in blobs.split_by(rows, buckets):
                    if bucket != NO_BUCKET:
                        yield from blobs.batches_of(part, int(self.shuffle[bucket]), part=bucket)


class _RunBuckets:
    """Writes the buckets whose rows this Spark partition holds; yields their write stats."""

    def __init__(
        self, plan: BucketPlan, settings: WriteSettings, match_keys: bool, schema: pa.Schema
    ) -> None:
        self.plan = plan
        self.settings = settings
        self.match_keys = match_keys
        self.schema = schema  # of the prepared rows

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        received = _all_rows(batches)
        if received is None:
            return
        by_bucket: dict[int, list[pa.Table]] = {}
        for bucket, rows in blobs.decode(received):
            by_bucket.setdefault(bucket, []).append(rows)
        stats = []
        with running_attempt(current_attempt()):
            for bucket_id, parts in sorted(by_bucket.items()):
                rows = _as_prepared(pa.concat_tables(parts), self.schema)
                task = self.plan.task(bucket_id, rows, self.match_keys)
                stats += task.run(self.settings)
        yield _stats_batch(stats)


class _Prepare:
    """Bulk insert: prepares rows batch by batch; or, to pre-combine, all the task's rows at
    once (the shuffle before it brought every key's rows into one task)."""

    def __init__(self, preparer: BatchPreparer, schema: pa.Schema, combine: bool) -> None:
        self.preparer = preparer
        self.schema = schema
        self.combine = combine

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        if self.combine:
            rows = _all_rows(batches)
            batches = iter([rows] if rows is not None else [])
        for batch in batches:
            rows, _ = self.preparer.prepare(pa.table(batch), combine=self.combine)
            yield from rows.cast(self.schema).to_batches()


class _CreateFileGroups:
    """Bulk insert: new file groups of this Spark partition's rows, per partition path."""

    def __init__(self, settings: WriteSettings, schema: pa.Schema) -> None:
        self.settings = settings
        self.schema = schema  # of the prepared rows

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        rows = _all_rows(batches)
        if rows is None or rows.num_rows == 0:
            return
        rows = _as_prepared(rows, self.schema)
        task_id = TaskContext.get().partitionId()
        stats = []
        paths = rows.column(PARTITION_PATH_FIELD)
        with running_attempt(current_attempt()):
            for partition in pc.unique(paths).to_pylist():
                part = rows.filter(pc.equal(paths, partition))
                stats += CreateTask(task_id, partition, new_file_id(0), part).run(self.settings)
        yield _stats_batch(stats)


class _PartitionPaths:
    def __init__(self, key_generator) -> None:
        self.key_generator = key_generator

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            paths = self.key_generator.partition_paths(pa.Table.from_batches([batch]))
            yield pa.RecordBatch.from_arrays([pc.unique(paths).cast(pa.string())], ["p"])


# ---- helpers


class _Cache:
    """The DataFrames a write caches (each read by a count, then by the next step), built
    uncompressed (they live for one write, and compressing them would cost as much as
    preparing the rows), and unpersisted when the write ends."""

    _COMPRESSED = "spark.sql.inMemoryColumnarStorage.compressed"

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self.cached: list[DataFrame] = []

    def __enter__(self) -> _Cache:
        return self

    def __exit__(self, *exc_info) -> None:
        for df in self.cached:
            df.unpersist()

    def counted(self, blob_rows: DataFrame) -> tuple[DataFrame, Counts]:
        """`blob_rows` cached, and their counts (computing them fills the cache)."""
        with self._uncompressed():
            cached = self._persist(blob_rows)
            return cached, blobs.summed_counts(cached)

    def partitions_of(self, rows: DataFrame) -> tuple[DataFrame, set[str]]:
        """`rows` cached, and the partition paths they hold."""
        with self._uncompressed():
            cached = self._persist(rows)
            found = cached.select(PARTITION_PATH_FIELD).distinct().collect()
            return cached, {row[0] for row in found}

    def _persist(self, df: DataFrame) -> DataFrame:
        cached = df.persist(StorageLevel.MEMORY_AND_DISK)
        self.cached.append(cached)
        return cached

    @contextmanager
    def _uncompressed(self) -> Iterator[None]:
        before = self.spark.conf.get(self._COMPRESSED)
        self.spark.conf.set(self._COMPRESSED, "false")
        try:
            yield
        finally:
            self.spark.conf.set(self._COMPRESSED, before)


def _what_to_tag(
    job: WriteJob, slices: list[FileSlice], touched: set[str]
) -> tuple[dict[str, list[str]] | None, list[FileSlice], str]:
    """What the operation replaces (insert_overwrite: the touched partitions' file groups, or
    all), the slices whose stored keys it is tagged against, and which rows it keeps
    (see _CombineAndTag)."""
    if job.op in ("INSERT_OVERWRITE", "INSERT_OVERWRITE_TABLE"):
        whole = job.op == "INSERT_OVERWRITE_TABLE"
        doomed = [s for s in slices if whole or s.partition_path in touched]
        return _file_ids_by_partition(doomed), [], "all"
    if job.op == "INSERT" and not job.options.get_option(W.INSERT_DROP_DUPLICATES):
        return None, [], "all"
    candidates = [s for s in slices if s.base_file and s.partition_path in touched]
    return None, candidates, "new" if job.op == "INSERT" else "tagged"


def _arrow_schema(spark: SparkSession, df: DataFrame) -> pa.Schema:
    return to_arrow_schema(df.schema, timezone=spark.conf.get("spark.sql.session.timeZone"))


def _prepared_schema(job: WriteJob, arrow_schema: pa.Schema) -> tuple[pa.Schema, pa.Schema | None]:
    """The Arrow schema of the prepared rows and the data schema they commit; preparing no
    rows checks the columns (keys, ordering field, types) on the driver."""
    sample, data_schema = job.preparer.prepare(arrow_schema.empty_table(), combine=False)
    return sample.schema, data_schema


_EXECUTOR_HUDI_ERROR = re.compile(r"hudi_core\.errors\.(\w+): ([^\n]*)")


@contextmanager
def raised_as_hudi_errors() -> Iterator[None]:
    """A HudiError raised in a Python worker (an executor's task, or a data source's planning)
    reaches the driver as a Spark exception holding the worker's traceback; callers get the
    hudi_core error itself instead."""
    try:
        yield
    except PySparkException as failure:
        found = _EXECUTOR_HUDI_ERROR.findall(str(failure))
        error = getattr(errors, found[-1][0], None) if found else None
        if isinstance(error, type) and issubclass(error, HudiError):
            raise error(found[-1][1].strip()) from failure
        raise


def _all_rows(batches: Iterator[pa.RecordBatch]) -> pa.Table | None:
    collected = list(batches)
    return pa.Table.from_batches(collected) if collected else None


def _as_prepared(rows: pa.Table, schema: pa.Schema) -> pa.Table:
    """Rows as hudi_core prepared them: Spark's round trip may reorder columns and respell
    types (time zones); the file id column goes."""
    return rows.select(schema.names).cast(schema)


def _stats_batch(stats: list[WriteStat]) -> pa.RecordBatch:
    payload = [json.dumps(stat.to_json()) for stat in stats]
    return pa.RecordBatch.from_arrays([pa.array(payload, pa.string())], ["stat"])


def _file_ids_by_partition(slices: list[FileSlice]) -> dict[str, list[str]]:
    by_partition: dict[str, list[str]] = {}
    for file_slice in slices:
        by_partition.setdefault(file_slice.partition_path, []).append(file_slice.file_id)
    return by_partition


def _shuffle_values(spark: SparkSession, count: int) -> np.ndarray:
    """For each target t < count, a value whose hash partitioning (Spark's Murmur3 over a
    long, modulo `count`) is t: so the shuffle puts every target (a key slot, a bucket) in a
    Spark partition of its own, and no task does two while another idles."""
    found = np.full(count, -1, dtype=np.int64)
    span = 32 * count
    while (found < 0).any():
        candidates = spark.range(span - 32 * count, span).select(
            "id", F.pmod(F.hash("id"), F.lit(count)).alias("p")
        )
        for value, partition in candidates.collect():
            if found[partition] < 0:
                found[partition] = value
        span += 32 * count
    return found
