"""Clustering: plan (`<ts>.replacecommit.requested`, operationType CLUSTER), then execute.

Scheduling picks small file slices through the size-based plan strategy (never a file group a
pending compaction or clustering holds; see clustering_strategy) and writes Apache Hudi's
clustering plan. Execution (see planned_service for attempts and rollback) rewrites each
input group as one task: its slices' rows (merge-on-read slices merged with their logs),
ordered by the layout over the sort columns (space_curves), into the plan's number of new
file groups; the rows keep their commit time and sequence number when the plan preserves
commit metadata. The completed replacecommit names the replaced file groups
(partitionToReplaceFileIds), which readers stop seeing and the cleaner later deletes.
Writers refuse to update file groups under pending clustering (write.planner).

An overwrite (insert_overwrite, insert_overwrite_table, delete_partition) may replace input
file groups after the plan was made: rewriting them would bring the rows it removed back. A
run leaves out every input file group a completed replacecommit already replaced (all of
them: the clustering completes writing and replacing nothing), and one that completes while
the run writes fails the attempt at commit as a conflict (rolled back, the plan kept; the
next run leaves those file groups out).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np
import pyarrow as pa

from hudi_core.arrow_utils import constant_strings, numbered_strings
from hudi_core.config import clustering_options as K
from hudi_core.config import compaction_options as C
from hudi_core.config import index_options as I
from hudi_core.config import read_options as R
from hudi_core.config import write_options as W
from hudi_core.config.option import Options, parse_list
from hudi_core.errors import ServiceError, WriteConflictError
from hudi_core.keygen import key_generator_for
from hudi_core.lock.conflicts import check_no_conflicts
from hudi_core.merge.record_merger import merger_for
from hudi_core.model.clustering_plan import ClusteringGroup, ClusteringPlan
from hudi_core.model.commit_metadata import (
    CLUSTER_OPERATION,
    NULL_COMMIT,
    CommitMetadata,
    RuntimeStats,
    WriteStat,
)
from hudi_core.model.file_names import new_file_id
from hudi_core.read.file_system_view import (
    FileSystemView,
    clustering_plan,
    pending_clustering_file_groups,
    with_bootstrap_source,
)
from hudi_core.read.log_scanner import InstantFilter, SliceLog
from hudi_core.read.slice_merger import SliceMerger
from hudi_core.schema.meta_fields import COMMIT_SEQNO_FIELD, COMMIT_TIME_FIELD
from hudi_core.schema.to_avro import arrow_to_avro_json
from hudi_core.services.clustering_strategy import SORT_COLUMNS_PARAM, PlanSettings, plan_clustering
from hudi_core.services.compaction import merged_slice_schema
from hudi_core.services.planned_service import PlannedService
from hudi_core.services.space_curves import curve_order
from hudi_core.table_schema import latest_table_schema
from hudi_core.timeline import ActiveTimeline, Instant
from hudi_core.timeline.instant import REPLACE_COMMIT
from hudi_core.write.commit_extra import commit_extra_metadata
from hudi_core.write.handles import WriteSettings, as_rows_of, new_file_path, open_writer
from hudi_core.write.settings import write_settings


class Clusterer(PlannedService):
    """`HudiTable.clustering`: schedule and run clusterings of one table."""

    action = REPLACE_COMMIT
    what = "clustering"

    def _is_plan(self, timeline: ActiveTimeline, instant: Instant) -> bool:
        return (
            instant.action == REPLACE_COMMIT
            and clustering_plan(timeline, instant.timestamp) is not None
        )

    # ---- planning

    def schedule(self, options: Mapping[str, Any] | None = None) -> str | None:
        """Plans a clustering if some file slices qualify; returns its instant time, or None."""
        opts = self._options_for_change(options, self.what)
        self._refuse_bucket_index(opts)
        settings = PlanSettings.from_options(opts)
        Layout.of(ClusteringPlan([]), opts)  # a bad layout option fails now, not at execution
        with self._lock(opts):  # one plan at a time: no two plans take the same file group
            timeline = self._settled_timeline(opts)
            view = FileSystemView(self.storage, timeline)
            held = set(view.pending_compactions) | pending_clustering_file_groups(timeline)
            plan = plan_clustering(view.latest_slices(), held, settings, datetime.now().hour)
            if plan is None:
                return None
            instant_time = timeline.new_instant_time()
            timeline.create_requested(
                REPLACE_COMMIT, instant_time, plan.to_requested_bytes(self.storage)
            )
        return instant_time

    def _refuse_bucket_index(self, opts: Options) -> None:
        if opts.get_option(I.INDEX_TYPE) == "BUCKET":
            raise ServiceError(
                f"table {self.config.name} uses the bucket index, whose file groups are its "
                "buckets; clustering would move rows into file groups of other ids (Apache "
                "Hudi clusters such tables only with the consistent-hashing engine)"
            )

    # ---- execution

    def _check_plan(self, timeline: ActiveTimeline, instant_time: str) -> None:
        _plan_at(timeline, instant_time)

    def _job(self, timeline: ActiveTimeline, instant_time: str, opts: Options) -> CommitMetadata:
        plan = _without_replaced(_plan_at(timeline, instant_time), timeline)
        data_schema = latest_table_schema(timeline, self.config)
        metadata = CommitMetadata(
            operation_type=CLUSTER_OPERATION,
            partition_to_replace_file_ids=_replaced(plan),
        )
        metadata.extra_metadata.update(plan.extra_metadata)
        metadata.extra_metadata.update(commit_extra_metadata(opts))
        if data_schema is None:
            return metadata
        schema_json = arrow_to_avro_json(data_schema, self.config.name, False)
        metadata.extra_metadata[CommitMetadata.SCHEMA_KEY] = schema_json
        settings = write_settings(
            self.storage,
            self.config,
            opts,
            instant_time,
            data_schema,
            merger_for(opts, self.config.precombine_field),
            key_generator_for(opts),
            opts.get_option(K.TARGET_FILE_MAX_BYTES),
            opts.get_option(W.RECORD_SIZE_ESTIMATE),
        )
        layout = Layout.of(plan, opts)
        instants = InstantFilter.of(timeline, as_of=instant_time)
        tasks, first_task = [], 0
        for group in plan.groups:
            tasks.append(
                ClusterTask(
                    first_task,
                    group,
                    instants,
                    layout,
                    plan.preserve_hoodie_metadata,
                    opts.get_option(C.MEMORY),
                    opts.get_option(R.SPILL_PATH),
                )
            )
            first_task += group.num_output_file_groups
        run = functools.partial(run_cluster_task, settings=settings)
        for stats in self.engine.map(run, tasks):
            for stat in stats:
                metadata.add(stat)
        return metadata

    def _check_no_conflicts(
        self,
        started_from: ActiveTimeline,
        current: ActiveTimeline,
        instant_time: str,
        metadata: CommitMetadata,
    ) -> None:
        """An instant completed since the run began that changed or replaced an input file
        group (an overwrite, say) would have its change undone by this replacement."""
        try:
            check_no_conflicts(started_from, current, instant_time, metadata.replaced_file_ids())
        except WriteConflictError as conflict:
            raise WriteConflictError(
                f"clustering {instant_time} is rolled back: {conflict}. Its plan stays pending; "
                "running it again leaves out the file groups replaced meanwhile"
            ) from conflict


@dataclass(frozen=True)
class Layout:
    """How a group's rows are ordered: by the plan's sort columns, along the chosen curve."""

    sort_columns: tuple[str, ...]
    strategy: str = "linear"
    build: str = "direct"
    sample_size: int = 200_000

    @classmethod
    def of(cls, plan: ClusteringPlan, opts: Options) -> Layout:
        columns = plan.strategy_params.get(SORT_COLUMNS_PARAM, "")
        return cls(
            tuple(parse_list(columns)),
            opts.get_option(K.LAYOUT_STRATEGY).lower(),
            opts.get_option(K.CURVE_BUILD_METHOD).lower(),
            opts.get_option(K.CURVE_SAMPLE_SIZE),
        )

    def order(self, rows: pa.Table) -> pa.Table:
        if not self.sort_columns or rows.num_rows < 2:
            return rows
        indices = curve_order(rows, self.sort_columns, self.strategy, self.build, self.sample_size)
        return rows.take(indices)


@dataclass
class ClusterTask:
    """Rewrites one input group into its planned number of new file groups."""

    first_task_id: int  # output file k is written as task first_task_id + k
    group: ClusteringGroup
    instants: InstantFilter  # log blocks of completed instants up to the clustering
    layout: Layout
    preserve_commit_metadata: bool
    memory_budget: int
    spill_path: str | None

    def run(self, settings: WriteSettings) -> list[WriteStat]:
        started = time.monotonic()
        partitions = {s.partition_path for s in self.group.slices}
        if len(partitions) != 1:
            raise ServiceError(
                f"a clustering group spans partitions {sorted(partitions)}; each group must "
                "rewrite the file groups of one partition"
            )
        rows = self.layout.order(self._rows(settings))
        scanned = time.monotonic()
        partition = partitions.pop()
        stats = []
        for k, piece in enumerate(_pieces(rows, self.group.num_output_file_groups)):
            stats.append(self._write(settings, self.first_task_id + k, partition, piece))
        for stat in stats:
            stat.runtime_stats = RuntimeStats(
                total_scan_time=int((scanned - started) * 1000),
                total_create_time=int((time.monotonic() - scanned) * 1000),
            )
        return stats

    def _rows(self, settings: WriteSettings) -> pa.Table:
        """Every row of the group's slices (merged with their logs) in the merged schema."""
        schema = merged_slice_schema(settings)
        parts = []
        for planned in self.group.slices:
            file_slice = with_bootstrap_source(
                settings.storage, planned.file_slice(settings.storage)
            )
            merger = SliceMerger(
                settings.storage,
                schema,
                settings.merger,
                self.memory_budget,
                self.spill_path,
                key_generator=None if settings.populate_meta_fields else settings.key_generator,
            )
            log = SliceLog.scan(settings.storage, file_slice, self.instants)
            parts += [rows for rows in merger.merge(file_slice, log) if rows.num_rows]
        return pa.concat_tables(parts) if parts else schema.empty_table()

    def _write(
        self, settings: WriteSettings, task_id: int, partition: str, rows: pa.Table
    ) -> WriteStat:
        file_id = new_file_id()
        path = new_file_path(settings, task_id, partition, file_id)
        stored = as_rows_of(rows, path, settings)
        if settings.populate_meta_fields and not self.preserve_commit_metadata:
            stored = _stamped(stored, settings.instant_time, task_id)
        writer = open_writer(settings, path, "CREATE")
        writer.write(stored)
        written = writer.close()
        return WriteStat(
            file_id=file_id,
            partition_path=partition,
            path=written.path,
            prev_commit=NULL_COMMIT,
            num_writes=written.num_rows,
            num_inserts=written.num_rows,
            total_write_bytes=written.size,
            file_size_in_bytes=written.size,
        )


def _pieces(rows: pa.Table, count: int) -> list[pa.Table]:
    """`rows` cut into `count` consecutive pieces of (nearly) equal size; none empty."""
    count = max(1, min(count, rows.num_rows))
    bounds = np.linspace(0, rows.num_rows, count + 1).astype(np.int64)
    return [rows.slice(a, b - a) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _stamped(rows: pa.Table, instant_time: str, task_id: int) -> pa.Table:
    """Rows as written by the clustering itself (hoodie.clustering.preserve.commit.metadata
    off): its commit time and sequence numbers."""
    n = rows.num_rows
    for name, column in (
        (COMMIT_TIME_FIELD, constant_strings(instant_time, n)),
        (COMMIT_SEQNO_FIELD, numbered_strings(f"{instant_time}_{task_id}_", n)),
    ):
        index = rows.schema.get_field_index(name)
        rows = rows.set_column(index, rows.schema.field(index), column)
    return rows


def _plan_at(timeline: ActiveTimeline, instant_time: str) -> ClusteringPlan:
    plan = clustering_plan(timeline, instant_time)
    if plan is None:
        raise ServiceError(f"there is no clustering planned at {instant_time}")
    return plan


def _without_replaced(plan: ClusteringPlan, timeline: ActiveTimeline) -> ClusteringPlan:
    """The plan less the input file groups a completed replacecommit (an overwrite made after
    the plan) replaced: their rows are gone and must stay gone. Groups left with no slice are
    dropped; the plan may end up with none."""
    replaced: set[tuple[str, str]] = set()
    for instant in timeline.completed([REPLACE_COMMIT]):
        metadata = CommitMetadata.from_json_bytes(timeline.read_bytes(instant))
        replaced |= metadata.replaced_file_ids()
    if not replaced & plan.file_groups():
        return plan
    groups = []
    for group in plan.groups:
        kept = tuple(s for s in group.slices if s.file_group not in replaced)
        if kept:
            groups.append(replace(group, slices=kept))
    return replace(plan, groups=groups)


def _replaced(plan: ClusteringPlan) -> dict[str, list[str]]:
    replaced: dict[str, list[str]] = {}
    for partition, file_id in sorted(plan.file_groups()):
        replaced.setdefault(partition, []).append(file_id)
    return replaced


def run_cluster_task(task: ClusterTask, settings: WriteSettings) -> list[WriteStat]:
    return task.run(settings)


def clustering_due(timeline: ActiveTimeline, max_commits: int) -> bool:
    """Inline clustering's trigger, as Apache Hudi counts: at least `max_commits` completed
    writes since the last clustering (planned or done), or since the timeline began."""
    clusterings = [
        i.timestamp
        for i in timeline.instants
        if i.action == REPLACE_COMMIT and clustering_plan(timeline, i.timestamp) is not None
    ]
    last = clusterings[-1] if clusterings else ""
    return sum(1 for w in timeline.completed_writes() if w.timestamp > last) >= max_commits
