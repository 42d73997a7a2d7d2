"""Writing a Spark DataFrame into a Hudi table, with the rows staying on the executors.

The driver runs hudi_core's write transaction; the data goes through Spark:

1. executors prepare their batches (validate, key, flag deletes) with hudi_core's preparer;
2. duplicates are brought together by key and pre-combined (when the operation does);
3. tagging: a join with the keys stored in the touched partitions' base files (read on
   executors) finds each row's file group (Apache Hudi's simple index, as a Spark join);
4. the driver collects counts only (rows per file group, new rows per partition) and plans
   buckets with hudi_core (small files, new file groups sized by the record size estimate);
5. executors route every row to its bucket, a shuffle puts each bucket in one Spark
   partition, and each bucket is written by hudi_core's write task there;
6. the driver collects the write stats and completes the instant.

Bulk inserts skip 3-5: rows are range-partitioned by partition path and key (or left where
they are with hoodie.bulkinsert.sort.mode=NONE) and every Spark partition writes new file
groups of its rows.
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
from pyspark.sql.types import LongType, StructField, StructType

from hudi_core import errors
from hudi_core.config import write_options as W
from hudi_core.engine import running_attempt
from hudi_core.errors import HudiError
from hudi_core.index.base import IndexContext
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
from spark_jobs.engine import SparkEngine, current_attempt

FILE_ID = "__hudi_file_id"
BUCKET = "__hudi_bucket"
SLOT = "__hudi_slot"  # what the shuffle hashes: chosen so that bucket b lands in partition b
STATS_SCHEMA = "stat string"


class SparkWriter:
    """Writes DataFrames into one table; `write` is HudiTable.write for Spark."""

    def __init__(self, spark: SparkSession, table: HudiTable) -> None:
        self.spark = spark
        self.table = table
        self.engine = SparkEngine(spark)

    def write(
        self,
        df: DataFrame,
        operation: str = "upsert",
        options: Mapping[str, Any] | None = None,
        extra_metadata: Mapping[str, str] | None = None,
    ) -> str | None:
        """Writes `df`; returns the instant time, None when there was nothing to write."""
        with raised_as_hudi_errors():
            return self._write(df, operation, options, extra_metadata)

    def _write(
        self,
        df: DataFrame,
        operation: str,
        options: Mapping[str, Any] | None,
        extra_metadata: Mapping[str, str] | None,
    ) -> str | None:
        merged = {**self.table.options, **(options or {})}
        client = WriteClient(self.table.storage, self.table.config, self.engine)
        job = client.start(operation, merged)
        if job.op == "DELETE_PARTITION":
            return self._delete_partitions(job, df, extra_metadata)
        prepared, data_schema, rows_schema = self._prepared(job, df)
        prepared = prepared.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            # Counting prepares every row before an instant exists (as hudi_core does), so a
            # bad batch (null keys, say) fails with nothing to roll back; isEmpty() would
            # look at one row only.
            empty = prepared.count() == 0
            if empty and not job.options.get_option(W.ALLOW_EMPTY_COMMIT):
                return None
            with job.transaction() as transaction:
                stats, replaced = self._execute(
                    job, transaction, prepared, data_schema, rows_schema
                )
                transaction.complete(stats, data_schema, replaced, extra_metadata)
        finally:
            prepared.unpersist()
        return transaction.instant_time

    # ---- preparing

    def _prepared(
        self, job: WriteJob, df: DataFrame
    ) -> tuple[DataFrame, pa.Schema | None, pa.Schema]:
        """The prepared rows, the data schema they commit, and their Arrow schema."""
        timezone = self.spark.conf.get("spark.sql.session.timeZone")
        arrow_schema = to_arrow_schema(df.schema, timezone=timezone)
        preparer = job.preparer
        sample, data_schema = preparer.prepare(arrow_schema.empty_table(), combine=False)
        spark_schema = from_arrow_schema(sample.schema, prefer_timestamp_ntz=False)
        prepared = df.mapInArrow(_Prepare(preparer, sample.schema), spark_schema)
        if job.combine:
            partitions = self.engine.parallelism
            prepared = prepared.repartition(partitions, RECORD_KEY_FIELD, PARTITION_PATH_FIELD)
            prepared = prepared.mapInArrow(_Precombine(preparer, sample.schema), spark_schema)
        return prepared, data_schema, sample.schema

    # ---- writing

    def _execute(
        self,
        job: WriteJob,
        transaction: WriteTransaction,
        prepared: DataFrame,
        data_schema: pa.Schema | None,
        rows_schema: pa.Schema,
    ) -> tuple[list[WriteStat], dict[str, list[str]] | None]:
        if data_schema is None:
            raise HudiError("nothing to write: the table has no schema and the batch none")
        settings = job.settings(transaction.instant_time, data_schema)
        if job.op == "BULK_INSERT":
            transaction.start_execution([])
            return self._bulk_insert(job, prepared, settings, rows_schema), None
        view = transaction.view
        replaced = None
        if job.op in ("INSERT_OVERWRITE", "INSERT_OVERWRITE_TABLE"):
            touched = _distinct_partitions(prepared)
            doomed = [
                s
                for s in view.latest_slices()
                if job.op == "INSERT_OVERWRITE_TABLE" or s.partition_path in touched
            ]
            replaced = _file_ids_by_partition(doomed)
            tagged = prepared.withColumn(FILE_ID, F.lit(None).cast("string"))
        elif job.op == "INSERT":
            tagged = self._tagged(job, prepared, view.latest_slices())
            if job.options.get_option(W.INSERT_DROP_DUPLICATES):
                tagged = tagged.where(F.col(FILE_ID).isNull())
            tagged = tagged.withColumn(FILE_ID, F.lit(None).cast("string"))
        else:
            tagged = self._tagged(job, prepared, view.latest_slices())
        plan = self._plan(job, transaction, tagged, use_small_files=replaced is None)
        if not plan.buckets:
            transaction.start_execution([])
            return [], replaced
        for partition in sorted({b.partition_path for b in plan.buckets}):
            ensure_partition_metadata(job.storage, partition, transaction.instant_time)
        transaction.start_execution(b.planned_work() for b in plan.buckets)
        match_keys = not (
            job.op == "INSERT" and job.options.get_option(W.MERGE_ALLOW_DUPLICATE_ON_INSERTS)
        )
        return self._write_buckets(tagged, plan, settings, match_keys, rows_schema), replaced

    def _tagged(self, job: WriteJob, prepared: DataFrame, slices: list[FileSlice]) -> DataFrame:
        """The prepared rows with the file id holding each key (null for new keys)."""
        touched = _distinct_partitions(prepared)
        candidates = [s for s in slices if s.base_file and s.partition_path in touched]
        if not candidates:
            return prepared.withColumn(FILE_ID, F.lit(None).cast("string"))
        # Read on executors, one slice per task: no engine of its own needed there.
        context = IndexContext(
            job.storage, None, candidates, job.key_generator, job.config.populate_meta_fields
        )
        reader = _StoredKeys(context)
        ids = self.spark.range(len(candidates), numPartitions=min(len(candidates), 64))
        stored = ids.mapInArrow(reader, _STORED_KEYS_SPARK_SCHEMA)
        return prepared.join(stored, [RECORD_KEY_FIELD, PARTITION_PATH_FIELD], "left")

    def _plan(
        self,
        job: WriteJob,
        transaction: WriteTransaction,
        tagged: DataFrame,
        use_small_files: bool,
    ) -> BucketPlan:
        counts = tagged.groupBy(PARTITION_PATH_FIELD, FILE_ID, DELETE_COLUMN).count().collect()
        updates: dict[tuple[str, str], int] = {}
        inserts: dict[str, int] = {}
        for partition, file_id, is_delete, count in counts:
            if file_id is not None:
                updates[(partition, file_id)] = updates.get((partition, file_id), 0) + count
            elif not is_delete:
                inserts[partition] = inserts.get(partition, 0) + count
        view = transaction.view
        return plan_buckets(
            updates,
            inserts,
            view.latest_slices(),
            job.sizing,
            job.log_targets(view),
            use_small_files,
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
        slots = _slots(self.spark, count)
        extra = [StructField(BUCKET, LongType()), StructField(SLOT, LongType())]
        routed_schema = StructType([*tagged.schema.fields, *extra])
        routed = tagged.mapInArrow(_Route(plan, slots), routed_schema)
        shuffled = routed.repartition(count, SLOT)
        runner = _RunBuckets(plan, settings, match_keys, rows_schema)
        stats = shuffled.mapInArrow(runner, STATS_SCHEMA)
        return [WriteStat.from_json(json.loads(row.stat)) for row in stats.collect()]

    def _bulk_insert(
        self, job: WriteJob, prepared: DataFrame, settings: WriteSettings, rows_schema: pa.Schema
    ) -> list[WriteStat]:
        mode = job.options.get_option(W.BULK_INSERT_SORT_MODE)
        rows = prepared.where(~F.col(DELETE_COLUMN))
        if mode == "GLOBAL_SORT":
            order = [PARTITION_PATH_FIELD, RECORD_KEY_FIELD]
            rows = rows.repartitionByRange(self.engine.parallelism, *order)
            rows = rows.sortWithinPartitions(*order)
        elif mode == "PARTITION_SORT":
            rows = rows.sortWithinPartitions(PARTITION_PATH_FIELD, RECORD_KEY_FIELD)
        partitions = _distinct_partitions(rows)
        for partition in sorted(partitions):
            ensure_partition_metadata(job.storage, partition, settings.instant_time)
        stats = rows.mapInArrow(_CreateFileGroups(settings, rows_schema), STATS_SCHEMA)
        return [WriteStat.from_json(json.loads(row.stat)) for row in stats.collect()]

    def _delete_partitions(
        self, job: WriteJob, df: DataFrame, extra_metadata: Mapping[str, str] | None
    ) -> str:
        listed = job.options.get_option(W.PARTITIONS_TO_DELETE)
        if listed:
            partitions = {p.strip() for p in listed.split(",") if p.strip()}
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


class _Prepare:
    def __init__(self, preparer: BatchPreparer, schema: pa.Schema) -> None:
        self.preparer = preparer
        self.schema = schema

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            rows, _ = self.preparer.prepare(pa.Table.from_batches([batch]), combine=False)
            yield from rows.cast(self.schema).to_batches()


class _Precombine:
    def __init__(self, preparer: BatchPreparer, schema: pa.Schema) -> None:
        self.preparer = preparer
        self.schema = schema

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        rows = _all_rows(batches, self.schema)
        if rows.num_rows:
            yield from self.preparer.precombine(rows).cast(self.schema).to_batches()


_STORED_KEYS_SCHEMA = pa.schema(
    [(RECORD_KEY_FIELD, pa.string()), (PARTITION_PATH_FIELD, pa.string()), (FILE_ID, pa.string())]
)
_STORED_KEYS_SPARK_SCHEMA = from_arrow_schema(_STORED_KEYS_SCHEMA)


class _StoredKeys:
    """(key, partition, file id) of every key stored in the base files of some slices."""

    def __init__(self, context: IndexContext) -> None:
        self.context = context

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                file_slice = self.context.slices[index]
                keys = self.context.stored_keys(file_slice).combine_chunks()
                n = len(keys)
                yield pa.RecordBatch.from_arrays(
                    [
                        keys.cast(pa.string()),
                        pa.array([file_slice.partition_path] * n, pa.string()),
                        pa.array([file_slice.file_id] * n, pa.string()),
                    ],
                    schema=_STORED_KEYS_SCHEMA,
                )


class _Route:
    """Adds each row's bucket (and the shuffle slot of that bucket); drops rows of none."""

    def __init__(self, plan: BucketPlan, slots: np.ndarray) -> None:
        self.plan = plan
        self.slots = slots

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            rows = pa.Table.from_batches([batch])
            buckets = self.plan.route(rows, rows.column(FILE_ID))
            keep = buckets != NO_BUCKET
            rows = rows.append_column(BUCKET, pa.array(buckets))
            rows = rows.append_column(SLOT, pa.array(self.slots[np.maximum(buckets, 0)]))
            yield from rows.filter(pa.array(keep)).to_batches()


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
        rows = _all_rows(batches)
        if rows is None or rows.num_rows == 0:
            return
        bucket_ids = rows.column(BUCKET).to_numpy()
        rows = _as_prepared(rows, self.schema)
        stats = []
        with running_attempt(current_attempt()):
            for bucket_id in np.unique(bucket_ids):
                part = rows.filter(pa.array(bucket_ids == bucket_id))
                task = self.plan.task(int(bucket_id), part, self.match_keys)
                stats += task.run(self.settings)
        yield _stats_batch(stats)


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


def _all_rows(
    batches: Iterator[pa.RecordBatch], schema: pa.Schema | None = None
) -> pa.Table | None:
    collected = list(batches)
    if not collected:
        return schema.empty_table() if schema is not None else None
    return pa.Table.from_batches(collected)


def _as_prepared(rows: pa.Table, schema: pa.Schema) -> pa.Table:
    """Rows as hudi_core prepared them: Spark's round trip may reorder columns (joins) and
    respell types (time zones)."""
    return rows.select(schema.names).cast(schema)


def _stats_batch(stats: list[WriteStat]) -> pa.RecordBatch:
    payload = [json.dumps(stat.to_json()) for stat in stats]
    return pa.RecordBatch.from_arrays([pa.array(payload, pa.string())], ["stat"])


def _distinct_partitions(df: DataFrame) -> set[str]:
    return {row[0] for row in df.select(PARTITION_PATH_FIELD).distinct().collect()}


def _file_ids_by_partition(slices: list[FileSlice]) -> dict[str, list[str]]:
    by_partition: dict[str, list[str]] = {}
    for file_slice in slices:
        by_partition.setdefault(file_slice.partition_path, []).append(file_slice.file_id)
    return by_partition


def _slots(spark: SparkSession, count: int) -> np.ndarray:
    """For each bucket b < count, a value whose hash partitioning (Spark's Murmur3 over a
    long, modulo `count`) is b: so the shuffle puts every bucket in a Spark partition of
    its own, and no task writes two buckets while another idles."""
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
