"""Rollback: undo a write (a failed one, or on request the latest one even if completed),
leaving the table as if it never happened.

The plan (files to delete) comes from the failed write's markers, or from a listing of the
files carrying its instant time when the markers are gone. The rollback is an instant of its
own: requested (the plan) -> inflight -> completed (what was deleted), so a rollback that is
itself cut off is resumed from its plan by the next writer.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from hudi_core.config.table_config import METAFOLDER
from hudi_core.errors import (
    CorruptFileError,
    MissingInstantFileError,
    PathOutsideTableError,
    ServiceError,
)
from hudi_core.io.log_blocks import rollback_block
from hudi_core.io.log_format import read_log_block_headers, write_log_file
from hudi_core.model.commit_metadata import NULL_COMMIT, CommitMetadata
from hudi_core.model.compaction_plan import read_plan
from hudi_core.model.file_names import BaseFileName, LogFileName, log_file_name
from hudi_core.read.file_system_view import clustering_plan, list_table_files
from hudi_core.services.heartbeat import HEARTBEAT_FOLDER, Liveness, write_is_alive
from hudi_core.storage import Storage
from hudi_core.timeline import ActiveTimeline, Instant, State
from hudi_core.timeline import avro_metadata as avro
from hudi_core.timeline.archived_timeline import read_archived_instants
from hudi_core.timeline.content import corrupt, repair_hint
from hudi_core.timeline.instant import CLEAN, COMPACTION, REPLACE_COMMIT, ROLLBACK, WRITE_ACTIONS
from hudi_core.write.markers import Markers

ROLLBACK_TOKEN = "1-0-1"  # Apache Hudi's write token for files a rollback writes
_LOG = logging.getLogger(__name__)


@dataclass
class RollbackPlan:
    """What undoing a failed write takes: base files to delete (its CREATE and MERGE markers)
    and log files to cancel with a rollback block (its APPEND markers)."""

    instant: Instant  # the failed write
    files_by_partition: dict[str, list[str]] = field(default_factory=dict)  # relative paths
    logs_by_partition: dict[str, list[str]] = field(default_factory=dict)  # relative paths
    keep_plan: bool = True  # a failed compaction or clustering attempt is retried, not dropped

    def add(self, path: str, io_type: str) -> None:
        partition = path.rsplit("/", 1)[0] if "/" in path else ""
        target = self.logs_by_partition if io_type == "APPEND" else self.files_by_partition
        target.setdefault(partition, []).append(path)

    def to_avro(self, storage: Storage) -> bytes:
        requests = [
            _request(partition, "", "", [storage.uri_of(path)], {})
            for partition, paths in sorted(self.files_by_partition.items())
            for path in paths
        ]
        for partition, paths in sorted(self.logs_by_partition.items()):
            for path in paths:
                log = LogFileName.parse(path.rsplit("/", 1)[-1])
                assert log is not None, path
                blocks = {storage.uri_of(path): 1}
                requests.append(_request(partition, log.file_id, log.base_instant_time, [], blocks))
        return avro.serialize(
            "HoodieRollbackPlan",
            {
                "instantToRollback": {
                    "commitTime": self.instant.timestamp,
                    "action": self.instant.action,
                },
                "RollbackRequests": requests,
                "version": 1,
            },
        )

    @classmethod
    def from_avro(cls, storage: Storage, data: bytes) -> RollbackPlan:
        """The plan in a rollback's requested file; a CorruptFileError naming the file when
        it cannot be read (ActiveTimeline.read_bytes tells `data` where it came from)."""
        record = avro.deserialize(data)
        try:
            target = record["instantToRollback"]
            plan = cls(Instant(target["commitTime"], target["action"], State.INFLIGHT))
            for request in record.get("RollbackRequests") or []:
                for location in request.get("filesToBeDeleted") or []:
                    plan.add(storage.relative_of(location), "CREATE")
                for location in request.get("logBlocksToBeDeleted") or {}:
                    plan.add(storage.relative_of(location), "APPEND")
        except (KeyError, TypeError, ValueError, PathOutsideTableError) as exc:
            problem = f"a rollback plan without a usable instant or file list ({exc!r})"
            raise corrupt(data, problem) from exc
        return plan


def _request(
    partition: str, file_id: str, base_instant: str, files: list[str], log_blocks: dict[str, int]
) -> dict[str, Any]:
    return {
        "partitionPath": partition,
        "fileId": file_id,
        "latestBaseInstant": base_instant,
        "filesToBeDeleted": files,
        "logBlocksToBeDeleted": log_blocks,
    }


def rollback_failed_writes(storage: Storage, timeline: ActiveTimeline) -> ActiveTimeline:
    """Finishes cut-off rollbacks, then rolls back every write that did not complete.

    With a single writer (the EAGER failed-writes policy), any pending write is a failed one.
    Pending clustering (a replacecommit planned by a table service) is left alone.
    """
    _resume_rollbacks(storage, timeline)
    for failed in timeline.reload().pending(WRITE_ACTIONS):
        if not _is_pending_clustering(timeline, failed):
            rollback_instant(storage, timeline.reload(), failed)
    return timeline.reload()


def roll_back_dead_writes(
    storage: Storage, timeline: ActiveTimeline, liveness: Liveness
) -> tuple[ActiveTimeline, list[Instant]]:
    """Finishes cut-off rollbacks, then rolls back the pending writes whose heartbeat stopped
    (their writer died). Returns the timeline after, and the writes still running."""
    _resume_rollbacks(storage, timeline)
    running = []
    for pending in timeline.reload().pending(WRITE_ACTIONS):
        if _is_pending_clustering(timeline, pending):
            continue
        if write_is_alive(storage, pending.timestamp, liveness):
            running.append(pending)
        else:
            rollback_instant(storage, timeline.reload(), pending)
    return timeline.reload(), running


def _resume_rollbacks(storage: Storage, timeline: ActiveTimeline) -> None:
    """Finishes every cut-off rollback. One whose plan cannot be read is handled as Apache
    Hudi does: still requested (nothing done yet), it is deleted, and the write it was for is
    rolled back anew as any failed write; inflight, it is left alone (its plan may have
    been needed, and what it already did cannot be known)."""
    for pending in timeline.pending([ROLLBACK]):
        try:
            plan = _rollback_plan(storage, timeline, pending)
        except CorruptFileError as exc:
            if pending.state is State.REQUESTED:
                _LOG.warning(
                    "deleting requested rollback %s, its plan is unreadable: %s", pending, exc
                )
                timeline.delete_pending(pending)
            else:
                _LOG.warning(
                    "skipping inflight rollback %s, its plan is unreadable: %s", pending, exc
                )
            continue
        _resume(storage, timeline, pending, plan)


def rollback_instant(
    storage: Storage, timeline: ActiveTimeline, target: Instant, keep_plan: bool = True
) -> Instant:
    """Rolls back one instant; returns the completed rollback instant.

    A pending write's files are found through its markers; a completed instant is unpublished
    first and its files are found by listing what its write stats name (its markers are
    gone). A compaction or clustering keeps its plan (to be run again) unless `keep_plan` is off.
    """
    plan = _plan_for_completed(storage, timeline, target) if target.is_completed else None
    plan = plan or _plan_for(storage, target)
    plan.keep_plan = keep_plan
    if target.action == COMPACTION and not keep_plan:
        _add_slice_logs(storage, timeline, target, plan)
    rollback_time = timeline.new_instant_time()
    requested = timeline.create_requested(ROLLBACK, rollback_time, plan.to_avro(storage))
    inflight = timeline.transition(requested, State.INFLIGHT)
    return _execute(storage, timeline, inflight, plan)


def rollback_latest_commit(
    storage: Storage, timeline: ActiveTimeline, instant_time: str, archive_folder: str
) -> str:
    """Rolls back a chosen write, which must be the latest one (older ones: restore to a
    savepoint); returns the rollback's instant time. A rollback of it that was cut off is
    finished instead, as Apache Hudi does: only its plan still names the logs to cancel.
    The last completed write on the active timeline is not rolled back while archived
    commits (in `archive_folder`) wrote data: see _require_commit_left."""
    begun = _pending_rollback_of(storage, timeline, instant_time)
    if begun is not None:
        return resume_rollback(storage, timeline, begun).timestamp
    target = timeline.find(instant_time)
    if target is None or target.action not in (*WRITE_ACTIONS, COMPACTION):
        raise ServiceError(f"there is no write at {instant_time} to roll back")
    if any(s.timestamp == instant_time for s in timeline.savepoints()):
        raise ServiceError(
            f"{instant_time} is savepointed; delete the savepoint before rolling it back"
        )
    later = [
        i
        for i in timeline.instants
        if i.timestamp > instant_time and i.action in (*WRITE_ACTIONS, COMPACTION)
    ]
    if later and not _droppable_broken_compaction(storage, timeline, target):
        raise ServiceError(
            f"{later[0]} came after {instant_time}; only the latest write can be rolled back "
            "(roll back the later ones first, or restore to a savepoint)"
        )
    _require_commit_left(storage, timeline, target, archive_folder)
    _require_older_versions_kept(storage, timeline, target)
    return rollback_instant(storage, timeline, target, keep_plan=False).timestamp


def _require_older_versions_kept(
    storage: Storage, timeline: ActiveTimeline, target: Instant
) -> None:
    """Refuses to roll back a completed write when the versions it relies on are gone: the
    rollback deletes what the write made, so the slice each of its writes built on (its
    prevCommit) must still be there, and the file groups it replaced untouched by the cleans
    since. A clean may have deleted them; the groups' rows would then be lost, or older rows
    (a savepointed slice, say) come back (Apache Hudi lets this rollback through; its issue
    8654)."""
    if not target.is_completed:
        return
    try:
        metadata = CommitMetadata.from_json_bytes(timeline.read_bytes(target))
    except CorruptFileError:
        return  # rolling back a damaged commit is how its error says to repair it
    built_on = {
        (stat.partition_path, stat.file_id, stat.prev_commit)
        for stat in metadata.write_stats()
        if stat.prev_commit not in ("", NULL_COMMIT)
    }
    present = {
        (partition, *file_slice)
        for partition in sorted({partition for partition, _, _ in built_on})
        for file_slice in _slices(storage, partition)
    }
    lost = sorted((p, f) for p, f, _ in built_on - present)
    lost += sorted(metadata.replaced_file_ids() & _cleaned_since(timeline, target.timestamp))
    if lost:
        partition, file_id = lost[0]
        raise ServiceError(
            f"a clean deleted files of file group {file_id} (partition {partition!r}) that "
            f"{target.timestamp} rewrote or replaced; rolling it back would lose their rows. "
            "Restore to a savepoint from before it instead"
        )


def _slices(storage: Storage, partition: str) -> set[tuple[str, str]]:
    """(file id, base instant) of the file slices whose base or log files are in a partition."""
    slices: set[tuple[str, str]] = set()
    for entry in storage.list_files(partition):
        base = BaseFileName.parse(entry.name)
        log = LogFileName.parse(entry.name)
        if base is not None:
            slices.add((base.file_id, base.instant_time))
        elif log is not None:
            slices.add((log.file_id, log.base_instant_time))
    return slices


def _cleaned_since(timeline: ActiveTimeline, instant_time: str) -> set[tuple[str, str]]:
    """(partition, file id) of every file the cleans completed after `instant_time` deleted."""
    groups: set[tuple[str, str]] = set()
    for clean in timeline.completed([CLEAN]):
        if clean.timestamp <= instant_time:
            continue
        metadata = avro.deserialize(timeline.read_bytes(clean))
        for partition, stats in (metadata.get("partitionMetadata") or {}).items():
            for name in stats.get("successDeleteFiles") or []:
                name = name.rsplit("/", 1)[-1]
                parsed = BaseFileName.parse(name) or LogFileName.parse(name)
                if parsed is not None:
                    groups.add((partition, parsed.file_id))
    return groups


def _require_commit_left(
    storage: Storage, timeline: ActiveTimeline, target: Instant, archive_folder: str
) -> None:
    """Refuses to roll back the only completed write left on the active timeline when
    archived commits came before it. Readers (Apache Hudi's, hudi-rs, ours) take a file slice
    or log block whose instant is not on the active timeline as committed only if it is older
    than the first active commit; with none left, every file the archived commits wrote
    would read as uncommitted and the table as empty (Apache Hudi lets this rollback through)."""
    if not target.is_completed:
        return
    if any(c.timestamp != target.timestamp for c in timeline.completed_writes()):
        return
    archived = [
        e.instant
        for e in read_archived_instants(storage, archive_folder)
        if e.instant.is_completed and e.instant.action in WRITE_ACTIONS
    ]
    if archived:
        raise ServiceError(
            f"{target.timestamp} is the last commit on the active timeline; rolling it back "
            f"would leave none, and readers would no longer see the data of the archived "
            f"commits before it (up to {archived[-1].timestamp})"
        )


def _droppable_broken_compaction(
    storage: Storage, timeline: ActiveTimeline, target: Instant
) -> bool:
    """Whether `target` is a pending compaction whose plan cannot be read and which no later
    write built on: it can never run, and a writer stops at it, so it may be dropped though
    later writes came. Later writes that put log files on the slice it starts need it kept
    (the logs would be read in the wrong order without it): then the plan must be restored."""
    if target.action != COMPACTION or target.is_completed:
        return False
    try:
        read_plan(timeline, target.timestamp)
        return False
    except CorruptFileError as exc:
        problem = exc
    on_its_slice = _logs_on_slices_of(storage, target.timestamp)
    if on_its_slice:
        raise ServiceError(
            f"compaction {target.timestamp} cannot be dropped: later writes put log files on "
            f"the file slices it starts (such as {on_its_slice[0]}), which need it; restore "
            f"its plan from a backup ({problem})"
        )
    _LOG.warning("dropping compaction %s, whose plan is unreadable: %s", target, problem)
    return True


def _logs_on_slices_of(storage: Storage, instant_time: str) -> list[str]:
    """Log files of the file slices that start at `instant_time`."""
    return [
        entry.path
        for entry in list_table_files(storage)
        if (log := LogFileName.parse(entry.name)) and log.base_instant_time == instant_time
    ]


def _pending_rollback_of(
    storage: Storage, timeline: ActiveTimeline, instant_time: str
) -> Instant | None:
    """The cut-off rollback of `instant_time`; rollbacks whose plan cannot be read are not
    it (a new rollback is planned instead)."""
    for pending in timeline.pending([ROLLBACK]):
        try:
            plan = _rollback_plan(storage, timeline, pending)
        except CorruptFileError as exc:
            _LOG.warning("ignoring rollback %s, its plan is unreadable: %s", pending, exc)
            continue
        if plan.instant.timestamp == instant_time:
            return pending
    return None


def _rollback_plan(storage: Storage, timeline: ActiveTimeline, pending: Instant) -> RollbackPlan:
    requested = Instant(pending.timestamp, ROLLBACK, State.REQUESTED)
    try:
        data = timeline.read_bytes(requested)
    except MissingInstantFileError as exc:
        raise MissingInstantFileError(
            f"{METAFOLDER}/{requested.file_name} does not exist, so the plan of rollback "
            f"{pending.timestamp} is lost; {repair_hint(requested)}"
        ) from exc
    return RollbackPlan.from_avro(storage, data)


def resume_rollback(storage: Storage, timeline: ActiveTimeline, pending: Instant) -> Instant:
    """Carries a rollback that was cut off to completion from its recorded plan."""
    return _resume(storage, timeline, pending, _rollback_plan(storage, timeline, pending))


def _resume(
    storage: Storage, timeline: ActiveTimeline, pending: Instant, plan: RollbackPlan
) -> Instant:
    inflight = pending
    if pending.state is State.REQUESTED:
        inflight = timeline.transition(pending, State.INFLIGHT)
    return _execute(storage, timeline, inflight, plan)


def _plan_for_completed(
    storage: Storage, timeline: ActiveTimeline, target: Instant
) -> RollbackPlan:
    """What a completed instant wrote, by listing the partitions its write stats name: base
    files of its time and log files of slices it started are deleted; its appends to older
    slices are cancelled with rollback blocks."""
    try:
        metadata = CommitMetadata.from_json_bytes(timeline.read_bytes(target))
    except CorruptFileError as exc:
        _LOG.warning(
            "finding what %s wrote by listing, its metadata is unreadable: %s", target, exc
        )
        return _plan_by_listing(storage, target)
    plan = RollbackPlan(target)
    for partition in sorted(metadata.partition_to_write_stats):
        for entry in storage.list_files(partition):
            base = BaseFileName.parse(entry.name)
            log = LogFileName.parse(entry.name)
            if (base and base.instant_time == target.timestamp) or (
                log and log.base_instant_time == target.timestamp
            ):
                plan.add(entry.path, "CREATE")
    for stat in metadata.write_stats():
        log = LogFileName.parse(stat.path.rsplit("/", 1)[-1])
        if log is not None and log.base_instant_time != target.timestamp:
            if storage.exists(stat.path):
                plan.add(stat.path, "APPEND")
    return plan


def _plan_by_listing(storage: Storage, target: Instant) -> RollbackPlan:
    """What a completed instant wrote when its commit metadata cannot be read: the files
    named with its time (base files, and the log files of slices it started) are deleted;
    log files of other slices holding blocks of its time get a rollback block."""
    plan = RollbackPlan(target)
    appended: dict[tuple[str, str, str], str] = {}  # one rollback block per slice
    for entry in sorted(list_table_files(storage), key=lambda e: e.path):
        base = BaseFileName.parse(entry.name)
        log = LogFileName.parse(entry.name)
        if base is not None and base.instant_time == target.timestamp:
            plan.add(entry.path, "CREATE")
        elif log is not None and log.base_instant_time == target.timestamp:
            plan.add(entry.path, "CREATE")
        elif log is not None and any(
            block.instant_time == target.timestamp and not block.is_rollback
            for block in read_log_block_headers(storage, entry.path)
        ):
            appended[(entry.parent, log.file_id, log.base_instant_time)] = entry.path
    for path in appended.values():
        plan.add(path, "APPEND")
    return plan


def _add_slice_logs(
    storage: Storage, timeline: ActiveTimeline, compaction: Instant, plan: RollbackPlan
) -> None:
    """A dropped compaction takes the slice it started with it: the log files written onto
    it (whose writes are rolled back before) would otherwise outlive their slice. Without a
    readable plan, every partition is looked at."""
    try:
        planned = read_plan(timeline, compaction.timestamp)
    except CorruptFileError as exc:
        _LOG.warning(
            "looking for the slices of %s everywhere, its plan is unreadable: %s", compaction, exc
        )
        for path in _logs_on_slices_of(storage, compaction.timestamp):
            plan.add(path, "CREATE")
        return
    for partition in sorted({op.partition_path for op in planned.operations}):
        for entry in storage.list_files(partition):
            log = LogFileName.parse(entry.name)
            if log and log.base_instant_time == compaction.timestamp:
                plan.add(entry.path, "CREATE")


def _plan_for(storage: Storage, failed: Instant) -> RollbackPlan:
    plan = RollbackPlan(failed)
    markers = Markers(storage, failed.timestamp)
    if markers.exist():
        found = {(marker.data_file, marker.io_type) for marker in markers.all()}
    else:  # markers lost (or never written): the base files the instant may have written;
        # its log blocks are ignored by readers anyway, their instant never completed
        found = {(path, "CREATE") for path in _files_written_at(storage, failed.timestamp)}
    for path, io_type in sorted(found):
        plan.add(path, io_type)
    return plan


def _files_written_at(storage: Storage, instant_time: str) -> list[str]:
    return [
        entry.path
        for entry in list_table_files(storage)
        if (parsed := BaseFileName.parse(entry.name)) and parsed.instant_time == instant_time
    ]


def _execute(
    storage: Storage, timeline: ActiveTimeline, inflight: Instant, plan: RollbackPlan
) -> Instant:
    started = time.monotonic()
    if timeline.find(plan.instant.timestamp) == plan.instant.with_state(State.COMPLETED):
        timeline.revert_to_inflight(plan.instant)  # readers stop seeing it before files go
    partitions = sorted(set(plan.files_by_partition) | set(plan.logs_by_partition))
    partition_metadata = {}
    for partition in partitions:
        files = plan.files_by_partition.get(partition, [])
        deleted = [storage.uri_of(p) for p in files if storage.delete(p)]
        failed_logs, rollback_logs = {}, {}
        for log_path in plan.logs_by_partition.get(partition, []):
            if storage.exists(log_path):
                failed_logs[storage.uri_of(log_path)] = storage.file_size(log_path)
                written, size = _append_rollback_block(storage, log_path, inflight, plan.instant)
                rollback_logs[storage.uri_of(written)] = size
        partition_metadata[partition] = {
            "partitionPath": partition,
            "successDeleteFiles": deleted,
            "failedDeleteFiles": [],
            "rollbackLogFiles": rollback_logs,
            "logFilesFromFailedCommit": failed_logs,
        }
    if plan.keep_plan and _is_service_plan(timeline, plan.instant):  # run again
        timeline.revert_to_requested(plan.instant)
    else:
        timeline.delete_pending(plan.instant)
    metadata = {
        "startRollbackTime": inflight.timestamp,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": sum(len(m["successDeleteFiles"]) for m in partition_metadata.values()),
        "commitsRollback": [plan.instant.timestamp],
        "partitionMetadata": partition_metadata,
        "version": 1,
        "instantsRollback": [{"commitTime": plan.instant.timestamp, "action": plan.instant.action}],
    }
    completed = timeline.transition(
        inflight, State.COMPLETED, avro.serialize("HoodieRollbackMetadata", metadata)
    )
    Markers(storage, plan.instant.timestamp).delete_all()
    storage.delete(f"{HEARTBEAT_FOLDER}/{plan.instant.timestamp}")
    return completed


def _append_rollback_block(
    storage: Storage, failed_log: str, rollback: Instant, failed: Instant
) -> tuple[str, int]:
    """Cancels the failed instant's blocks in a file group's log, as Apache Hudi does: a
    rollback block in the next log file version (storage without appends rolls over)."""
    partition, _, name = failed_log.rpartition("/")
    log = LogFileName.parse(name)
    assert log is not None, failed_log
    versions = [
        parsed.version
        for entry in storage.list_files(partition)
        if (parsed := LogFileName.parse(entry.name))
        and (parsed.file_id, parsed.base_instant_time) == (log.file_id, log.base_instant_time)
    ]
    new_name = log_file_name(log.file_id, log.base_instant_time, max(versions) + 1, ROLLBACK_TOKEN)
    path = f"{partition}/{new_name}" if partition else new_name
    size = write_log_file(storage, path, [rollback_block(rollback.timestamp, failed.timestamp)])
    return path, size


def _is_service_plan(timeline: ActiveTimeline, instant: Instant) -> bool:
    """Whether `instant` executes a table service's plan (a compaction, a clustering),
    which a failed attempt leaves to be run again."""
    return instant.action == COMPACTION or _is_pending_clustering(timeline, instant)


def _is_pending_clustering(timeline: ActiveTimeline, instant: Instant) -> bool:
    if instant.action != REPLACE_COMMIT:
        return False
    return clustering_plan(timeline, instant.timestamp) is not None
