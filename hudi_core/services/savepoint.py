"""Savepoints and restore.

A savepoint (`<commit time>.savepoint`, Avro HoodieSavepointMetadata) pins the files a
snapshot as of a commit reads: the cleaner keeps them and archival stops before the
savepoint. Restore takes the table back to a savepoint: it plans (`<ts>.restore.requested`,
HoodieRestorePlan) to roll back every instant after it, newest first, rolls each back, and
records all of it in HoodieRestoreMetadata (`<ts>.restore`); the rollback instants it used are
then removed, as Apache Hudi leaves only the restore on the timeline. A restore cut off midway
is finished by running it again.

A savepoint cut off before it completed leaves `<commit time>.savepoint.inflight`: readers and
the cleaner ignore it, archival stops before its commit, savepointing that commit again
completes it and delete_savepoint removes it.
"""

from __future__ import annotations

import getpass
import logging
import time
from typing import Any

from hudi_core.errors import ServiceError
from hudi_core.read.file_system_view import FileSystemView, clustering_plan
from hudi_core.services.retention import last_clean_retained
from hudi_core.services.rollback import RollbackPlan, resume_rollback, rollback_instant
from hudi_core.storage import Storage
from hudi_core.timeline import ActiveTimeline, Instant, State, avro_metadata
from hudi_core.timeline.instant import (
    COMPACTION,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    RESTORE,
    ROLLBACK,
    SAVEPOINT,
    WRITE_ACTIONS,
)

_LOG = logging.getLogger(__name__)
# What a restore rolls back: every write and compaction after the savepoint, in any state.
_RESTORED_ACTIONS = (*WRITE_ACTIONS, COMPACTION, LOG_COMPACTION)


def require_no_restore_in_progress(timeline: ActiveTimeline, what: str) -> None:
    """Nothing may change the table while a restore is cut off midway: its plan is fixed, so
    what came after it would survive the restore's re-run on top of rolled-back data."""
    restoring = timeline.pending([RESTORE])
    if restoring:
        raise ServiceError(
            f"cannot {what}: a restore ({restoring[0].timestamp}) is in progress; run the "
            "restore again to finish it"
        )


def create_savepoint(
    storage: Storage, timeline: ActiveTimeline, instant_time: str, comment: str = ""
) -> str:
    """Savepoints the completed write at `instant_time`; returns that time."""
    # its commit may be one the restore is rolling back
    require_no_restore_in_progress(timeline, f"savepoint {instant_time}")
    # A savepoint cut off before it completed left its inflight file: finish that one.
    cut_off = [i for i in timeline.pending([SAVEPOINT]) if i.timestamp == instant_time]
    left = (
        f"; the savepoint of it cut off before it completed cannot be finished: remove it "
        f"with delete_savepoint({instant_time!r})"
        if cut_off
        else ""
    )
    target = timeline.find(instant_time)
    if target is None or not target.is_completed or target.action not in WRITE_ACTIONS:
        raise ServiceError(
            f"cannot savepoint {instant_time}: it is not a completed commit on the active "
            f"timeline{left}"
        )
    if any(s.timestamp == instant_time for s in timeline.savepoints()):
        raise ServiceError(f"{instant_time} is already savepointed")
    first = timeline.completed_writes()[0].timestamp
    retained_from = last_clean_retained(timeline) or first
    if instant_time < retained_from:
        raise ServiceError(
            f"cannot savepoint {instant_time}: the cleaner retains commits from "
            f"{retained_from} on, older file versions may be gone{left}"
        )
    metadata = {
        "savepointedBy": _user(),
        "savepointedAt": int(time.time() * 1000),
        "comments": comment,
        "partitionMetadata": _savepointed_files(storage, timeline, instant_time),
        "version": 1,
    }
    inflight = cut_off[0] if cut_off else timeline.create_inflight(SAVEPOINT, instant_time)
    data = avro_metadata.serialize("HoodieSavepointMetadata", metadata)
    timeline.transition(inflight, State.COMPLETED, data)
    return instant_time


def _savepointed_files(
    storage: Storage, timeline: ActiveTimeline, instant_time: str
) -> dict[str, Any]:
    """Per partition, the names of the files a snapshot as of the instant reads."""
    view = FileSystemView(storage, timeline, as_of=instant_time)
    partitions: dict[str, dict[str, Any]] = {
        partition: {"partitionPath": partition, "savepointDataFile": []}
        for partition, _ in view.file_groups
    }
    for file_slice in view.latest_slices():
        names = partitions[file_slice.partition_path]["savepointDataFile"]
        if file_slice.base_file is not None:
            names.append(file_slice.base_file.name)
        names.extend(f.name for f in file_slice.log_files)
    return partitions


def delete_savepoint(timeline: ActiveTimeline, instant_time: str) -> None:
    """Removes the savepoint at `instant_time`, completed or cut off before it completed."""
    # finishing the restore needs its savepoint
    require_no_restore_in_progress(timeline, f"delete savepoint {instant_time}")
    savepoint = next(
        (i for i in timeline.instants if i.action == SAVEPOINT and i.timestamp == instant_time),
        None,
    )
    if savepoint is None:
        raise ServiceError(f"there is no savepoint at {instant_time}")
    timeline.delete_instant(savepoint)


def restore(storage: Storage, timeline: ActiveTimeline, savepoint_time: str) -> str:
    """Rolls the table back to the savepoint at `savepoint_time`; returns the restore's time."""
    if not any(s.timestamp == savepoint_time for s in timeline.savepoints()):
        raise ServiceError(f"there is no savepoint at {savepoint_time} to restore to")
    later = [s.timestamp for s in timeline.savepoints() if s.timestamp > savepoint_time]
    if later:  # its commit would be rolled back, leaving the savepoint pinning nothing
        raise ServiceError(
            f"savepoint {later[0]} is after {savepoint_time}; delete it before restoring"
        )
    pending = _pending_restore(timeline, savepoint_time)
    if pending is None:
        restore_time = timeline.new_instant_time()
        plan = _restore_plan(timeline, savepoint_time)
        pending = timeline.create_requested(RESTORE, restore_time, plan)
    requested = Instant(pending.timestamp, RESTORE, State.REQUESTED)
    record = avro_metadata.deserialize(timeline.read_bytes(requested))
    if pending.state is State.REQUESTED:
        pending = timeline.transition(pending, State.INFLIGHT)
    started = time.monotonic()
    targets = [
        Instant(i["commitTime"], i["action"], State.COMPLETED) for i in record["instantsToRollback"]
    ]
    rollbacks = {}
    for target in targets:
        rollbacks[target.timestamp] = _roll_back_for_restore(
            storage, timeline.reload(), target, pending.timestamp
        )
    metadata = {
        "startRestoreTime": pending.timestamp,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "instantsToRollback": [t.timestamp for t in targets],
        "hoodieRestoreMetadata": {ts: [m] for ts, m in rollbacks.items() if m is not None},
        "version": 1,
        "restoreInstantInfo": [{"commitTime": t.timestamp, "action": t.action} for t in targets],
    }
    timeline = timeline.reload()
    timeline.transition(
        pending, State.COMPLETED, avro_metadata.serialize("HoodieRestoreMetadata", metadata)
    )
    for rollback in _rollbacks_since(timeline.reload(), pending.timestamp):
        timeline.delete_instant(rollback)  # the restore's rollbacks live on in it only
    return pending.timestamp


def _pending_restore(timeline: ActiveTimeline, savepoint_time: str) -> Instant | None:
    for pending in timeline.pending([RESTORE]):
        requested = Instant(pending.timestamp, RESTORE, State.REQUESTED)
        plan = avro_metadata.deserialize(timeline.read_bytes(requested))
        if plan.get("savepointToRestoreTimestamp") in (None, savepoint_time):
            return pending
        raise ServiceError(
            f"restore {pending.timestamp} to savepoint {plan['savepointToRestoreTimestamp']} "
            "is in progress; finish it first"
        )
    return None


def _restore_plan(timeline: ActiveTimeline, savepoint_time: str) -> bytes:
    """Pending clustering after the savepoint first, then every later write instant, newest
    first."""
    later = [
        i
        for i in reversed(timeline.instants)
        if i.timestamp > savepoint_time and i.action in _RESTORED_ACTIONS
    ]
    clustering = [
        i
        for i in later
        if i.action == REPLACE_COMMIT
        and not i.is_completed
        and clustering_plan(timeline, i.timestamp) is not None
    ]
    ordered = clustering + [i for i in later if i not in clustering]
    return avro_metadata.serialize(
        "HoodieRestorePlan",
        {
            "instantsToRollback": [
                {"commitTime": i.timestamp, "action": i.action} for i in ordered
            ],
            "version": 2,
            "savepointToRestoreTimestamp": savepoint_time,
        },
    )


def _roll_back_for_restore(
    storage: Storage, timeline: ActiveTimeline, target: Instant, restore_time: str
) -> dict[str, Any] | None:
    """Rolls back one instant of a restore (resuming a rollback of it an earlier run of this
    restore began); returns its rollback metadata, None if an earlier run left none."""
    for rollback in _rollbacks_since(timeline, restore_time):
        if _target_of(timeline, rollback) == target.timestamp:
            if not rollback.is_completed:
                rollback = resume_rollback(storage, timeline, rollback)
            return avro_metadata.deserialize(timeline.reload().read_bytes(rollback))
    current = timeline.find(target.timestamp)
    if current is None:
        return None  # rolled back by an earlier run whose rollback instant is gone
    _LOG.info("restore: rolling back %s", current)
    done = rollback_instant(storage, timeline, current, keep_plan=False)
    return avro_metadata.deserialize(timeline.reload().read_bytes(done))


def _rollbacks_since(timeline: ActiveTimeline, restore_time: str) -> list[Instant]:
    """The rollbacks a restore started at `restore_time` made."""
    return [i for i in timeline.instants if i.action == ROLLBACK and i.timestamp > restore_time]


def _target_of(timeline: ActiveTimeline, rollback: Instant) -> str:
    requested = Instant(rollback.timestamp, ROLLBACK, State.REQUESTED)
    return RollbackPlan.from_avro(
        timeline.storage, timeline.read_bytes(requested)
    ).instant.timestamp


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
