"""Writing a Spark DataFrame into a Hudi table, with the rows staying on the executors.

The driver runs hudi_core's write transaction; the data goes through Spark:

1. executors prepare the input's batches (validate, key, flag deletes) with hudi_core's
   preparer and pack them into Arrow blobs by the hash of their record key (spark_jobs.blobs);
2. a shuffle brings every key's rows, and the copies of that key stored in the touched
   partitions' base files (every partition's, under a global index; read on executors),
   into one task: there duplicates are pre-combined and each row tagged with the file group
   holding its key live, by hudi_core's GlobalTagger as the local write tags (with no stored
   key to meet, as into a new table, this step is skipped: a key's rows all reach its insert
   bucket, whose write task pre-combines them). A key whose base files' copies may not be
   live (found in several file groups, or in one under a pending compaction; for an insert
   dropping duplicates, in a slice with log files) has those slices read there, on the
   executor, merged for that key: it counts only where live, other live copies are deleted in
   the same commit, and a key live nowhere is new. Which base files have their keys read is
   hoodie.index.type's choice:
   - SIMPLE: every base file of the touched partitions, one task per file;
   - BLOOM: only the files whose footer says they may hold an incoming key. Executors read
     the candidates' min/max keys (one task per file), every row's key goes to the files of
     its partition whose range holds it, and a task per file checks those keys against the
     footer's bloom filter (hudi_core's BloomIndex), reads the file's keys only if one may be
     there, and passes on the stored keys that match an incoming one;
   - BUCKET: no stored key at all, and no step 2: executors compute each row's bucket (Apache
     Hudi's hash of its key) and the driver collects rows per (partition, bucket); a key's
     rows all land in its bucket, whose write task pre-combines them (an insert that drops
     stored keys still joins them here first, as hudi_core does);
   - GLOBAL_SIMPLE, GLOBAL_BLOOM: as SIMPLE and BLOOM, over the base files of every
     partition (a key is one record in the table; blobs go by the hash of the key alone, so
     a key's rows meet its stored copies whatever partitions they name). The task
     pre-combines a key's rows by key alone, finds the file groups holding it (hudi_core's
     match_keys_globally) and spells out what each row does with the GlobalTagger: a
     delete goes to the key's file group whatever partition it names; a row naming another
     partition either updates the key where it is stored (update.partition.path=false, or a
     late event the stored record wins over), or moves it: a delete row for the old file
     group and an untagged insert of the merged record. The stored records such decisions
     need (base merged with log) are read there, on the executor, only for those rows;
3. the driver collects counts only (rows per file group or bucket, new rows per partition)
   and plans buckets with hudi_core (small files, new file groups sized by the record size
   estimate; under the bucket index, each bucket's file group, existing or new);
4. executors route every row to its bucket, a shuffle brings each bucket's rows into one
   Spark partition (small buckets share one, see _packed_buckets), and hudi_core's write
   task writes each bucket there;
5. the driver collects the write stats and completes the instant.

Only the input crosses from the JVM to Python row by row; after that rows travel as blobs,
so a shuffle moves a few large values (see spark_jobs.blobs for why). Nothing of the input is
cached: step 1 counts its prepared rows, and it is read and prepared again where the rows are
needed, routed straight to their buckets when no stored key is looked up. Re-reading costs
less than the JVM keeping an encoded copy of every row, which would not fit Spark's default
1 GB heap where Spark's own writers stream (a DataFrame costly to compute can be persisted by
its caller). Every Arrow batch Spark hands Python is bounded by bytes, so a task's share of
the heap is a blob or two whatever the input's size.

An input of at most hoodie.spark.local.threshold.bytes skips all of this: the JVM collects
it to the driver as Arrow and hudi_core's local engine writes it (see SparkWriter.write).

Bulk inserts skip the lookup: every Spark partition writes new file groups of its rows where
they are (hoodie.bulkinsert.sort.mode=NONE, the default) or after Spark's own range
partitioning and sort by partition path and key (GLOBAL_SORT); into a bucket-indexed table
they go by bucket as upserts do.
"""

from __future__ import annotations

import copy
import functools
import heapq
import json
import math
import re
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import Accumulator, StorageLevel, TaskContext
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from hudi_core import HudiTable, SchemaError, WriteOperation
from hudi_core.config import Options
from hudi_core.config import write_options as W
from hudi_core.distributed import (
    DELETE_COLUMN,
    NO_BUCKET,
    PARTITION_PATH_FIELD,
    RECORD_KEY_FIELD,
    BatchCount,
    BatchPreparer,
    BloomIndex,
    Bucket,
    BucketCount,
    BucketIndex,
    BucketPlan,
    CreateTask,
    FileSlice,
    FileSystemView,
    GlobalBloomIndex,
    GlobalIndex,
    GlobalTagger,
    IndexContext,
    Lookup,
    StoredRecordReader,
    WriteClient,
    WriteJob,
    WriteSettings,
    WriteStat,
    ensure_partition_metadata,
    match_keys_globally,
    new_file_id,
    running_attempt,
)
from hudi_core.engine import LocalEngine
from spark_jobs import blobs
from spark_jobs.blobs import FILE_ID
from spark_jobs.engine import SparkEngine, current_attempt
from spark_jobs.sources import ArrowFiles
from spark_jobs.task_errors import TaskErrors

STATS_SCHEMA = "stat string"
RANGES_SCHEMA = "file long, low string, high string"
FLUSH_BYTES = 64 << 20  # prepared rows a task packs into blobs at a time
MAX_FILE_TASKS = 64  # tasks that read base files for the index (one per file up to this)


@dataclass(frozen=True)
class IndexReads:
    """What a write's key lookup read: the base files whose keys it could have had to read
    (the lookup's candidates), and those whose stored keys it did read (counted where they
    are read, on the executors)."""

    candidates: int = 0
    stored_keys: int = 0


class SparkWriter:
    """Writes DataFrames into one table; `write` is HudiTable.write for Spark."""

    def __init__(self, spark: SparkSession, table: HudiTable) -> None:
        self.spark = spark
        self.table = table
        self.engine = SparkEngine(spark)
        self.index_reads = IndexReads()  # the last write's

    def write(
        self,
        df: DataFrame | ArrowFiles,
        operation: WriteOperation | str = WriteOperation.UPSERT,
        options: Mapping[str, Any] | None = None,
        extra_metadata: Mapping[str, str] | None = None,
        input_bytes: int | None = None,
    ) -> str | None:
        """Writes `df` (or files Python reads on the executors); returns the instant time,
        None when there was nothing to write. A HudiError raised on an executor is raised
        here as itself (spark_jobs.task_errors), before anything is committed.

        An input of at most hoodie.spark.local.threshold.bytes (`input_bytes` when the caller
        knows them, as from listed source files, else Spark's estimate of the DataFrame) is
        written on the driver by hudi_core's local engine: a small write then costs no Python
        worker, no shuffle and none of the Spark jobs of the steps below."""
        merged = {**self.table.options, **(options or {})}
        self.index_reads = IndexReads()
        if self._on_driver(df, merged, input_bytes):
            rows = df.read_all() if isinstance(df, ArrowFiles) else _driver_rows(self.spark, df)
            client = WriteClient(self.table.storage, self.table.config, LocalEngine())
            return client.write(rows, operation, merged, extra_metadata)
        client = WriteClient(self.table.storage, self.table.config, self.engine)
        self.errors = TaskErrors(self.spark)  # this write's: none outlives it
        self.keys_read = self.spark.sparkContext.accumulator(0)  # base files, see IndexReads
        write_conf = {**_WRITE_CONF, _SHUFFLE_PARTITIONS: str(self.engine.parallelism)}
        with _Cache(self.spark, self.errors) as cache, _session_conf(self.spark, write_conf):
            job = client.start(operation, merged)
            operation = job.operation
            # Into a bucket-indexed table a bulk insert goes by bucket too, as in hudi_core.
            sorts = operation is WriteOperation.BULK_INSERT and job.planner.bucket_index is None
            if (operation is WriteOperation.DELETE_PARTITION or sorts) and isinstance(
                df, ArrowFiles
            ):
                df = df.to_dataframe(self.spark)
            if operation is WriteOperation.DELETE_PARTITION:
                return self._delete_partitions(job, df, extra_metadata)
            if sorts:
                return self._bulk_insert(job, df, cache, extra_metadata)
            return self._routed_write(job, df, cache, extra_metadata)

    def _on_driver(
        self, df: DataFrame | ArrowFiles, options: Mapping[str, Any], input_bytes: int | None
    ) -> bool:
        """Whether the input is small enough to write on the driver (see `write`)."""
        key = W.SPARK_LOCAL_THRESHOLD_BYTES.key
        session = {key: self.spark.conf.get(key, None)}  # the write's options win
        threshold = Options(session, options).get_option(W.SPARK_LOCAL_THRESHOLD_BYTES)
        if threshold <= 0:
            return False
        if input_bytes is None:
            input_bytes = df.size if isinstance(df, ArrowFiles) else _estimated_bytes(df)
        return input_bytes is not None and input_bytes <= threshold

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
        shuffle = _shuffle_values(self._shuffle_partitions(job, df))
        planner = job.planner
        by_bucket = planner.bucket_index is not None
        preparer = _PrepareBlobs(job.preparer, rows_schema, shuffle, files, planner.bucket_index)
        split = df.mapInArrow(self.errors.guard(preparer), blobs.SPARK_SCHEMA)
        # Counting prepares every row before an instant exists, as hudi_core does, so a bad
        # batch (null keys, say) fails with nothing to roll back. Only counts are kept: the
        # input is read and prepared again where its rows are needed (see the module's doc).
        counts: list[BatchCount] = []
        bucket_counts: list[BucketCount] = []
        if by_bucket:
            found, row_bytes = self._counted_only(df, preparer, "bucket")
            bucket_counts = [BucketCount(p, int(b), d, n) for p, b, d, n in found]
        else:
            found, row_bytes = self._counted_only(df, preparer)
            counts = [BatchCount(*count) for count in found]
        reprepared = _Reprepared(df, preparer)
        if not (counts or bucket_counts) and planner.skips_empty_batch:
            return None
        data_schema = _required(data_schema)
        with job.transaction() as transaction:
            view = transaction.view
            touched = {c.partition_path for c in counts} | {c.partition_path for c in bucket_counts}
            replaced = planner.replaced(view.latest_slices(), touched)
            every_partition = isinstance(job.index, GlobalIndex)
            lookup = planner.lookup(view.latest_slices(), touched, every_partition)
            routed = _Routed(
                job, split, counts, bucket_counts, lookup, rows_schema, shuffle, reprepared
            )
            if by_bucket:
                tagged, plan, combine = self._by_bucket(routed, view, cache)
            else:
                tagged, plan, combine = self._by_key(routed, view, cache)
            settings = job.settings(transaction.instant_time, data_schema)
            for partition in sorted({b.partition_path for b in plan.buckets}):
                ensure_partition_metadata(job.storage, partition, transaction.instant_time)
            transaction.start_execution(b.planned_work() for b in plan.buckets)
            stats = []
            if plan.buckets:
                match = planner.matches_keys
                rows = sum(c.rows for c in counts) + sum(c.rows for c in bucket_counts)
                per_row = row_bytes / max(1, rows)
                stats = self._write_buckets(
                    tagged, plan, settings, match, rows_schema, per_row, combine
                )
            transaction.complete(stats, data_schema, replaced, extra_metadata)
        return transaction.instant_time

    def _counted_only(
        self, df: DataFrame, preparer: _PrepareBlobs, by: str = "file_id"
    ) -> tuple[list[tuple[Any, ...]], int]:
        """The prepared rows' counts (see blobs.summed_counts) and Arrow size, nothing of the
        rows kept."""
        counted = df.mapInArrow(self.errors.guard(preparer.counting()), blobs.SPARK_SCHEMA)
        counts, row_bytes = blobs.summed_counts(counted, by)
        self.errors.check()
        return counts, row_bytes

    def _by_key(
        self, routed: _Routed, view: FileSystemView, cache: _Cache
    ) -> tuple[DataFrame | _Reprepared, BucketPlan, BatchPreparer | None]:
        """SIMPLE, BLOOM and the global indexes: rows tagged by their keys' stored copies
        (under a global index, with the moves of keys between partitions spelled out), then
        bucketed (small files, new file groups) from the counts of the tagged rows."""
        job, counts = routed.job, routed.counts
        tagged: DataFrame | _Reprepared = routed.reprepared or routed.split
        combine = None
        if routed.lookup.slices or (job.planner.combine and isinstance(job.index, GlobalIndex)):
            tagged, counts, _ = cache.counted(self._combined_and_tagged(routed))
            cache.release(routed.split)  # read again only through the shuffle's files
            self.index_reads = IndexReads(len(routed.lookup.slices), self.keys_read.value)
        elif job.planner.combine:
            # No stored key to meet (a new table, new partitions): each key's rows all go to
            # its insert bucket, whose write task pre-combines them, a shuffle saved.
            combine = job.preparer
        return tagged, job.planner.buckets_for_counts(counts, view, job.sizing), combine

    def _by_bucket(
        self, routed: _Routed, view: FileSystemView, cache: _Cache
    ) -> tuple[DataFrame | _Reprepared, BucketPlan, BatchPreparer | None]:
        """BUCKET: no stored key read; each (partition, bucket) the rows reach is a bucket of
        the plan, and its write task pre-combines its rows (a key's rows share its bucket).
        An insert that drops stored keys joins them first, as hudi_core's does."""
        job, counts = routed.job, routed.bucket_counts
        tagged: DataFrame | _Reprepared = routed.reprepared or routed.split
        combine = job.preparer if job.planner.combine else None
        if routed.lookup.drops_stored and routed.lookup.slices:
            tagged, counts, _ = cache.bucket_counted(self._combined_and_tagged(routed))
            cache.release(routed.split)  # read again only through the shuffle's files
            self.index_reads = IndexReads(len(routed.lookup.slices), self.keys_read.value)
            combine = None
        return tagged, job.planner.buckets_for_bucket_counts(counts, view), combine

    def _combined_and_tagged(self, routed: _Routed) -> DataFrame:
        """Blobs of the rows pre-combined (when the operation does) and looked up as the
        planner says: each key slot's rows meet the keys stored for that slot in one task."""
        job, split, lookup, shuffle = routed.job, routed.split, routed.lookup, routed.shuffle
        keyed = split
        if lookup.slices:
            keyed = split.unionByName(self._stored_keys(routed))
        index = job.index
        tagging = _Tagging(
            isinstance(index, GlobalIndex),
            isinstance(index, GlobalIndex) and index.update_partition_path,
            job.stored_record_reader() if lookup.slices else None,
            job.under_compaction,
        )
        reducer = _CombineAndTag(
            job.preparer, job.planner.combine, lookup, routed.rows_schema, tagging
        )
        guarded = self.errors.guard(reducer)
        return keyed.repartition(len(shuffle), "slot").mapInArrow(guarded, blobs.SPARK_SCHEMA)

    def _shuffle_partitions(self, job: WriteJob, df: DataFrame) -> int:
        """The operation's hoodie.*.shuffle.parallelism, else the input's partitions (at
        least the engine's parallelism), as Apache Hudi infers it."""
        configured = job.planner.shuffle_parallelism
        if configured > 0:
            return configured
        return max(df.rdd.getNumPartitions(), self.engine.parallelism)

    def _stored_keys(self, routed: _Routed) -> DataFrame:
        """Blobs of the stored keys the rows must meet, by key slot (part: the slice's index
        among the lookup's): of every candidate, or of those the bloom index keeps (under a
        global index, the candidates are those of every partition)."""
        job, candidates = routed.job, routed.lookup.slices
        context = IndexContext(
            job.storage, None, candidates, job.key_generator, job.config.populate_meta_fields
        )
        if isinstance(job.index, BloomIndex):
            return self._probed_keys(routed, context, job.index)
        if isinstance(job.index, GlobalBloomIndex):
            bloom = BloomIndex(prune_by_ranges=job.index.prune_by_ranges)
            return self._probed_keys(routed, context, bloom, every_partition=True)
        ids = self.spark.range(len(candidates), numPartitions=_file_tasks(len(candidates)))
        stored_keys = self.errors.guard(_StoredKeyBlobs(context, routed.shuffle, self.keys_read))
        return ids.mapInArrow(stored_keys, blobs.SPARK_SCHEMA)

    def _probed_keys(
        self,
        routed: _Routed,
        context: IndexContext,
        bloom: BloomIndex,
        every_partition: bool = False,
    ) -> DataFrame:
        """BLOOM: the stored keys of the candidates whose footer may hold an incoming key
        (and that match one); the keys of the other candidates are never read. GLOBAL_BLOOM
        (`every_partition`): a key may be in a candidate of any partition."""
        ranges = self._key_ranges(context, bloom) if bloom.prune_by_ranges else None
        tasks = _file_tasks(len(context.slices))
        by_file = _shuffle_values(tasks)
        partitions = [s.partition_path for s in context.slices]
        probes = _KeyProbes(partitions, ranges, by_file, every_partition)
        sent = routed.split.mapInArrow(self.errors.guard(probes), blobs.SPARK_SCHEMA)
        checker = _ProbedKeyBlobs(context, bloom, routed.shuffle, self.keys_read)
        return sent.repartition(tasks, "slot").mapInArrow(
            self.errors.guard(checker), blobs.SPARK_SCHEMA
        )

    def _key_ranges(
        self, context: IndexContext, bloom: BloomIndex
    ) -> list[tuple[str | None, str | None]]:
        """The min and max record key in each candidate's footer (None: not recorded), read
        on executors, one file per task."""
        count = len(context.slices)
        ids = self.spark.range(count, numPartitions=_file_tasks(count))
        found = self.errors.collect(
            ids.mapInArrow(self.errors.guard(_KeyRanges(context, bloom)), RANGES_SCHEMA)
        )
        ranges: list[tuple[str | None, str | None]] = [(None, None)] * count
        for row in found:
            ranges[row.file] = (row.low, row.high)
        return ranges

    def _write_buckets(
        self,
        tagged: DataFrame | _Reprepared,
        plan: BucketPlan,
        settings: WriteSettings,
        match_keys: bool,
        rows_schema: pa.Schema,
        row_bytes: float,
        combine: BatchPreparer | None = None,
    ) -> list[WriteStat]:
        """Every bucket's rows routed to its write task (a few small buckets share one, see
        _packed_buckets; `row_bytes`: a prepared row's Arrow size), written there."""
        task_of_bucket = _packed_buckets(plan, row_bytes, self.engine.parallelism)
        tasks = int(task_of_bucket.max()) + 1
        shuffle = _shuffle_values(tasks)[task_of_bucket]
        router = _RouteBlobs(plan, shuffle, deletes_follow_keys=combine is not None)
        if isinstance(tagged, _Reprepared):  # prepared again and routed in one step
            source, routing = tagged.df, tagged.preparer.routing(router)
        else:
            source, routing = tagged, router
        routed = source.mapInArrow(self.errors.guard(routing), blobs.SPARK_SCHEMA)
        runner = self.errors.guard(_RunBuckets(plan, settings, match_keys, rows_schema, combine))
        stats = routed.repartition(tasks, "slot").mapInArrow(runner, STATS_SCHEMA)
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
        bucket_index: BucketIndex | None = None,
    ) -> None:
        self.preparer = preparer
        self.schema = schema  # of the prepared rows
        self.shuffle = shuffle  # the shuffle value of each key slot
        self.files = files
        self.bucket_index = bucket_index  # if any, rows are counted by bucket
        self.counts_only = False  # blobs of counts alone
        self.router: _RouteBlobs | None = None  # blobs by bucket instead of by key slot

    def counting(self) -> _PrepareBlobs:
        """The same preparation, handing back the rows' counts only."""
        counting = copy.copy(self)
        counting.counts_only = True
        return counting

    def routing(self, router: _RouteBlobs) -> _PrepareBlobs:
        """The same preparation, the rows routed to their buckets (by `router`)."""
        routing = copy.copy(self)
        routing.router = router
        return routing

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        tables = self.files.tables(batches) if self.files else _coalesced(batches, FLUSH_BYTES)
        pending, size = [], 0
        for table in tables:
            rows, _ = self.preparer.prepare(table, combine=False)
            rows = rows.cast(self.schema)
            if self.bucket_index is not None:
                buckets = self.bucket_index.bucket_ids(rows.column(RECORD_KEY_FIELD))
                rows = rows.append_column(blobs.BUCKET, pa.array(buckets, pa.int32()))
            pending.append(rows)
            size += rows.nbytes
            if size >= FLUSH_BYTES:
                yield from self._packed(pending)
                pending, size = [], 0
        yield from self._packed(pending)

    def _packed(self, pending: list[pa.Table]) -> Iterator[pa.RecordBatch]:
        if not pending:
            return
        rows = pa.concat_tables(pending)
        if self.counts_only:
            yield blobs.counts_only(rows)
        elif self.router is not None:
            yield from self.router.routed(rows)
        else:
            for slot, part in blobs.by_key_slot(rows, len(self.shuffle)):
                yield from blobs.batches_of(part, int(self.shuffle[slot]), counted=True)


class _StoredKeyBlobs:
    """The keys stored in some slices' base files, packed by key slot (part: the slice)."""

    def __init__(self, context: IndexContext, shuffle: np.ndarray, reads: Accumulator[int]) -> None:
        self.context = context
        self.shuffle = shuffle
        self.reads = reads  # base files whose keys were read

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                keys = self.context.stored_keys(self.context.slices[index])
                self.reads.add(1)
                yield from _keys_by_slot(keys, index, self.shuffle)


class _KeyRanges:
    """BLOOM: the min and max record key recorded in some slices' base file footers."""

    def __init__(self, context: IndexContext, bloom: BloomIndex) -> None:
        self.context = context
        self.bloom = bloom

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            indices = batch.column(0).to_pylist()
            ranges = [self.bloom.key_range(self.context, self.context.slices[i]) for i in indices]
            yield pa.RecordBatch.from_pydict(
                {
                    "file": pa.array(indices, pa.int64()),
                    "low": pa.array([low for low, _ in ranges], pa.string()),
                    "high": pa.array([high for _, high in ranges], pa.string()),
                }
            )


class _KeyProbes:
    """BLOOM: the distinct incoming keys of this task's rows, sent to each candidate file of
    their partition (of any partition, `every_partition`: GLOBAL_BLOOM) whose key range holds
    them (every candidate, for files without a range, or when ranges are not pruned by):
    KEYS blobs shuffled by file (part: the file)."""

    def __init__(
        self,
        partitions: list[str],
        ranges: list[tuple[str | None, str | None]] | None,
        by_file: np.ndarray,
        every_partition: bool = False,
    ) -> None:
        self.files_of: dict[str, list[int]] = {}
        for index, partition in enumerate(partitions):
            self.files_of.setdefault(partition, []).append(index)
        self.ranges = ranges
        self.by_file = by_file  # the shuffle value of the task checking each file
        self.every_partition = every_partition
        self.files = len(partitions)

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        columns = [RECORD_KEY_FIELD]
        if not self.every_partition:
            columns.insert(0, PARTITION_PATH_FIELD)
        keys: list[pa.Table] = []
        for batch in batches:
            for _, rows in blobs.decode(pa.table(batch)):
                keys.append(rows.select(columns).group_by(columns, use_threads=False).aggregate([]))
        if not keys:
            return
        pairs = pa.concat_tables(keys)
        pairs = pairs.group_by(columns, use_threads=False).aggregate([])
        for distinct, files in self._groups(pairs):
            ordered = pc.take(distinct, pc.sort_indices(distinct))
            searchable = ordered.to_numpy() if self.ranges is not None else None
            for index in files:
                probe = self._in_range(ordered, searchable, index)
                if len(probe):
                    slot = int(self.by_file[index % len(self.by_file)])
                    part = pa.table({RECORD_KEY_FIELD: probe})
                    yield from blobs.batches_of(part, slot, blobs.KEYS, index)

    def _groups(self, pairs: pa.Table) -> Iterator[tuple[pa.ChunkedArray, list[int]]]:
        """Distinct incoming keys, and the candidate files that may hold them."""
        keys = pairs.column(RECORD_KEY_FIELD)
        if self.every_partition:
            yield keys, list(range(self.files))
            return
        paths = pairs.column(PARTITION_PATH_FIELD)
        for partition in pc.unique(paths).to_pylist():
            files = self.files_of.get(partition)
            if files:
                yield keys.filter(pc.equal(paths, partition)), files

    def _in_range(
        self, ordered: pa.ChunkedArray, searchable: np.ndarray | None, index: int
    ) -> pa.ChunkedArray:
        """The sorted keys `ordered` within the file's key range, by binary search in
        `searchable` (the same keys as Python strings: they compare by code point, as Arrow's
        and the footer's do by UTF-8 bytes)."""
        low, high = self.ranges[index] if self.ranges is not None else (None, None)
        if low is None or high is None or searchable is None:
            return ordered
        start = int(np.searchsorted(searchable, low, side="left"))
        stop = int(np.searchsorted(searchable, high, side="right"))
        return ordered.slice(start, max(0, stop - start))


class _ProbedKeyBlobs:
    """BLOOM: per candidate file, the incoming keys its range may hold checked against its
    footer (hudi_core's BloomIndex); only when one may be there are its keys read, and those
    matching an incoming key packed by key slot (part: the file)."""

    def __init__(
        self, context: IndexContext, bloom: BloomIndex, shuffle: np.ndarray, reads: Accumulator[int]
    ) -> None:
        self.context = context
        self.bloom = bloom
        self.shuffle = shuffle  # the shuffle value of each key slot
        self.reads = reads  # base files whose keys were read

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        received = _all_rows(batches)
        if received is None:
            return
        probes: dict[int, list[pa.Array]] = {}
        for index, keys in blobs.decode(received, blobs.KEYS):
            probes.setdefault(index, []).extend(keys.column(0).chunks)
        for index, chunks in sorted(probes.items()):
            file_slice = self.context.slices[index]
            keys = pc.unique(pa.chunked_array(chunks, pa.string()).combine_chunks())
            if not self.bloom.may_hold_any(self.context, file_slice, keys):
                continue
            stored = self.context.stored_keys(file_slice).cast(pa.string())
            self.reads.add(1)
            matched = stored.filter(pc.is_in(stored, value_set=keys))
            yield from _keys_by_slot(matched, index, self.shuffle)


def _keys_by_slot(
    keys: pa.ChunkedArray, index: int, shuffle: np.ndarray
) -> Iterator[pa.RecordBatch]:
    """Stored keys of the lookup's slice `index`, as KEYS blobs by key slot."""
    stored = pa.table({RECORD_KEY_FIELD: keys.cast(pa.string())})
    for slot, part in blobs.by_key_slot(stored, len(shuffle)):
        yield from blobs.batches_of(part, int(shuffle[slot]), blobs.KEYS, index)


@dataclass(frozen=True)
class _Tagging:
    """How hudi_core's local write tags rows (its GlobalTagger, for every index): whether a
    key is one record in the table (`globally`: a global index) and may move to the partition
    a row names, what reads stored records (base merged with log) where the tagging needs them
    (None: no key is looked up), and the file groups under a pending compaction, where a key
    found once is read too (WriteJob.under_compaction, computed once on the driver)."""

    globally: bool
    update_partition_path: bool
    reader: StoredRecordReader | None
    under_compaction: frozenset[tuple[str, str]]


class _CombineAndTag:
    """All rows of some keys, with the stored copies of those keys: pre-combines them and
    looks them up as the planner's `lookup` says, as hudi_core's local write does
    (WriteJob._looked_up): the file groups whose base files hold each key are located among
    the stored keys this task received, and hudi_core's GlobalTagger tags each row with the
    file group holding its key live (adding deletes of other live copies), or drops the rows
    whose key is live somewhere (`without_stored`). The stored records that needs (base merged
    with log) are read here, on the executor, only for the keys that need them. Under a
    global index the rows are pre-combined by key alone, their keys looked up in the stored
    keys of every partition and the moves of keys between partitions spelled out."""

    def __init__(
        self,
        preparer: BatchPreparer,
        combine: bool,
        lookup: Lookup,
        schema: pa.Schema,
        tagging: _Tagging,
    ) -> None:
        self.preparer = preparer
        self.combine = combine
        self.lookup = lookup
        self.schema = schema
        self.tagging = tagging

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        received = _all_rows(batches)
        if received is None:
            return
        rows = blobs.decode_rows(received, self.schema)
        if rows.num_rows == 0:
            return
        if self.combine:
            rows = self.preparer.precombine(rows)
            if self.tagging.globally and rows.num_rows > 1:
                rows = self.preparer.precombine(rows, globally=True)
        rows, file_ids = self._looked_up(rows, received)
        yield from blobs.batches_of(rows.append_column(FILE_ID, file_ids), -1, counted=True)

    def _looked_up(self, rows: pa.Table, received: pa.Table) -> tuple[pa.Table, pa.Array]:
        """As hudi_core's WriteJob._looked_up (and _globally_looked_up), over the stored keys
        of the slices this task's keys may be in: the rows kept (with deletes of their keys'
        other live copies) and the file group each writes to (null: a new row)."""
        tagging = self.tagging
        if not self.lookup.slices or tagging.reader is None:
            return rows, pa.nulls(rows.num_rows, pa.string())
        stored = self._stored_by_slice(received)
        indices = sorted(stored)  # in the lookup's order, as hudi_core's
        slices = [self.lookup.slices[i] for i in indices]
        keys = [stored[i] for i in indices]
        if tagging.globally:
            record_keys = rows.column(RECORD_KEY_FIELD).combine_chunks()
            located = match_keys_globally(record_keys, pc.unique(record_keys), slices, keys)
        else:  # SIMPLE's and BLOOM's locate, over the keys read for them on the executors
            context = _ReceivedKeys(slices, keys)
            located = context.locate(rows.select([RECORD_KEY_FIELD, PARTITION_PATH_FIELD]), slices)
        tagger = GlobalTagger(
            tagging.update_partition_path,
            self.preparer.merger,
            slices,
            functools.partial(_read_each, tagging.reader),
            globally=tagging.globally,
            under_compaction=tagging.under_compaction,
        )
        if self.lookup.drops_stored:
            kept = tagger.without_stored(rows, located)
            return kept, pa.nulls(kept.num_rows, pa.string())
        if not self.lookup.tags:
            return rows, pa.nulls(rows.num_rows, pa.string())
        return tagger.tag(rows, located)

    def _stored_by_slice(self, received: pa.Table) -> dict[int, pa.ChunkedArray]:
        """The stored keys this task received, by the slice (its index in the lookup)."""
        parts: dict[int, list[pa.Array]] = {}
        for index, keys in blobs.decode(received, blobs.KEYS):
            parts.setdefault(index, []).extend(keys.column(0).chunks)
        return {i: pa.chunked_array(chunks, pa.string()) for i, chunks in parts.items()}


class _ReceivedKeys(IndexContext):
    """An index context whose slices' stored keys are those a task received (read on the
    executors that read each base file, see _StoredKeyBlobs and _ProbedKeyBlobs): its
    `locate` is the one SIMPLE and BLOOM run in hudi_core's local write, without reading
    a base file again."""

    def __init__(self, slices: list[FileSlice], keys: list[pa.ChunkedArray]) -> None:
        super().__init__(None, LocalEngine(), slices, None, True)  # reads nothing itself
        self.received = {
            (s.partition_path, s.file_id): k for s, k in zip(slices, keys, strict=True)
        }

    def stored_keys(self, file_slice: FileSlice) -> pa.ChunkedArray:
        return self.received[(file_slice.partition_path, file_slice.file_id)]


def _read_each(reader: StoredRecordReader, lookups: list[Any]) -> list[pa.Table]:
    """The stored records of some slices, read in this task (an executor's)."""
    return [reader(lookup) for lookup in lookups]


class _RouteBlobs:
    """Splits tagged rows by bucket (the blob's part), shuffled to the bucket's partition."""

    def __init__(
        self, plan: BucketPlan, shuffle: np.ndarray, deletes_follow_keys: bool = False
    ) -> None:
        self.plan = plan
        self.shuffle = shuffle  # the shuffle value of each bucket
        self.deletes_follow_keys = deletes_follow_keys  # the write tasks pre-combine

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for _, rows in blobs.decode(pa.table(batch)):
                yield from self.routed(rows)

    def routed(self, rows: pa.Table) -> Iterator[pa.RecordBatch]:
        """Blobs of `rows` (tagged, or not yet) by bucket."""
        if FILE_ID in rows.column_names:
            file_ids = rows.column(FILE_ID)
        else:
            file_ids = pa.nulls(rows.num_rows, pa.string())
        buckets = self.plan.route(rows, file_ids, self.deletes_follow_keys)
        for bucket, part in blobs.split_by(rows, buckets):
            if bucket != NO_BUCKET:
                yield from blobs.batches_of(part, int(self.shuffle[bucket]), part=bucket)


class _RunBuckets:
    """Writes the buckets whose rows this Spark partition holds; yields their write stats."""

    def __init__(
        self,
        plan: BucketPlan,
        settings: WriteSettings,
        match_keys: bool,
        schema: pa.Schema,
        combine: BatchPreparer | None = None,
    ) -> None:
        self.plan = plan
        self.settings = settings
        self.match_keys = match_keys
        self.schema = schema  # of the prepared rows
        self.combine = combine  # pre-combines a bucket's rows (all rows of its keys)

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        received = _all_rows(batches)
        if received is None:
            return
        by_bucket: dict[int, list[pa.Table]] = {}
        for bucket, rows in blobs.decode(received):
            by_bucket.setdefault(bucket, []).append(rows)
        stats = []
        with running_attempt(current_attempt()):
            for bucket_id in sorted(by_bucket):
                rows = _as_prepared(pa.concat_tables(by_bucket.pop(bucket_id)), self.schema)
                if self.combine is not None:
                    rows = self.combine.precombine(rows)
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
    """The DataFrames a write caches (each read by a count, then by the next step; blobs on
    disk only), built uncompressed (they live for one write, and compressing them would cost
    as much as preparing the rows), and unpersisted when the write ends. The action filling a cache
    checks the write's task errors: a cache may hold the partial output of a task that handed
    back a HudiError, and nothing may read it after that."""

    _COMPRESSED = "spark.sql.inMemoryColumnarStorage.compressed"
    _BATCH_ROWS = "spark.sql.inMemoryColumnarStorage.batchSize"

    def __init__(self, spark: SparkSession, errors: TaskErrors) -> None:
        self.spark = spark
        self.errors = errors
        self.cached: list[DataFrame] = []

    def __enter__(self) -> _Cache:
        return self

    def __exit__(self, *exc_info) -> None:
        for df in self.cached:
            df.unpersist()

    def counted(self, blob_rows: DataFrame) -> tuple[DataFrame, list[BatchCount], int]:
        """`blob_rows` cached, their counts and their rows' Arrow size (computing them
        fills the cache)."""
        cached, counts, row_bytes = self._counted(blob_rows, "file_id")
        return cached, [BatchCount(*count) for count in counts], row_bytes

    def bucket_counted(self, blob_rows: DataFrame) -> tuple[DataFrame, list[BucketCount], int]:
        """`blob_rows` cached, their counts by bucket (bucket index) and Arrow size."""
        cached, counts, row_bytes = self._counted(blob_rows, "bucket")
        return cached, [BucketCount(p, int(b), d, n) for p, b, d, n in counts], row_bytes

    def _counted(
        self, blob_rows: DataFrame, by: str
    ) -> tuple[DataFrame, list[tuple[Any, ...]], int]:
        # Blobs are cached on disk, a blob a batch: Spark builds a cached batch whole in the
        # heap (10,000 rows by default: every blob of a Spark partition), and one kept in
        # memory would count against a heap Spark's own writers never fill.
        with self._uncompressed(), _session_conf(self.spark, {self._BATCH_ROWS: "1"}):
            cached = self._persist(blob_rows, StorageLevel.DISK_ONLY)
            counts, row_bytes = blobs.summed_counts(cached, by)
            self.errors.check()
            return cached, counts, row_bytes

    def release(self, cached: DataFrame) -> None:
        """Frees a cache the write no longer reads, so it never holds two copies of the
        rows at once."""
        cached.unpersist()
        self.cached = [df for df in self.cached if df is not cached]

    def partitions_of(self, rows: DataFrame) -> tuple[DataFrame, set[str]]:
        """`rows` cached, and the partition paths they hold."""
        with self._uncompressed():
            cached = self._persist(rows)
            found = self.errors.collect(cached.select(PARTITION_PATH_FIELD).distinct())
            return cached, {row[0] for row in found}

    def _persist(
        self, df: DataFrame, level: StorageLevel = StorageLevel.MEMORY_AND_DISK
    ) -> DataFrame:
        cached = df.persist(level)
        self.cached.append(cached)
        return cached

    def _uncompressed(self) -> AbstractContextManager[None]:
        return _session_conf(self.spark, {self._COMPRESSED: "false"})


# Each of a write's steps sizes its shuffle itself (a Spark partition per key slot, buckets
# packed into write tasks), so adaptive execution has nothing to coalesce; it would only
# split every action into a job per shuffle stage, each a scheduling round. What is left to
# the default shuffle partitions (summing counts, distinct partition paths) is small: as
# many as cores.
#
# Spark hands a Python task its rows in Arrow batches of up to 10,000 rows, built in the JVM:
# of blobs, that would be a task's every row at once. Bounded by bytes, a batch holds a blob
# or two, and the JVM's share of a task stays within a small heap, whatever the input's size.
_WRITE_CONF = {
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.execution.arrow.maxBytesPerBatch": str(blobs.MAX_BLOB_BYTES),
}
_SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"


@contextmanager
def _session_conf(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """The session's SQL conf with `settings` while the block runs, then as it was."""
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


@dataclass(frozen=True)
class _Routed:
    """What the steps of a routed write share: the prepared rows' blobs (by key slot) and
    their counts (by file group, or by bucket under the bucket index), the key lookup the
    planner asks for, the prepared rows' schema and the shuffle value of each key slot."""

    job: WriteJob
    split: DataFrame
    counts: list[BatchCount]
    bucket_counts: list[BucketCount]
    lookup: Lookup
    rows_schema: pa.Schema
    shuffle: np.ndarray
    reprepared: _Reprepared | None = None  # the input, prepared again where it is routed


@dataclass(frozen=True)
class _Reprepared:
    """The input, whose rows are read and prepared again where they are needed rather than
    cached once prepared."""

    df: DataFrame
    preparer: _PrepareBlobs


def _file_tasks(files: int) -> int:
    """Tasks reading `files` base files for the index: one per file, up to MAX_FILE_TASKS."""
    return max(1, min(files, MAX_FILE_TASKS))


# Logical plan nodes whose rows Python functions make: Spark cannot size their output.
_PYTHON_ROWS = re.compile(r"\b(\w*MapIn(Arrow|Pandas)|FlatMap\w*In(Arrow|Pandas)|Python\w*)\b")


def _estimated_bytes(df: DataFrame) -> int | None:
    """Spark's estimate of the DataFrame's size (file sizes for a file source, the rows of a
    local relation); None when Python functions make its rows, whose size Spark cannot know."""
    plan = df._jdf.queryExecution().optimizedPlan()
    if _PYTHON_ROWS.search(plan.treeString()):
        return None
    return int(str(plan.stats().sizeInBytes()))  # a Scala BigInt, or an int py4j converted


def _driver_rows(spark: SparkSession, df: DataFrame) -> pa.Table:
    """The DataFrame's rows collected to the driver as Arrow (by the JVM: no Python worker),
    in the schema executors would have seen them in."""
    return df.toArrow().cast(_arrow_schema(spark, df))


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


def _coalesced(batches: Iterator[pa.RecordBatch], size: int) -> Iterator[pa.Table]:
    """Consecutive batches as tables of about `size` bytes: Spark hands Python small batches
    (10,000 rows), and preparing each alone would repeat the fixed costs a thousand times."""
    pending: list[pa.RecordBatch] = []
    total = 0
    for batch in batches:
        pending.append(batch)
        total += batch.nbytes
        if total >= size:
            yield pa.Table.from_batches(pending)
            pending, total = [], 0
    if pending:
        yield pa.Table.from_batches(pending)


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


# Spark spends tens of milliseconds setting up each Python task, more than a small bucket's
# write takes: small buckets share a task, a few tasks per core, each holding about this many
# bytes of rows at once (a bucket of more has a task of its own, as every bucket used to).
_BUCKET_TASKS_PER_CORE = 2
_BUCKET_TASK_BYTES = 256 << 20


def _packed_buckets(plan: BucketPlan, row_bytes: float, parallelism: int) -> np.ndarray:
    """The write task of each bucket, given the Arrow size of a row. A bucket's work is the
    size of its rows, plus its base file's when it merges one. Buckets of at least
    _BUCKET_TASK_BYTES get a task each; the others are spread over as many more tasks as
    their work fills (at least _BUCKET_TASKS_PER_CORE per core), each, the largest first,
    to the task with the least work so far."""
    work = [_bucket_work(bucket, row_bytes) for bucket in plan.buckets]
    big = [b for b, size in enumerate(work) if size >= _BUCKET_TASK_BYTES]
    small = sorted(set(range(len(work))) - set(big), key=lambda b: (-work[b], b))
    task_of = np.zeros(len(work), dtype=np.int64)
    task_of[big] = np.arange(len(big))
    filled = math.ceil(sum(work[b] for b in small) / _BUCKET_TASK_BYTES)
    shared = min(len(small), max(filled, _BUCKET_TASKS_PER_CORE * parallelism))
    loads = [(0.0, len(big) + task) for task in range(shared)]  # a heap: (work so far, task)
    for bucket in small:
        load, task = heapq.heappop(loads)
        task_of[bucket] = task
        heapq.heappush(loads, (load + work[bucket], task))
    return task_of


def _bucket_work(bucket: Bucket, row_bytes: float) -> float:
    rows = (bucket.inserts + bucket.updates) * row_bytes
    base = bucket.file_slice.base_file if bucket.file_slice is not None else None
    return rows + (base.size if base is not None and not bucket.append else 0)


def _shuffle_values(count: int) -> np.ndarray:
    """For each target t < count, a value whose hash partitioning (Spark's Murmur3 over a
    long, modulo `count`) is t: so the shuffle puts every target (a key slot, a bucket) in a
    Spark partition of its own, and no task does two while another idles. Found here, by
    Spark's own hash function in numpy, rather than by a Spark job."""
    found = np.full(count, -1, dtype=np.int64)
    start = 0
    while (found < 0).any():
        values = np.arange(start, start + 32 * count, dtype=np.int64)
        partitions = spark_partition_of(values, count)
        missing = found[partitions] < 0
        # The first value for each partition, as the values come.
        firsts = np.unique(partitions[missing], return_index=True)
        found[firsts[0]] = values[missing][firsts[1]]
        start += 32 * count
    return found


def spark_partition_of(values: np.ndarray, count: int) -> np.ndarray:
    """pmod(hash(value), count) for longs: Spark's HashPartitioning of a long column
    (Murmur3_x86_32.hashLong with seed 42)."""
    words = values.astype(np.int64).view(np.uint64)
    h = np.full(len(values), 42, dtype=np.uint32)
    for word in ((words & 0xFFFFFFFF).astype(np.uint32), (words >> 32).astype(np.uint32)):
        k = word * np.uint32(0xCC9E2D51)
        k = (k << np.uint32(15)) | (k >> np.uint32(17))
        k *= np.uint32(0x1B873593)
        h ^= k
        h = (h << np.uint32(13)) | (h >> np.uint32(19))
        h = h * np.uint32(5) + np.uint32(0xE6546B64)
    h ^= np.uint32(8)
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    return np.mod(h.view(np.int32).astype(np.int64), count)
