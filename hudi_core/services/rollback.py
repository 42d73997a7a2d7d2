"""Rollback: undo a write that never completed, leaving the table as if it never started.

The plan (files to delete) comes from the failed write's markers, or from a listing of the
files carrying its instant time when the markers are gone. The rollback is an instant of its
own: requested (the plan) -> inflight -> completed (what was deleted), so a rollback that is
itself cut off is resumed from its plan by the next writer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from hudi_core.errors import HudiError
from hudi_core.model.file_names import BaseFileName
from hudi_core.read.file_system_view import list_table_files
from hudi_core.storage import Storage
from hudi_core.timeline import ActiveTimeline, Instant, State
from hudi_core.timeline import avro_metadata as avro
from hudi_core.timeline.instant import REPLACE_COMMIT, ROLLBACK, WRITE_ACTIONS
from hudi_core.write.markers import Markers


@dataclass
class RollbackPlan:
    instant: Instant  # the failed write
    files_by_partition: dict[str, list[str]] = field(default_factory=dict)  # relative paths

    def to_avro(self, storage: Storage) -> bytes:
        requests = [
            {
                "partitionPath": partition,
                "fileId": "",
                "latestBaseInstant": "",
                "filesToBeDeleted": [storage.uri_of(path)],
                "logBlocksToBeDeleted": {},
            }
            for partition, paths in sorted(self.files_by_partition.items())
            for path in paths
        ]
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
        record = avro.deserialize(data)
        target = record["instantToRollback"]
        plan = cls(Instant(target["commitTime"], target["action"], State.INFLIGHT))
        for request in record.get("RollbackRequests") or []:
            files = [storage.relative_of(p) for p in request.get("filesToBeDeleted") or []]
            plan.files_by_partition.setdefault(request["partitionPath"], []).extend(files)
        return plan


def rollback_failed_writes(storage: Storage, timeline: ActiveTimeline) -> ActiveTimeline:
    """Finishes cut-off rollbacks, then rolls back every write that did not complete.

    With a single writer (the EAGER failed-writes policy), any pending write is a failed one.
    Pending clustering (a replacecommit planned by a table service) is left alone.
    """
    for pending in timeline.pending([ROLLBACK]):
        resume_rollback(storage, timeline, pending)
    for failed in timeline.reload().pending(WRITE_ACTIONS):
        if not _is_pending_clustering(timeline, failed):
            rollback_instant(storage, timeline.reload(), failed)
    return timeline.reload()


def rollback_instant(storage: Storage, timeline: ActiveTimeline, failed: Instant) -> Instant:
    """Rolls back one pending write instant; returns the completed rollback instant."""
    if failed.is_completed:
        raise HudiError(f"{failed} is completed; only pending writes are rolled back here")
    plan = _plan_for(storage, failed)
    rollback_time = timeline.new_instant_time()
    requested = timeline.create_requested(ROLLBACK, rollback_time, plan.to_avro(storage))
    inflight = timeline.transition(requested, State.INFLIGHT)
    return _execute(storage, timeline, inflight, plan)


def resume_rollback(storage: Storage, timeline: ActiveTimeline, pending: Instant) -> Instant:
    """Carries a rollback that was cut off to completion from its recorded plan."""
    requested = Instant(pending.timestamp, ROLLBACK, State.REQUESTED)
    plan = RollbackPlan.from_avro(storage, timeline.read_bytes(requested))
    inflight = pending
    if pending.state is State.REQUESTED:
        inflight = timeline.transition(pending, State.INFLIGHT)
    return _execute(storage, timeline, inflight, plan)


def _plan_for(storage: Storage, failed: Instant) -> RollbackPlan:
    plan = RollbackPlan(failed)
    markers = Markers(storage, failed.timestamp)
    if markers.exist():
        paths = [marker.data_file for marker in markers.all()]
    else:  # markers lost (or never written): every file the instant may have written
        paths = _files_written_at(storage, failed.timestamp)
    for path in sorted(set(paths)):
        partition = path.rsplit("/", 1)[0] if "/" in path else ""
        plan.files_by_partition.setdefault(partition, []).append(path)
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
    partition_metadata = {}
    for partition, paths in plan.files_by_partition.items():
        deleted = [storage.uri_of(p) for p in paths if storage.delete(p)]
        partition_metadata[partition] = {
            "partitionPath": partition,
            "successDeleteFiles": deleted,
            "failedDeleteFiles": [],
            "rollbackLogFiles": {},
            "logFilesFromFailedCommit": {},
        }
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
    return completed


def _is_pending_clustering(timeline: ActiveTimeline, instant: Instant) -> bool:
    if instant.action != REPLACE_COMMIT:
        return False
    requested = Instant(instant.timestamp, REPLACE_COMMIT, State.REQUESTED)
    try:
        data = timeline.read_bytes(requested)
    except FileNotFoundError:
        return False
    return bool(data) and avro.deserialize(data).get("clusteringPlan") is not None
