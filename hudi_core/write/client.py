"""The write client: one write operation from batch to completed instant.

requested -> (tag, assign buckets) -> inflight -> tasks write files after their markers ->
completed. Only the last step makes the write visible. A failure on the way rolls the instant
back at once; a crash leaves it for the next write, which rolls it back before starting.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any

import pyarrow as pa

from hudi_core.choices import TableType, WriteOperation
from hudi_core.config import clustering_options as K
from hudi_core.config import index_options as I
from hudi_core.config import read_options as R
from hudi_core.config import storage_options as S
from hudi_core.config import table_options as T
from hudi_core.config import write_options as W
from hudi_core.config.lock_options import CONCURRENCY_MODE, PROVIDER
from hudi_core.config.option import Options
from hudi_core.config.table_config import TableConfig
from hudi_core.config.unknown_options import check_options
from hudi_core.engine import EngineContext
from hudi_core.errors import ConcurrentWriterError, InvalidOptionError
from hudi_core.index import GlobalIndex, IndexContext, index_for
from hudi_core.io.bootstrap_index import hadoop_path
from hudi_core.keygen import KeyGenerator, key_generator_for
from hudi_core.lock import failed_writes_policy, non_blocking_concurrency, table_lock
from hudi_core.lock.early_conflicts import EarlyConflictDetection
from hudi_core.merge.record_merger import is_deleting_payload, merger_for
from hudi_core.model.commit_metadata import CommitMetadata, WriteStat
from hudi_core.model.file_group import FileSlice
from hudi_core.model.partition_metadata import ensure_partition_metadata
from hudi_core.read.file_system_view import FileSystemView, pending_compaction_file_groups
from hudi_core.read.log_scanner import InstantFilter
from hudi_core.schema.meta_fields import (
    PARTITION_PATH_FIELD,
    RECORD_KEY_FIELD,
    add_meta_fields,
)
from hudi_core.schema.to_avro import arrow_to_avro_json
from hudi_core.services.heartbeat import Liveness, write_is_alive
from hudi_core.services.metadata_table import prepare_for_change
from hudi_core.services.rollback import rollback_failed_writes
from hudi_core.services.savepoint import require_no_restore_in_progress
from hudi_core.storage import Storage
from hudi_core.table_schema import latest_table_schema
from hudi_core.timeline import ActiveTimeline
from hudi_core.timeline.instant import WRITE_ACTIONS
from hudi_core.write.append_task import AppendTask
from hudi_core.write.bucket_assigner import Sizing
from hudi_core.write.commit_extra import (
    commit_extra_metadata,
    latest_schema_is_placeholder,
    placeholder_schema,
)
from hudi_core.write.global_tagging import GlobalTagger, StoredLookup, StoredRecordReader
from hudi_core.write.handles import MergeTask, WriteSettings
from hudi_core.write.operation import KeyLookup
from hudi_core.write.planner import WritePlanner, WriteTask, touched_partitions, untagged
from hudi_core.write.prepare import BatchPreparer, as_arrow_table
from hudi_core.write.record_size import average_record_size
from hudi_core.write.settings import log_suffix, write_settings
from hudi_core.write.transaction import PlannedWork, WriteTransaction, write_transaction

# Write options naming what a table property defines; like options named as table properties,
# they must agree with the table.
TABLE_DEFINING_OPTIONS = {
    W.RECORD_KEY_FIELD.key: T.RECORD_KEY_FIELDS.key,
    W.PARTITION_PATH_FIELD.key: T.PARTITION_FIELDS.key,
    W.PRECOMBINE_FIELD.key: T.PRECOMBINE_FIELD.key,
    W.TABLE_TYPE.key: T.TABLE_TYPE.key,
}


class WriteClient:
    def __init__(self, storage: Storage, config: TableConfig, engine: EngineContext) -> None:
        self.storage = storage
        self.config = config
        self.engine = engine

    def write(
        self,
        data: Any,
        operation: WriteOperation | str,
        options: Mapping[str, Any] | None,
        extra_metadata: Mapping[str, str] | None = None,
    ) -> str | None:
        """Runs one write; returns its instant time (None for a skipped empty commit)."""
        batch = as_arrow_table(data)
        job = self.start(operation, options)
        rows, data_schema = job.prepare(batch)
        if batch.num_rows == 0 and job.planner.skips_empty_batch:
            return None
        return job.run(rows, data_schema, extra_metadata)

    def start(self, operation: WriteOperation | str, options: Mapping[str, Any] | None) -> WriteJob:
        """A write about to begin: options resolved against the table, failed writes rolled
        back (single writer). Engines that keep rows distributed drive it themselves."""
        operation = WriteOperation.parse(operation, W.OPERATION.key)
        resolved = self._options(operation, options)
        what = f"this {operation.lower()} write"
        changed = prepare_for_change(self.storage, options or {}, resolved, what)
        if changed is not None:
            self.config = changed
            resolved = self._options(operation, options)
        options = resolved
        timeline = ActiveTimeline.load(self.storage, self.config.timeline_timezone)
        require_no_restore_in_progress(timeline, "write")
        if failed_writes_policy(options) == "EAGER":  # single writer
            with table_lock(self.storage, options):
                timeline = timeline.reload()
                _refuse_running_writers(self.storage, timeline, Liveness.from_options(options))
                timeline = rollback_failed_writes(self.storage, timeline)
        return WriteJob(self, timeline, options, options.get_option(W.OPERATION))

    def _options(self, operation: WriteOperation, options: Mapping[str, Any] | None) -> Options:
        check_options(options)
        user = Options(options)
        for option_key, table_key in self._table_defining_keys(user):
            given, stored = user[option_key], self.config.properties[table_key]
            if _normalized(table_key, given) != _normalized(table_key, stored):
                why = (
                    "a table's type is fixed when it is created: leave the option out"
                    if table_key == T.TABLE_TYPE.key
                    else "a table's keys and layout cannot change"
                )
                raise InvalidOptionError(
                    f"option {option_key}={given} conflicts with the table's "
                    f"{table_key}={stored}; {why}"
                )
        return Options(self.config.properties, user, {W.OPERATION.key: operation.value})

    def _table_defining_keys(self, user: Options) -> list[tuple[str, str]]:
        """(write option, table property) pairs the user set and the table defines."""
        pairs = [(key, key) for key in user if key in self.config.properties]
        pairs += [(k, t) for k, t in TABLE_DEFINING_OPTIONS.items() if k in user and k != t]
        if W.PRECOMBINE_FIELD.key in user:  # ordering groups stand in the precombine field's place
            pairs.append((W.PRECOMBINE_FIELD.key, T.ORDERING_GROUPS.key))
        return [(k, t) for k, t in pairs if t in self.config.properties]


class WriteJob:
    """One write in progress: its options, timeline, planner and the pieces it is built from."""

    def __init__(
        self,
        client: WriteClient,
        timeline: ActiveTimeline,
        options: Options,
        operation: WriteOperation,
    ) -> None:
        self.storage = client.storage
        self.config = client.config
        self.engine = client.engine
        self.timeline = timeline
        self.options = options
        self.operation = operation
        # None also while only deletes committed (a placeholder: see write.commit_extra)
        no_schema = latest_schema_is_placeholder(timeline)
        self.table_schema = None if no_schema else latest_table_schema(timeline, client.config)
        self.key_generator: KeyGenerator = key_generator_for(options)
        self.merger = merger_for(options, self.config.precombine_field)
        self.index = index_for(options)  # a bad hoodie.index.type fails before any instant
        self._require_non_blocking_fits(options)
        log_suffix(options)  # a bad hoodie.write.log.suffix fails before any instant too
        _require_reject_updates(options)
        # EmptyHoodieRecordPayload as the write's payload class: every row deletes its key.
        payload = options.get_option(W.PAYLOAD_CLASS)
        deletes_every_row = is_deleting_payload(payload)
        if deletes_every_row and operation not in (WriteOperation.UPSERT, WriteOperation.DELETE):
            raise InvalidOptionError(
                f"payload class {payload} deletes the keys of a write; a "
                f"{operation.lower()} does not look keys up: use operation upsert or delete"
            )
        self.planner = WritePlanner(
            operation,
            options,
            timeline,
            self.config.is_merge_on_read,
            self.config.changelog,
            self.key_generator,
            deletes_every_row,
        )

    def _require_non_blocking_fits(self, options: Options) -> None:
        """Non-blocking concurrency control lets writes append to the same file groups at
        once; only logs on bucket file groups of fixed ids make that safe (see
        index.bucket_index)."""
        if not non_blocking_concurrency(options):
            return
        index_type = options.get_option(I.INDEX_TYPE)
        if not self.config.is_merge_on_read or index_type != "BUCKET":
            raise InvalidOptionError(
                f"{CONCURRENCY_MODE.key}=NON_BLOCKING_CONCURRENCY_CONTROL needs a "
                f"MERGE_ON_READ table with {I.INDEX_TYPE.key}=BUCKET, where concurrent writes "
                f"only append logs; this table is {self.config.table_type.value} with index "
                f"{index_type}: use OPTIMISTIC_CONCURRENCY_CONTROL"
            )

    @functools.cached_property
    def sizing(self) -> Sizing:
        auto_split = self.options.get_option(W.INSERT_AUTO_SPLIT)
        return Sizing(
            max_file_size=self.options.get_option(S.PARQUET_MAX_FILE_SIZE),
            small_file_limit=self.options.get_option(S.PARQUET_SMALL_FILE_LIMIT),
            record_size=average_record_size(self.timeline, self.options),
            insert_split_size=None if auto_split else self.options.get_option(W.INSERT_SPLIT_SIZE),
            small_file_candidates=self.options.get_option(W.SMALL_FILE_GROUP_CANDIDATES),
        )

    @property
    def preparer(self) -> BatchPreparer:
        deletes = self.planner.deletes_every_row
        operation = WriteOperation.DELETE if deletes else self.operation
        return BatchPreparer(
            operation,
            self.table_schema,
            self.key_generator,
            self.merger,
            self.options,
            self.config.changelog,
        )

    def prepare(self, batch: pa.Table) -> tuple[pa.Table, pa.Schema | None]:
        """Keyed, validated rows (duplicates pre-combined as the operation says) and the data
        schema they commit."""
        return self.preparer.prepare(batch, self.planner.combine)

    def transaction(
        self, instant_time: str | None = None, operation: str | None = None
    ) -> AbstractContextManager[WriteTransaction]:
        """The write's instant, requested now (see write_transaction; `instant_time` and
        `operation` for a bootstrap's fixed instant and its own operation type). Options
        that make no sense (an unsupported early conflict detection strategy) fail before
        it exists."""
        early_conflicts = EarlyConflictDetection.from_options(self.options)
        return write_transaction(
            self.storage,
            self.timeline,
            self.planner.action,
            operation or self.operation,
            self.config.name,
            Liveness.from_options(self.options),
            table_lock(self.storage, self.options),
            {**self._placeholder_schema(), **commit_extra_metadata(self.options)},
            conflicts_by_bucket=self.planner.bucket_index is not None,
            non_blocking=non_blocking_concurrency(self.options),
            early_conflicts=early_conflicts,
            instant_time=instant_time,
        )

    def _placeholder_schema(self) -> dict[str, str]:
        """The schema a commit of no rows records while the table has none (a delete first):
        its key columns, which readers need (see write.commit_extra); a commit with rows, or
        finding a schema committed meanwhile, records its own instead."""
        if self.table_schema is not None:
            return {}
        fields = [*self.config.record_key_fields, *self.config.partition_fields]
        schema = placeholder_schema(fields)
        return {CommitMetadata.SCHEMA_KEY: arrow_to_avro_json(schema, self.config.name, False)}

    def run(
        self,
        rows: pa.Table,
        data_schema: pa.Schema | None,
        extra_metadata: Mapping[str, str] | None = None,
        instant_time: str | None = None,
    ) -> str:
        """The local engine: the batch is in memory; the planner decides, tasks write.
        `instant_time`: a bootstrap's fixed instant (default: a new one)."""
        planner = self.planner
        deleting = self.operation is WriteOperation.DELETE_PARTITION
        # delete_partition: the partitions (and a refusal of unsafe ones) come before the instant
        deleted = None
        if deleting:
            deleted = planner.partitions_to_delete(lambda: planner.partition_paths(rows))
        with self.transaction(instant_time) as transaction:
            view = transaction.view
            touched = deleted if deleted is not None else touched_partitions(rows)
            replaced = planner.replaced(view.latest_slices(), touched)
            tasks = self._tasks(rows, view, touched)
            transaction.start_execution(_planned_work(task) for task in tasks)
            stats = self._execute(tasks, transaction.instant_time, data_schema)
            transaction.complete(stats, data_schema, replaced, extra_metadata)
        return transaction.instant_time

    def _tasks(self, rows: pa.Table, view: FileSystemView, touched: set[str]) -> list[WriteTask]:
        """The write tasks of the batch: by bucket under the bucket index (after dropping stored
        keys for an insert that drops duplicates), else as the index tags the rows."""
        planner = self.planner
        if planner.bucket_index is not None:
            if planner.lookup([], touched).drops_stored:
                rows, _ = self._looked_up(rows, view.latest_slices(), touched)
            return planner.tasks_for_buckets(rows, view)
        rows, file_ids = self._looked_up(rows, view.latest_slices(), touched)
        return planner.tasks_for_rows(rows, file_ids, view, self.sizing, self.engine)

    def _looked_up(
        self, rows: pa.Table, slices: list[FileSlice], touched: set[str]
    ) -> tuple[pa.Table, pa.Array]:
        """The rows the write keeps and the file group each updates (null: a new row), by
        the table's index over the slices the planner names."""
        if isinstance(self.index, GlobalIndex):
            return self._globally_looked_up(self.index, rows, slices, touched)
        lookup = self.planner.lookup(slices, touched)
        if lookup.kind is KeyLookup.NONE:
            return rows, untagged(rows)
        if lookup.tags:
            return self._tag(rows, lookup.slices)
        if rows.num_rows == 0 or not lookup.slices:
            return rows, untagged(rows)
        located = self._located(rows, lookup.slices)
        kept = self._tagger(lookup.slices).without_stored(rows, located)
        return kept, untagged(kept)

    def _tag(self, rows: pa.Table, slices: list[FileSlice]) -> tuple[pa.Table, pa.Array]:
        """The rows, with deletes of their keys' other live copies, and the file group each
        writes to (null: a new row). A key found in several file groups counts where it is
        live (write.global_tagging)."""
        if rows.num_rows == 0 or not slices:
            return rows, untagged(rows)
        return self._tagger(slices).tag(rows, self._located(rows, slices))

    def _tagger(self, slices: list[FileSlice]) -> GlobalTagger:
        return GlobalTagger(
            False,
            self.merger,
            slices,
            self._read_stored,
            globally=False,
            under_compaction=self.under_compaction,
        )

    @functools.cached_property
    def under_compaction(self) -> frozenset[tuple[str, str]]:
        """The file groups a pending compaction plans, where a key found once is read to see
        whether it is live (write.global_tagging); copy-on-write has no plans to read."""
        if not self.config.is_merge_on_read:
            return frozenset()
        return frozenset(pending_compaction_file_groups(self.timeline))

    def _located(self, rows: pa.Table, slices: list[FileSlice]) -> pa.Table:
        keys = rows.select([RECORD_KEY_FIELD, PARTITION_PATH_FIELD])
        return self.index.locate(self._index_context(slices), keys)

    def _read_stored(self, lookups: list[StoredLookup]) -> list[pa.Table]:
        return self.engine.map(self.stored_record_reader(), lookups)

    def _index_context(self, slices: list[FileSlice]) -> IndexContext:
        return IndexContext(
            self.storage, self.engine, slices, self.key_generator, self.config.populate_meta_fields
        )

    def _globally_looked_up(
        self, index: GlobalIndex, rows: pa.Table, slices: list[FileSlice], touched: set[str]
    ) -> tuple[pa.Table, pa.Array]:
        """A global index: keys are looked up in every partition; a row finding its key in
        another partition than it names moves there, or updates it where it is (see
        write.global_tagging). The rows come back with those moves spelled out."""
        rows = self._combined_across_partitions(rows)
        lookup = self.planner.lookup(slices, touched, every_partition=True)
        if lookup.kind is KeyLookup.NONE:
            return rows, untagged(rows)
        if rows.num_rows == 0 or not lookup.slices:
            return rows, untagged(rows)
        keys = rows.select([RECORD_KEY_FIELD, PARTITION_PATH_FIELD])
        located = index.locate(self._index_context(lookup.slices), keys)
        tagger = GlobalTagger(
            index.update_partition_path,
            self.merger,
            lookup.slices,
            self._read_stored,
            under_compaction=self.under_compaction,
        )
        if lookup.drops_stored:
            kept = tagger.without_stored(rows, located)
            return kept, untagged(kept)
        return tagger.tag(rows, located)

    def _combined_across_partitions(self, rows: pa.Table) -> pa.Table:
        """Under a global index a key is one record whatever partition its rows name: the
        batch's duplicates of a key are pre-combined by key alone (the winner keeps its
        partition), as Apache Hudi does when the index is global."""
        deleting_partitions = self.operation is WriteOperation.DELETE_PARTITION  # raw rows
        if deleting_partitions or not self.planner.combine or rows.num_rows < 2:
            return rows
        return self.preparer.precombine(rows, globally=True)

    def stored_record_reader(self) -> StoredRecordReader:
        """Reads the latest version of stored records (base merged with log) for a global
        index's tagging; picklable, so an engine runs it where it likes."""
        assert self.table_schema is not None  # there are slices: the table has a schema
        file_schema = add_meta_fields(
            self.table_schema, with_operation_field=self.config.changelog, nullable=True
        )
        return StoredRecordReader(
            self.storage,
            file_schema,
            self.merger,
            InstantFilter.of(self.timeline),
            self.options.get_option(R.MERGE_MAX_MEMORY),
            self.options.get_option(R.SPILL_PATH),
            None if self.config.populate_meta_fields else self.key_generator,
        )

    def _execute(
        self, tasks: list[WriteTask], instant_time: str, data_schema: pa.Schema | None
    ) -> list[WriteStat]:
        if not tasks:
            return []
        assert data_schema is not None
        for partition in {t.partition_path for t in tasks}:
            ensure_partition_metadata(self.storage, partition, instant_time)
        settings = self.settings(instant_time, data_schema)
        results = self.engine.map(functools.partial(run_task, settings=settings), tasks)
        return [stat for stats in results for stat in stats]

    def settings(self, instant_time: str, data_schema: pa.Schema) -> WriteSettings:
        return write_settings(
            self.storage,
            self.config,
            self.options,
            instant_time,
            data_schema,
            self.merger,
            self.key_generator,
            self.sizing.max_file_size,
            self.sizing.record_size,
        )


def _normalized(table_key: str, value: str) -> str:
    """A table property's value as compared with a write option naming it: a location as
    Hadoop prints it (users give the bootstrap's source as a plain path), else without
    spaces or case."""
    if table_key == T.BOOTSTRAP_BASE_PATH.key:
        return hadoop_path(value.strip().rstrip("/"))
    if table_key == T.TABLE_TYPE.key:  # a value naming no type fails naming the choices
        return TableType.parse(value, "table type").value
    return value.replace(" ", "").lower()


def _refuse_running_writers(storage: Storage, timeline: ActiveTimeline, liveness: Liveness) -> None:
    """Single-writer mode rolls back every pending write before a new one, as Apache Hudi's
    EAGER policy does; a pending write whose writer still beats is another writer at work,
    whose files that rollback would delete."""
    for pending in timeline.pending(WRITE_ACTIONS):
        if write_is_alive(storage, pending.timestamp, liveness):
            raise ConcurrentWriterError(
                f"another writer is active on this table: {pending.action} "
                f"{pending.timestamp} is in flight and its writer is alive. In single-writer "
                f"mode ({CONCURRENCY_MODE.key}=SINGLE_WRITER, the default) one writer may "
                "run at a time; to let writers overlap, give every writer "
                f"{CONCURRENCY_MODE.key}=optimistic_concurrency_control and a lock provider "
                f"they all share ({PROVIDER.key}=file_system or database)"
            )


def run_task(task: WriteTask, settings: WriteSettings) -> list[WriteStat]:
    return task.run(settings)


def _planned_work(task: WriteTask) -> PlannedWork:
    if isinstance(task, AppendTask):
        prev = task.file_slice.base_instant_time or None  # None: a new group's first log
        return PlannedWork(task.partition_path, task.file_id, prev, updates=task.rows.num_rows)
    if isinstance(task, MergeTask):
        prev = task.base_file.instant_time
        return PlannedWork(task.partition_path, task.file_id, prev, updates=task.rows.num_rows)
    return PlannedWork(task.partition_path, task.file_id, None, inserts=task.num_rows)


def _require_reject_updates(options: Options) -> None:
    """Updates to file groups under pending clustering are refused (see WritePlanner); the
    strategies that let them through are not implemented."""
    strategy = options.get_option(K.UPDATES_STRATEGY)
    if strategy.rsplit(".", 1)[-1] != K.REJECT_UPDATES.rsplit(".", 1)[-1]:
        raise InvalidOptionError(
            f"{K.UPDATES_STRATEGY.key}={strategy}: only {K.REJECT_UPDATES} is implemented "
            "(a write updating a file group under pending clustering fails)"
        )
