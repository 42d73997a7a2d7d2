"""A write's instant from start to finish: requested -> inflight (the planned workload) ->
completed (the write stats), with the writer's heartbeat beating throughout.

The table lock is held while the instant is created (instant times strictly increase across
writers) and while it completes: the commit re-reads the timeline and fails cleanly if an
instant that appeared since the write started touched the same file groups.

Whatever engine runs the per-file-group tasks (threads here, Spark executors in spark_jobs),
the driver goes through one transaction. Leaving it without completing rolls the instant back
at once; a crash leaves it for the next writer (or a LAZY clean) to roll back.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

import pyarrow as pa

from hudi_core.errors import InternalError
from hudi_core.lock import TableLock
from hudi_core.lock.conflicts import check_no_conflicts
from hudi_core.lock.early_conflicts import EarlyConflictDetection
from hudi_core.model.commit_metadata import CommitMetadata, WriteStat
from hudi_core.read.file_system_view import FileSystemView
from hudi_core.schema.to_avro import arrow_to_avro_json
from hudi_core.services.heartbeat import Liveness, write_heartbeat
from hudi_core.services.rollback import rollback_instant
from hudi_core.storage import Storage
from hudi_core.table_schema import committed_schema, with_concurrent_columns
from hudi_core.timeline import ActiveTimeline, Instant, State, avro_metadata
from hudi_core.timeline.instant import REPLACE_COMMIT
from hudi_core.write.commit_extra import latest_schema_is_placeholder
from hudi_core.write.log_placement import place_logs
from hudi_core.write.markers import Markers

_LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class PlannedWork:
    """What a write plans for one file group, as the inflight file records it."""

    partition_path: str
    file_id: str
    prev_commit: str | None  # base instant of the slice it writes on; None for a new group
    inserts: int = 0
    updates: int = 0


class WriteTransaction:
    def __init__(
        self,
        storage: Storage,
        timeline: ActiveTimeline,
        requested: Instant,
        operation: str,
        table_name: str,
        lock: TableLock,
        commit_extra: Mapping[str, str] | None = None,
        conflicts_by_bucket: bool = False,
        non_blocking: bool = False,
        early_conflicts: EarlyConflictDetection | None = None,
    ) -> None:
        self.storage = storage
        self.early_conflicts = early_conflicts  # checked before tasks run; None: at commit only
        self.conflicts_by_bucket = conflicts_by_bucket  # the bucket index (see conflicts)
        self.non_blocking = non_blocking  # non-blocking concurrency control (see conflicts)
        self.timeline = timeline  # as the write found it when it started
        self.lock = lock
        self.instant_time = requested.timestamp
        self.operation = operation
        self.table_name = table_name
        self.view = FileSystemView(storage, timeline)
        # extraMetadata from the write's options (commit_extra); a write's own wins over it.
        self.commit_extra = dict(commit_extra or {})
        self._current = requested

    @property
    def completed(self) -> bool:
        return self._current.is_completed

    def start_execution(self, work: Iterable[PlannedWork]) -> None:
        """Records the plan (the inflight file); tasks may write files from now on. With early
        conflict detection, a plan that conflicts already fails here, before any marker."""
        work = list(work)
        if self.early_conflicts is not None:
            planned = {(item.partition_path, item.file_id) for item in work}
            self.early_conflicts.check(
                self.storage,
                self.timeline,
                self.instant_time,
                planned,
                self.lock,
                self.conflicts_by_bucket,
            )
        workload = _workload(work, self.operation)
        self._current = self.timeline.transition(
            self._current, State.INFLIGHT, workload.to_json_bytes()
        )

    def complete(
        self,
        stats: Iterable[WriteStat],
        data_schema: pa.Schema | None,
        replaced: dict[str, list[str]] | None = None,
        extra_metadata: Mapping[str, str] | None = None,
    ) -> None:
        """Publishes the write: readers see it from here on."""
        metadata = CommitMetadata(
            operation_type=self.operation,
            extra_metadata={**self.commit_extra, **(extra_metadata or {})},
            partition_to_replace_file_ids=replaced,
        )
        for stat in stats:
            metadata.add(stat)
        touched = {(s.partition_path, s.file_id) for s in metadata.write_stats()}
        with self.lock:
            current = self.timeline.reload()
            if data_schema is None and not latest_schema_is_placeholder(current):
                # no rows, and no schema when the write started: one committed since, else
                # the placeholder in commit_extra (see write.commit_extra)
                data_schema = committed_schema(current)
            if data_schema is not None:
                data_schema = with_concurrent_columns(data_schema, self.timeline, current)
                schema = arrow_to_avro_json(data_schema, self.table_name, False)
                metadata.extra_metadata[CommitMetadata.SCHEMA_KEY] = schema
            if self.non_blocking:
                place_logs(self.storage, current, self.instant_time, metadata.write_stats())
            check_no_conflicts(
                self.timeline,
                current,
                self.instant_time,
                touched | _replaced(replaced),
                self.conflicts_by_bucket,
                self.non_blocking,
            )
            Markers(self.storage, self.instant_time).reconcile(
                {s.path for s in metadata.write_stats()}
            )
            if data_schema is not None:
                current = self._publish_columns_a_newer_write_hides(current, data_schema)
            self.lock.require_held()
            self._current = current.transition(
                self._current, State.COMPLETED, metadata.to_json_bytes()
            )

    def _publish_columns_a_newer_write_hides(
        self, current: ActiveTimeline, data_schema: pa.Schema
    ) -> ActiveTimeline:
        """Readers (Apache Hudi's and hudi-rs's too) take the table schema from the newest
        completed write by instant time. A write that completes after a newer one (two
        streams of a wide table starting at once) would add its columns out of their sight:
        an empty commit, newer than every instant, first publishes the newest schema with
        them added. Done before this write completes, so no reader ever finds its data
        without its columns; if this write then fails, they stay as columns of nulls."""
        if not any(w.timestamp > self.instant_time for w in current.completed_writes()):
            return current
        published = None if latest_schema_is_placeholder(current) else committed_schema(current)
        known = set(published.names) if published is not None else set()
        hidden = [f.with_nullable(True) for f in data_schema if f.name not in known]
        if not hidden:
            return current
        schema = pa.schema([*(published or []), *hidden], metadata=data_schema.metadata)
        action = self._current.action
        metadata = CommitMetadata(operation_type=self.operation)
        metadata.extra_metadata[CommitMetadata.SCHEMA_KEY] = arrow_to_avro_json(
            schema, self.table_name, False
        )
        instant_time = current.new_instant_time()
        _LOG.info(
            "write %s completes after newer writes: commit %s publishes its columns %s",
            self.instant_time,
            instant_time,
            [f.name for f in hidden],
        )
        requested = current.create_requested(action, instant_time, _requested(action))
        inflight = current.transition(
            requested, State.INFLIGHT, _workload([], self.operation).to_json_bytes()
        )
        self.lock.require_held()
        current.transition(inflight, State.COMPLETED, metadata.to_json_bytes())
        return current.reload()


@contextmanager
def write_transaction(
    storage: Storage,
    timeline: ActiveTimeline,
    action: str,
    operation: str,
    table_name: str,
    liveness: Liveness,
    lock: TableLock,
    commit_extra: Mapping[str, str] | None = None,
    conflicts_by_bucket: bool = False,
    non_blocking: bool = False,
    early_conflicts: EarlyConflictDetection | None = None,
    instant_time: str | None = None,
) -> Iterator[WriteTransaction]:
    """A new write instant (at `instant_time`: a bootstrap's fixed one, else a new one); the
    block must complete it, else it is rolled back."""
    with ExitStack() as heartbeat:
        with lock:
            ordered = instant_time is None  # a bootstrap's instant precedes any other
            instant_time = instant_time or timeline.new_instant_time()
            # The heartbeat beats from before the instant exists: services tell a running
            # write from a dead one by it.
            heartbeat.enter_context(write_heartbeat(storage, instant_time, liveness))
            requested = timeline.create_requested(
                action, instant_time, _requested(action), ordered=ordered
            )
        try:
            transaction = WriteTransaction(
                storage,
                timeline,
                requested,
                operation,
                table_name,
                lock,
                commit_extra,
                conflicts_by_bucket,
                non_blocking,
                early_conflicts,
            )
            yield transaction
            if not transaction.completed:
                raise InternalError(f"write {instant_time} ended without completing")
        except BaseException as failure:
            _roll_back_after(failure, storage, timeline, instant_time, lock)
            raise
    Markers(storage, instant_time).delete_all()


def _requested(action: str) -> bytes:
    """A write's requested file: empty, but for replacecommits an all-null replace plan."""
    if action != REPLACE_COMMIT:
        return b""
    fields = ("operationType", "clusteringPlan", "extraMetadata", "version")
    empty_plan = dict.fromkeys(fields)
    return avro_metadata.serialize("HoodieRequestedReplaceMetadata", empty_plan)


def _workload(work: Iterable[PlannedWork], operation: str) -> CommitMetadata:
    """The inflight file's content: per partition the insert count, then each file group's."""
    workload = CommitMetadata(operation_type=operation)
    for item in work:
        partition = item.partition_path
        if partition not in workload.partition_to_write_stats:
            workload.add(WriteStat("", partition, ""))
        if item.prev_commit is None:
            stat = WriteStat(item.file_id, partition, "")
            stat.num_inserts = item.inserts
            workload.partition_to_write_stats[partition][0].num_inserts += item.inserts
        else:
            stat = WriteStat(item.file_id, partition, "", item.prev_commit)
            stat.num_update_writes = item.updates + item.inserts
        workload.add(stat)
    return workload


def _replaced(replaced: dict[str, list[str]] | None) -> set[tuple[str, str]]:
    return {(p, file_id) for p, file_ids in (replaced or {}).items() for file_id in file_ids}


def _roll_back_after(
    failure: BaseException,
    storage: Storage,
    timeline: ActiveTimeline,
    instant_time: str,
    lock: TableLock,
) -> None:
    """Undoes a write that failed in this process. If that fails too, the write stays pending
    for the next writer (or a LAZY clean) to roll back: the rollback's own failure is logged
    with its traceback and noted on the write's failure, which the caller sees."""
    try:
        with lock:
            current = timeline.reload()
            failed = current.find(instant_time)
            if failed is not None and not failed.is_completed:
                rollback_instant(storage, current, failed)
    except Exception as rollback_error:
        _LOG.exception("rolling back the failed write %s failed too", instant_time)
        failure.add_note(
            f"rolling back the failed write {instant_time} failed too "
            f"({type(rollback_error).__name__}: {rollback_error}); the next write rolls it back"
        )
