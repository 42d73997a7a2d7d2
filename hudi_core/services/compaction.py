"""Compaction of merge-on-read tables: plan (`<ts>.compaction.requested`), then execute.

Scheduling checks the trigger, picks file slices with log files through the strategy (never a
file group another pending compaction or a clustering holds) and writes the plan. Execution
claims an attempt (so two runs of one plan cannot both proceed), rolls back a previous attempt
that died, merges each planned slice into a new base file with the record merger, and
completes the instant as a commit with `compacted=true`. Writes keep going meanwhile: their
log files for a planned file group go onto the slice the compaction starts.

A planned file that is gone fails the run with a MissingDataFileError naming it (the attempt
is rolled back, the plan kept). One exception: a file group a completed replacecommit retired
since (an insert_overwrite, say) is no longer read by any snapshot, so when its planned files
are gone (cleaned by an earlier version) its operation is skipped and the rest of the plan
completes; with its files there it is compacted as planned, keeping time travel right.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from hudi_core.config import compaction_options as C
from hudi_core.config import read_options as R
from hudi_core.config import storage_options as S
from hudi_core.config import write_options as W
from hudi_core.config.option import Options
from hudi_core.errors import MissingDataFileError, ServiceError
from hudi_core.io.base_file import check_base_file, read_footer
from hudi_core.io.bloom_filter import BloomFilter, bloom_filter_from_footer, resume_bloom_filter
from hudi_core.keygen import key_generator_for
from hudi_core.merge.record_merger import merger_for
from hudi_core.model.commit_metadata import (
    COMPACT_OPERATION,
    NULL_COMMIT,
    CommitMetadata,
    CompactionStats,
    RuntimeStats,
    WriteStat,
)
from hudi_core.model.compaction_plan import CompactionOperation, CompactionPlan, read_plan
from hudi_core.model.file_group import FileSlice
from hudi_core.read.file_system_view import (
    FileSystemView,
    pending_clustering_file_groups,
    with_bootstrap_source,
)
from hudi_core.read.log_scanner import InstantFilter, SliceLog
from hudi_core.read.slice_merger import SliceMerger
from hudi_core.schema.meta_fields import FILE_NAME_FIELD, PARTITION_PATH_FIELD, RECORD_KEY_FIELD
from hudi_core.schema.to_avro import arrow_to_avro_json
from hudi_core.services.compaction_strategy import Candidate, select
from hudi_core.services.compaction_trigger import compaction_due
from hudi_core.services.planned_service import PlannedService
from hudi_core.table_schema import latest_table_schema
from hudi_core.timeline import ActiveTimeline, Instant
from hudi_core.timeline.instant import COMMIT, COMPACTION, REPLACE_COMMIT, WRITE_ACTIONS
from hudi_core.write.commit_extra import commit_extra_metadata
from hudi_core.write.handles import WriteSettings, as_rows_of, new_file_path, open_writer
from hudi_core.write.markers import files_of_pending_writes
from hudi_core.write.settings import write_settings

_LOG = logging.getLogger(__name__)


class Compactor(PlannedService):
    """`HudiTable.compaction`: schedule and run compactions of one merge-on-read table."""

    action = COMPACTION
    what = "compaction"

    # ---- planning

    def schedule(self, options: Mapping[str, Any] | None = None) -> str | None:
        """Plans a compaction if the trigger says one is due and some slice qualifies;
        returns its instant time, or None."""
        self._require_merge_on_read()
        opts = self._options_for_change(options, "compaction")
        with self._lock(opts):  # one plan at a time: no two plans take the same file group
            timeline = self._settled_timeline(opts)
            if not compaction_due(timeline, opts):
                return None
            plan = self._plan(timeline, opts)
            if not plan.operations:
                return None
            instant_time = timeline.new_instant_time()
            timeline.create_requested(COMPACTION, instant_time, plan.to_avro_bytes())
        _LOG.info("scheduled compaction %s of %d file slices", instant_time, len(plan.operations))
        return instant_time

    def _plan(self, timeline: ActiveTimeline, opts: Options) -> CompactionPlan:
        view = FileSystemView(self.storage, timeline)
        taken = set(view.pending_compactions) | pending_clustering_file_groups(timeline)
        max_file_size = opts.get_option(S.PARQUET_MAX_FILE_SIZE)
        # Log files of writes in flight stay out of the plan: such a write moves its files
        # onto the slice the plan starts when it commits (see write.log_placement).
        in_flight = files_of_pending_writes(
            self.storage, (i.timestamp for i in timeline.pending(WRITE_ACTIONS))
        )
        slices = [
            s.with_log_files([f for f in s.log_files if f.path not in in_flight])
            for s in view.latest_slices()
        ]
        candidates = [
            Candidate(s, max_file_size)
            for s in slices
            if s.log_files and (s.partition_path, s.file_id) not in taken
        ]
        chosen = select(candidates, opts)
        return CompactionPlan([CompactionOperation.of(c.file_slice, c.metrics()) for c in chosen])

    # ---- execution

    def _require_applicable(self) -> None:
        self._require_merge_on_read()

    def _is_plan(self, timeline: ActiveTimeline, instant: Instant) -> bool:
        return instant.action in (COMPACTION, COMMIT)  # planned, or completed as a commit

    def _check_plan(self, timeline: ActiveTimeline, instant_time: str) -> None:
        read_plan(timeline, instant_time)

    def _job(self, timeline: ActiveTimeline, instant_time: str, opts: Options) -> CommitMetadata:
        return _CompactionJob(self, timeline, instant_time, opts).run()

    def _require_merge_on_read(self) -> None:
        if not self.config.is_merge_on_read:
            raise ServiceError(
                f"table {self.config.name} is {self.config.table_type}; only merge-on-read "
                "tables have log files to compact"
            )


class _CompactionJob:
    """One execution of one plan: a task per operation, on the engine."""

    def __init__(
        self, compactor: Compactor, timeline: ActiveTimeline, instant_time: str, opts: Options
    ) -> None:
        self.storage = compactor.storage
        self.config = compactor.config
        self.engine = compactor.engine
        self.timeline = timeline
        self.instant_time = instant_time
        self.opts = opts

    def run(self) -> CommitMetadata:
        plan = read_plan(self.timeline, self.instant_time)
        data_schema = latest_table_schema(self.timeline, self.config)
        metadata = CommitMetadata(operation_type=COMPACT_OPERATION, compacted=True)
        if data_schema is not None:
            schema_json = arrow_to_avro_json(data_schema, self.config.name, False)
            metadata.extra_metadata[CommitMetadata.SCHEMA_KEY] = schema_json
        metadata.extra_metadata.update(plan.extra_metadata)
        metadata.extra_metadata.update(commit_extra_metadata(self.opts))
        if not plan.operations or data_schema is None:
            return metadata
        settings = self._settings(data_schema)
        instants = InstantFilter.of(self.timeline, as_of=self.instant_time)
        replaced = replaced_file_groups(self.timeline)
        tasks = [
            CompactTask(
                task_id,
                operation,
                instants,
                self.opts.get_option(C.MEMORY),
                self.opts.get_option(R.SPILL_PATH),
                (operation.partition_path, operation.file_id) in replaced,
            )
            for task_id, operation in enumerate(plan.operations)
        ]
        for stat in self.engine.map(functools.partial(run_compact_task, settings=settings), tasks):
            if stat is not None:
                metadata.add(stat)
        return metadata

    def _settings(self, data_schema: pa.Schema) -> WriteSettings:
        return write_settings(
            self.storage,
            self.config,
            self.opts,
            self.instant_time,
            data_schema,
            merger_for(self.opts, self.config.precombine_field),
            key_generator_for(self.opts),
            self.opts.get_option(S.PARQUET_MAX_FILE_SIZE),
            self.opts.get_option(W.RECORD_SIZE_ESTIMATE),
        )


@dataclass
class CompactTask:
    """Merges one planned file slice (base file and log files) into its next base file."""

    task_id: int
    operation: CompactionOperation
    instants: InstantFilter  # log blocks of completed instants up to the compaction
    memory_budget: int
    spill_path: str | None
    replaced: bool = False  # a completed replacecommit retired the file group since the plan

    def run(self, settings: WriteSettings) -> WriteStat | None:
        """The new base file's write stat; None when a slice without a base file merges to
        no rows (as Apache Hudi does, no file is written then), or when the slice of a
        replaced file group lost its files (see the module's docstring)."""
        started = time.monotonic()
        storage = settings.storage
        op = self.operation
        try:
            planned = op.file_slice(storage)
        except FileNotFoundError as exc:
            if self.replaced:
                _LOG.warning(
                    "compaction %s skips file group %s in '%s': replaced since it was planned, "
                    "and its files are gone (%s)",
                    settings.instant_time,
                    op.file_id,
                    op.partition_path,
                    exc,
                )
                return None
            raise MissingDataFileError(
                f"compaction {settings.instant_time} cannot run: a file it merges is gone "
                f"({exc}; file group {op.file_id} in '{op.partition_path}'), deleted outside "
                "Hudi or by an older cleaner, so its rows are lost; put the file back from a "
                "backup and run the compaction again, or restore the table to a savepoint "
                "taken before it went"
            ) from exc
        file_slice = with_bootstrap_source(storage, planned)
        log = SliceLog.scan(storage, file_slice, self.instants)
        scanned = time.monotonic()
        merger = SliceMerger(
            storage,
            merged_slice_schema(settings),
            settings.merger,
            self.memory_budget,
            self.spill_path,
            key_generator=None if settings.populate_meta_fields else settings.key_generator,
        )
        path = new_file_path(settings, self.task_id, op.partition_path, op.file_id)
        writer = None
        for rows in merger.merge(file_slice, log):
            if writer is None and not (rows.num_rows or op.base_file):
                continue
            new_keys = None
            if writer is None:
                bloom, new_keys = self._bloom_filter(settings, file_slice, merger, rows)
                writer = open_writer(settings, path, "MERGE" if op.base_file else "CREATE", bloom)
            writer.write(as_rows_of(rows, path, settings), new_keys)
        if writer is None:
            return None
        written = writer.close()
        counts = merger.counts
        stat = WriteStat(
            file_id=op.file_id,
            partition_path=op.partition_path,
            path=written.path,
            # A merge names the base it replaced; a slice without one is written as a create
            # handle writes it, with no previous commit (Apache Hudi's "null").
            prev_commit=op.base_instant_time if op.base_file else NULL_COMMIT,
            num_writes=written.num_rows,
            num_deletes=counts.deletes,
            num_update_writes=counts.updates,
            num_inserts=counts.inserts,
            total_write_bytes=written.size,
            file_size_in_bytes=written.size,
            runtime_stats=RuntimeStats(
                total_scan_time=int((scanned - started) * 1000),
                total_upsert_time=int((time.monotonic() - scanned) * 1000),
            ),
        )
        stat.compaction = CompactionStats(
            log_records=counts.log_records,
            log_files=len(file_slice.log_files),
            log_bytes=sum(f.size for f in file_slice.log_files),
            updated_records=counts.log_keys,
            log_blocks=log.stats.blocks,
            corrupt_blocks=log.stats.corrupt_blocks,
            rollback_blocks=log.stats.rollback_blocks,
        )
        return stat

    @staticmethod
    def _bloom_filter(
        settings: WriteSettings, file_slice: FileSlice, merger: SliceMerger, rows: pa.Table
    ) -> tuple[BloomFilter | None, pa.ChunkedArray | None]:
        """The base file's filter, resumed, and the keys still to add to it (the appended new
        ones), when the new file holds the old keys and then new ones: merged in memory with
        no deletes. That saves hashing every stored key again; else None, None (fresh)."""
        base = file_slice.base_file
        if settings.bloom is None or base is None or merger.spilled or merger.counts.deletes:
            return None, None
        stored = bloom_filter_from_footer(read_footer(settings.storage, base.path))
        resumed = resume_bloom_filter(stored, settings.bloom.new_filter())
        if resumed is None:
            return None, None
        inserted = merger.counts.inserts
        return resumed, rows.column(RECORD_KEY_FIELD).slice(rows.num_rows - inserted)


def replaced_file_groups(timeline: ActiveTimeline) -> set[tuple[str, str]]:
    """(partition, file id) of every file group a completed replacecommit retired."""
    groups: set[tuple[str, str]] = set()
    for instant in timeline.completed([REPLACE_COMMIT]):
        groups |= CommitMetadata.from_json_bytes(timeline.read_bytes(instant)).replaced_file_ids()
    return groups


def merged_slice_schema(settings: WriteSettings) -> pa.Schema:
    """What a compaction merges: the file schema but for the partition path and file name,
    which the new file sets anew (as_rows_of) and which are costly to carry as strings."""
    schema = settings.file_schema
    for name in (PARTITION_PATH_FIELD, FILE_NAME_FIELD):
        schema = schema.remove(schema.get_field_index(name))
    return schema


def run_compact_task(task: CompactTask, settings: WriteSettings) -> WriteStat | None:
    try:
        return task.run(settings)
    except MissingDataFileError:
        raise  # names the file already
    except (pa.ArrowInvalid, OSError):
        if task.operation.base_file_path is not None:  # name the base file if it is to blame
            check_base_file(settings.storage, task.operation.base_file_path)
        raise
