"""The write client: one write operation from batch to completed instant.

requested -> (tag, assign buckets) -> inflight -> tasks write files after their markers ->
completed. Only the last step makes the write visible. A failure on the way rolls the instant
back at once; a crash leaves it for the next write, which rolls it back before starting.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.config import storage_options as S
from hudi_core.config import table_options as T
from hudi_core.config import write_options as W
from hudi_core.config.lock_options import CONCURRENCY_MODE, PROVIDER
from hudi_core.config.option import Options
from hudi_core.config.table_config import TableConfig
from hudi_core.engine import EngineContext
from hudi_core.errors import ConcurrentWriterError, InvalidOptionError, WriteConflictError
from hudi_core.index import IndexContext, index_for
from hudi_core.keygen import KeyGenerator, key_generator_for
from hudi_core.keygen.partition import require_safe_partition_paths
from hudi_core.lock import failed_writes_policy, table_lock
from hudi_core.merge.record_merger import is_deleting_payload, merger_for
from hudi_core.model.commit_metadata import WriteStat
from hudi_core.model.file_group import FileSlice
from hudi_core.model.partition_metadata import ensure_partition_metadata
from hudi_core.read.file_system_view import FileSystemView, pending_clustering_file_groups
from hudi_core.schema.meta_fields import PARTITION_PATH_FIELD, RECORD_KEY_FIELD
from hudi_core.services.heartbeat import Liveness, write_is_alive
from hudi_core.services.metadata_table import prepare_for_change
from hudi_core.services.rollback import rollback_failed_writes
from hudi_core.services.savepoint import require_no_restore_in_progress
from hudi_core.storage import Storage
from hudi_core.table_schema import latest_table_schema
from hudi_core.timeline import ActiveTimeline
from hudi_core.timeline.instant import COMMIT, DELTA_COMMIT, REPLACE_COMMIT, WRITE_ACTIONS
from hudi_core.write.append_task import AppendTask
from hudi_core.write.bucket_assigner import (
    LogTargets,
    Sizing,
    assign_bulk_inserts,
    assign_upserts,
)
from hudi_core.write.handles import (
    CreateTask,
    MergeTask,
    WriteSettings,
)
from hudi_core.write.prepare import BatchPreparer, as_arrow_table
from hudi_core.write.record_size import average_record_size
from hudi_core.write.settings import write_settings
from hudi_core.write.transaction import PlannedWork, write_transaction

REPLACING_OPERATIONS = ("INSERT_OVERWRITE", "INSERT_OVERWRITE_TABLE", "DELETE_PARTITION")
# Write options naming what a table property defines; like options named as table properties,
# they must agree with the table.
TABLE_DEFINING_OPTIONS = {
    W.RECORD_KEY_FIELD.key: T.RECORD_KEY_FIELDS.key,
    W.PARTITION_PATH_FIELD.key: T.PARTITION_FIELDS.key,
    W.PRECOMBINE_FIELD.key: T.PRECOMBINE_FIELD.key,
}


@dataclass
class _Plan:
    tasks: list[CreateTask | MergeTask | AppendTask]
    replaced: dict[str, list[str]] | None  # replacecommits only


class WriteClient:
    def __init__(self, storage: Storage, config: TableConfig, engine: EngineContext) -> None:
        self.storage = storage
        self.config = config
        self.engine = engine

    def write(
        self,
        data: Any,
        operation: str,
        options: Mapping[str, Any] | None,
        extra_metadata: Mapping[str, str] | None = None,
    ) -> str | None:
        """Runs one write; returns its instant time (None for a skipped empty commit)."""
        batch = as_arrow_table(data)
        job = self.start(operation, options)
        rows, data_schema = job.prepare(batch)
        if batch.num_rows == 0 and job.skips_empty_batch:
            return None
        return job.run(rows, data_schema, extra_metadata)

    def start(self, operation: str, options: Mapping[str, Any] | None) -> WriteJob:
        """A write about to begin: options resolved against the table, failed writes rolled
        back (single writer). Engines that keep rows distributed drive it themselves."""
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

    def _options(self, operation: str, options: Mapping[str, Any] | None) -> Options:
        user = Options(options)
        for option_key, table_key in self._table_defining_keys(user):
            given, stored = user[option_key], self.config.properties[table_key]
            if given.replace(" ", "").lower() != stored.replace(" ", "").lower():
                raise InvalidOptionError(
                    f"option {option_key}={given} conflicts with the table's "
                    f"{table_key}={stored}; a table's keys and layout cannot change"
                )
        return Options(self.config.properties, user, {W.OPERATION.key: operation})

    def _table_defining_keys(self, user: Options) -> list[tuple[str, str]]:
        """(write option, table property) pairs the user set and the table defines."""
        pairs = [(key, key) for key in user if key in self.config.properties]
        pairs += [(k, t) for k, t in TABLE_DEFINING_OPTIONS.items() if k in user and k != t]
        return [(k, t) for k, t in pairs if t in self.config.properties]


class WriteJob:
    """One write in progress: its options, timeline and the pieces it is built from."""

    def __init__(
        self, client: WriteClient, timeline: ActiveTimeline, options: Options, op: str
    ) -> None:
        self.storage = client.storage
        self.config = client.config
        self.engine = client.engine
        self.timeline = timeline
        self.options = options
        self.op = op
        self.table_schema = latest_table_schema(timeline, client.config)
        self.key_generator: KeyGenerator = key_generator_for(options)
        self.merger = merger_for(options, self.config.precombine_field)
        self.index = index_for(options)  # a bad hoodie.index.type fails before any instant
        # EmptyHoodieRecordPayload as the write's payload class: every row deletes its key.
        self.deletes_every_row = is_deleting_payload(options.get_option(W.PAYLOAD_CLASS))
        if self.deletes_every_row and op not in ("UPSERT", "DELETE"):
            raise InvalidOptionError(
                f"payload class {options.get_option(W.PAYLOAD_CLASS)} deletes the keys of a "
                f"write; a {op.lower()} does not look keys up: use operation upsert or delete"
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
    def mor(self) -> bool:
        return self.config.is_merge_on_read

    @property
    def combine(self) -> bool:
        """Whether duplicate keys of the batch are pre-combined (per operation, as Hudi)."""
        if self.op == "DELETE" or self.deletes_every_row:
            return self.options.get_option(W.COMBINE_BEFORE_DELETE)
        if self.keeps_every_change:
            return False
        if self.op == "UPSERT":
            return self.options.get_option(W.COMBINE_BEFORE_UPSERT)
        return self.options.get_option(W.COMBINE_BEFORE_INSERT)

    @property
    def skips_empty_batch(self) -> bool:
        """Whether an empty batch writes nothing at all: a bulk_insert of nothing is no commit;
        other operations commit empty unless hoodie.allow.empty.commit=false (delete_partition
        names its partitions in an option)."""
        if self.op == "BULK_INSERT":
            return True
        return self.op != "DELETE_PARTITION" and not self.options.get_option(W.ALLOW_EMPTY_COMMIT)

    @property
    def keeps_every_change(self) -> bool:
        """Changelog mode on merge-on-read: an upsert keeps every change of a key in the batch,
        in batch order, as Apache Hudi's Flink writer does with changelog.enabled (unless
        hoodie.combine.before.upsert is set). See write.changelog."""
        return (
            self.config.changelog
            and self.mor
            and self.op == "UPSERT"
            and not self.deletes_every_row
            and not self.options.is_set(W.COMBINE_BEFORE_UPSERT)
        )

    @property
    def tops_up_small_files(self) -> bool:
        """Whether inserts may go into existing small files: not when every change is kept
        (a merge into a base file keeps one version of a key)."""
        return not self.keeps_every_change

    @property
    def shuffle_parallelism(self) -> int:
        """The operation's hoodie.*.shuffle.parallelism (0: let the engine infer it)."""
        option = {
            "UPSERT": W.UPSERT_PARALLELISM,
            "DELETE": W.DELETE_PARALLELISM,
            "BULK_INSERT": W.BULK_INSERT_PARALLELISM,
        }.get(self.op, W.INSERT_PARALLELISM)
        return self.options.get_option(option)

    @property
    def action(self) -> str:
        if self.op in REPLACING_OPERATIONS:
            return REPLACE_COMMIT
        return DELTA_COMMIT if self.mor else COMMIT

    @property
    def preparer(self) -> BatchPreparer:
        operation = "DELETE" if self.deletes_every_row else self.op
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
        return self.preparer.prepare(batch, self.combine)

    def transaction(self):
        """The write's instant, requested now (see write_transaction)."""
        return write_transaction(
            self.storage,
            self.timeline,
            self.action,
            self.op,
            self.config.name,
            Liveness.from_options(self.options),
            table_lock(self.storage, self.options),
        )

    def run(
        self,
        rows: pa.Table,
        data_schema: pa.Schema | None,
        extra_metadata: Mapping[str, str] | None = None,
    ) -> str:
        # delete_partition: the partitions (and a refusal of unsafe ones) come before the instant
        deleted = self.partitions_to_delete(rows) if self.op == "DELETE_PARTITION" else set()
        with self.transaction() as transaction:
            plan = self._plan(rows, transaction.view, deleted)
            transaction.start_execution(_planned_work(task) for task in plan.tasks)
            stats = self._execute(plan, transaction.instant_time, data_schema)
            transaction.complete(stats, data_schema, plan.replaced, extra_metadata)
        return transaction.instant_time

    # ---- planning

    def _plan(self, rows: pa.Table, view: FileSystemView, partitions: set[str]) -> _Plan:
        slices = view.latest_slices()
        logs = self.log_targets(view)
        sizing = self.sizing
        if self.op == "DELETE_PARTITION":
            doomed = [s for s in slices if s.partition_path in partitions]
            return _Plan([], _file_ids_by_partition(doomed))
        if self.op == "BULK_INSERT":
            sort_by_key = self.options.get_option(W.BULK_INSERT_SORT_MODE) != "NONE"
            plan = assign_bulk_inserts(rows, sizing, self.engine, sort_by_key)
            return _Plan(plan.tasks(), None)
        if self.op in ("INSERT_OVERWRITE", "INSERT_OVERWRITE_TABLE"):
            return self._plan_overwrite(rows, slices, sizing)
        file_ids = self._tag(rows, slices)
        held = self.held_by_clustering
        if self.op == "INSERT":
            if self.options.get_option(W.INSERT_DROP_DUPLICATES):
                rows = rows.filter(pc.is_null(file_ids))
            plan = assign_upserts(rows, _untagged(rows), slices, sizing, logs=logs, held=held)
            keep_duplicates = self.options.get_option(W.MERGE_ALLOW_DUPLICATE_ON_INSERTS)
            return _Plan(plan.tasks(match_keys=not keep_duplicates), None)
        self.refuse_updates_under_clustering(_tagged_groups(rows, file_ids))
        keep = self.keeps_every_change
        plan = assign_upserts(rows, file_ids, slices, sizing, not keep, logs, keep, held)
        return _Plan(plan.tasks(), None)

    @functools.cached_property
    def held_by_clustering(self) -> set[tuple[str, str]]:
        """File groups a pending clustering plan rewrites (one Apache Hudi scheduled, say): a
        write may neither update them nor top them up with inserts, as the clustering would
        replace them without the change."""
        return pending_clustering_file_groups(self.timeline)

    def refuse_updates_under_clustering(self, groups: Iterable[tuple[str, str]]) -> None:
        """Apache Hudi's default update strategy for file groups under pending clustering:
        the write fails (and rolls back) rather than lose its updates when the clustering
        completes."""
        held = sorted(self.held_by_clustering.intersection(groups))
        if held:
            shown = ", ".join(f"{p or '(no partition)'}/{f}" for p, f in held[:3])
            more = f" and {len(held) - 3} more" if len(held) > 3 else ""
            raise WriteConflictError(
                f"the write updates file groups a pending clustering rewrites ({shown}{more}): "
                "the clustering would replace them without these updates; the write is "
                "rolled back, retry it once the clustering has completed"
            )

    def _plan_overwrite(self, rows: pa.Table, slices: list[FileSlice], sizing: Sizing) -> _Plan:
        if self.op == "INSERT_OVERWRITE_TABLE":
            replaced = list(slices)
        else:
            touched = set(pc.unique(rows.column(PARTITION_PATH_FIELD)).to_pylist())
            replaced = [s for s in slices if s.partition_path in touched]
        plan = assign_upserts(rows, _untagged(rows), [], sizing, use_small_files=False)
        return _Plan(plan.tasks(), _file_ids_by_partition(replaced))

    def _tag(self, rows: pa.Table, slices: list[FileSlice]) -> pa.Array:
        if rows.num_rows == 0 or not slices:
            return _untagged(rows)
        context = IndexContext(
            self.storage, self.engine, slices, self.key_generator, self.config.populate_meta_fields
        )
        keys = rows.select([RECORD_KEY_FIELD, PARTITION_PATH_FIELD])
        return self.index.tag(context, keys)

    def partitions_to_delete(self, batch: pa.Table) -> set[str]:
        """The partition paths delete_partition replaces; refuses unsafe listed paths."""
        listed = self.options.get_option(W.PARTITIONS_TO_DELETE)
        if listed:
            partitions = {p.strip() for p in listed.split(",") if p.strip()}
            require_safe_partition_paths(sorted(partitions), W.PARTITIONS_TO_DELETE.key)
            return partitions
        if batch.num_rows == 0:
            raise InvalidOptionError(
                "delete_partition needs hoodie.datasource.write.partitions.to.delete or a batch "
                "whose rows name the partitions"
            )
        return set(pc.unique(self.key_generator.partition_paths(batch)).to_pylist())

    # ---- execution

    def _execute(
        self, plan: _Plan, instant_time: str, data_schema: pa.Schema | None
    ) -> list[WriteStat]:
        if not plan.tasks:
            return []
        assert data_schema is not None
        for partition in {t.partition_path for t in plan.tasks}:
            ensure_partition_metadata(self.storage, partition, instant_time)
        settings = self.settings(instant_time, data_schema)
        results = self.engine.map(functools.partial(run_task, settings=settings), plan.tasks)
        return [stat for stats in results for stat in stats]

    def log_targets(self, view: FileSystemView) -> LogTargets | None:
        """Merge-on-read: where appends go, and the file groups compaction holds."""
        if not self.mor:
            return None
        return LogTargets(view.slice_for_logs, set(view.pending_compactions))

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


def run_task(task: CreateTask | MergeTask | AppendTask, settings: WriteSettings) -> list[WriteStat]:
    return task.run(settings)


def _tagged_groups(rows: pa.Table, file_ids: pa.Array) -> set[tuple[str, str]]:
    """(partition, file id) of the file groups the tagged rows update."""
    tagged = pc.is_valid(file_ids)
    pairs = pa.table(
        {"p": rows.column(PARTITION_PATH_FIELD).filter(tagged), "f": file_ids.filter(tagged)}
    )
    unique = pairs.group_by(["p", "f"]).aggregate([])
    return set(zip(unique["p"].to_pylist(), unique["f"].to_pylist(), strict=True))


def _untagged(rows: pa.Table) -> pa.Array:
    return pa.nulls(rows.num_rows, pa.string())


def _file_ids_by_partition(slices: list[FileSlice]) -> dict[str, list[str]]:
    by_partition: dict[str, list[str]] = {}
    for file_slice in slices:
        by_partition.setdefault(file_slice.partition_path, []).append(file_slice.file_id)
    return by_partition


def _planned_work(task: CreateTask | MergeTask | AppendTask) -> PlannedWork:
    if isinstance(task, AppendTask):
        prev = task.file_slice.base_instant_time
        return PlannedWork(task.partition_path, task.file_id, prev, updates=task.rows.num_rows)
    if isinstance(task, MergeTask):
        prev = task.base_file.instant_time
        return PlannedWork(task.partition_path, task.file_id, prev, updates=task.rows.num_rows)
    return PlannedWork(task.partition_path, task.file_id, None, inserts=task.num_rows)
