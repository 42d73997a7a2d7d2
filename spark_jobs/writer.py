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
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import StorageLevel, TaskContext
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from hudi_core import HudiTable, SchemaError, WriteOperation
from hudi_core.config import write_options as W
from hudi_core.distributed import (
    DELETE_COLUMN,
    NO_BUCKET,
    PARTITION_PATH_FIELD,
    RECORD_KEY_FIELD,
    BatchCount,
    BatchPreparer,
    BucketPlan,
    CreateTask,
    FileSlice,
    IndexContext,
    Lookup,
    WriteClient,
    WriteJob,
    WriteSettings,
    WriteStat,
    ensure_partition_metadata,
    match_keys,
    new_file_id,
    running_attempt,
)
from spark_jobs import blobs
from spark_jobs.blobs import FILE_ID
from spark_jobs.engine import SparkEngine, current_attempt
from spark_jobs.sources import ArrowFiles
from spark_jobs.task_errors import TaskErrors

STATS_SCHEMA = "stat string"
FLUSH_BYTES = 64 << 20  # prepared rows a task packs into blobs at a time


class SparkWriter:
    """Writes DataFrames into one table; `write` is HudiTable.write for Spark."""

    def __init__(self, spark: SparkSession, table: HudiTable) -> None:
        self.spark = spark
        self.table = table
        self.engine = SparkEngine(spark)

    def write(
        self,
        df: DataFrame | ArrowFiles,
        operation: WriteOperation | str = WriteOperation.UPSERT,
        options: Mapping[str, Any] | None = None,
        extra_metadata: Mapping[str, str] | None = None,
    ) -> str | None:
        """Writes `df` (or files Python reads on the executors); returns the instant time,
        None when there was nothing to write. A HudiError raised on an executor is raised
        here as itself (spark_jobs.task_errors), before anything is committed."""
        merged = {**self.table.options, **(options or {})}
        client = WriteClient(self.table.storage, self.table.config, self.engine)
        self.errors = TaskErrors(self.spark)  # this write's: none outlives it
        with _Cache(self.spark, self.errors) as cache:
            job = client.start(operation, merged)
            operation = job.operation
            if operation in (
                WriteOperation.DELETE_PARTITION,
                WriteOperation.BULK_INSERT,
            ) and isinstance(df, ArrowFiles):
                df = df.to_dataframe(self.spark)
            if operation is WriteOperation.DELETE_PARTITION:
                return self._delete_partitions(job, df, extra_metadata)
            if operation is WriteOperation.BULK_INSERT:
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
        split = df.mapInArrow(self.errors.guard(preparer), blobs.SPARK_SCHEMA)
        # Counting prepares every row before an instant exists, as hudi_core does, so a bad
        # batch (null keys, say) fails with nothing to roll back.
        split, counts = cache.counted(split)
        planner = job.planner
        if not counts and planner.skips_empty_batch:
            return None
        data_schema = _required(data_schema)
        with job.transaction() as transaction:
            view = transaction.view
            touched = {count.partition_path for count in counts}
            replaced = planner.replaced(view.latest_slices(), touched)
            lookup = planner.lookup(view.latest_slices(), touched)
            tagged = split
            if planner.combine or lookup.slices:
                combined = self._combined_and_tagged(job, split, lookup, rows_schema, shuffle)
                tagged, counts = cache.counted(combined)
            plan = planner.buckets_for_counts(counts, view, job.sizing)
            settings = job.settings(transaction.instant_time, data_schema)
            for partition in sorted({b.partition_path for b in plan.buckets}):
                ensure_partition_metadata(job.storage, partition, transaction.instant_time)
            transaction.start_execution(b.planned_work() for b in plan.buckets)
            stats = []
            if plan.buckets:
                match = planner.matches_keys
                stats = self._write_buckets(tagged, plan, settings, match, rows_schema)
            transaction.complete(stats, data_schema, replaced, extra_metadata)
        return transaction.instant_time

    def _combined_and_tagged(
        self,
        job: WriteJob,
        split: DataFrame,
        lookup: Lookup,
        rows_schema: pa.Schema,
        shuffle: np.ndarray,
    ) -> DataFrame:
        """Blobs of the rows pre-combined (when the operation does) and looked up as the
        planner says: each key slot's rows meet the keys stored for that slot in one task."""
        keyed = split
        if lookup.slices:
            keyed = split.unionByName(self._stored_keys(job, lookup.slices, shuffle))
        reducer = _CombineAndTag(job.preparer, job.planner.combine, lookup, rows_schema)
        reducer = self.errors.guard(reducer)
        return keyed.repartition(len(shuffle), "slot").mapInArrow(reducer, blobs.SPARK_SCHEMA)

    def _shuffle_partitions(self, job: WriteJob, df: DataFrame) -> int:
        """The operation's hoodie.*.shuffle.parallelism, else the input's partitions (at
        least the engine's parallelism), as Apache Hudi infers it."""
        configured = job.planner.shuffle_parallelism
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
        stored_keys = self.errors.guard(_StoredKeyBlobs(context, shuffle))
        return ids.mapInArrow(stored_keys, blobs.SPARK_SCHEMA)

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
        routed = tagged.mapInArrow(
            self.errors.guard(_RouteBlobs(plan, shuffle)), blobs.SPARK_SCHEMA
        )
        runner = self.errors.guard(_RunBuckets(plan, settings, match_keys, rows_schema))
        stats = routed.repartition(count, "slot").mapInArrow(runner, STATS_SCHEMA)
        return [WriteStat.from_json(json.loads(row.stat)) for row in self.errors.collect(stats)]

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
        combine = job.planner.combine
        if combine:
            # A key's record key columns decide its key: rows of one key meet in one task.
            key_columns = [F.col(name) for name in job.config.record_key_fields]
            df = df.repartition(partitions, *key_columns)
        preparer = self.errors.guard(_Prepare(job.preparer, rows_schema, combine))
        prepared = df.mapInArrow(preparer, spark_schema)
        prepared = prepared.where(~F.col(DELETE_COLUMN))
        prepared, with_rows = cache.partitions_of(prepared)
        if not with_rows and job.planner.skips_empty_batch:
            return None
        data_schema = _required(data_schema)
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
            writer = self.errors.guard(_CreateFileGroups(settings, rows_schema))
            stats = self.errors.collect(prepared.mapInArrow(writer, STATS_SCHEMA))
            stats = [WriteStat.from_json(json.loads(row.stat)) for row in stats]
            transaction.complete(stats, data_schema, None, extra_metadata)
        return transaction.instant_time

    # ---- delete_partition

    def _delete_partitions(
        self, job: WriteJob, df: DataFrame, extra_metadata: Mapping[str, str] | None
    ) -> str:
        def named_by_rows() -> list[str]:
            named = self.errors.guard(_PartitionPaths(job.key_generator))
            paths = df.mapInArrow(named, "p string")
            return [row.p for row in self.errors.collect(paths.distinct())]

        partitions = job.planner.partitions_to_delete(named_by_rows)
        with job.transaction() as transaction:
            replaced = job.planner.replaced(transaction.view.latest_slices(), partitions)
            transaction.start_execution([])
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
    looks them up as the planner's `lookup` says (tags each with the file group holding its
    key, or drops the rows whose key is stored)."""

    def __init__(
        self, preparer: BatchPreparer, combine: bool, lookup: Lookup, schema: pa.Schema
    ) -> None:
        self.preparer = preparer
        self.combine = combine
        self.lookup = lookup
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
        if self.lookup.slices:
            file_ids = match_keys(rows, self.lookup.slices, self._stored(received))
        if self.lookup.drops_stored:
            rows = rows.filter(pc.is_null(file_ids))
        if not self.lookup.tags:
            file_ids = pa.nulls(rows.num_rows, pa.string())
        yield from blobs.batches_of(rows.append_column(FILE_ID, file_ids), -1, counted=True)

    def _stored(self, received: pa.Table) -> list[pa.ChunkedArray]:
        parts: list[list[pa.Array]] = [[] for _ in self.lookup.slices]
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
    preparing the rows), and unpersisted when the write ends. The action filling a cache
    checks the write's task errors: a cache may hold the partial output of a task that handed
    back a HudiError, and nothing may read it after that."""

    _COMPRESSED = "spark.sql.inMemoryColumnarStorage.compressed"

    def __init__(self, spark: SparkSession, errors: TaskErrors) -> None:
        self.spark = spark
        self.errors = errors
        self.cached: list[DataFrame] = []

    def __enter__(self) -> _Cache:
        return self

    def __exit__(self, *exc_info) -> None:
        for df in self.cached:
            df.unpersist()

    def counted(self, blob_rows: DataFrame) -> tuple[DataFrame, list[BatchCount]]:
        """`blob_rows` cached, and their counts (computing them fills the cache)."""
        with self._uncompressed():
            cached = self._persist(blob_rows)
            counts = blobs.summed_counts(cached)
            self.errors.check()
            return cached, [BatchCount(*count) for count in counts]

    def partitions_of(self, rows: DataFrame) -> tuple[DataFrame, set[str]]:
        """`rows` cached, and the partition paths they hold."""
        with self._uncompressed():
            cached = self._persist(rows)
            found = self.errors.collect(cached.select(PARTITION_PATH_FIELD).distinct())
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


def _arrow_schema(spark: SparkSession, df: DataFrame) -> pa.Schema:
    return to_arrow_schema(df.schema, timezone=spark.conf.get("spark.sql.session.timeZone"))


def _prepared_schema(job: WriteJob, arrow_schema: pa.Schema) -> tuple[pa.Schema, pa.Schema | None]:
    """The Arrow schema of the prepared rows and the data schema they commit; preparing no
    rows checks the columns (keys, ordering field, types) on the driver."""
    sample, data_schema = job.preparer.prepare(arrow_schema.empty_table(), combine=False)
    return sample.schema, data_schema


def _required(data_schema: pa.Schema | None) -> pa.Schema:
    if data_schema is None:
        raise SchemaError("nothing to write: the table has no schema and the batch none")
    return data_schema


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
