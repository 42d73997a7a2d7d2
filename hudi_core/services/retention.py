"""What the timeline says must be kept: files pinned by savepoints, files pending compaction
and clustering plans read, and the earliest commit the last clean retained (older file
slices may be gone, so nothing may depend on them)."""

from __future__ import annotations

from hudi_core.model.compaction_plan import read_plan
from hudi_core.read.file_system_view import clustering_plan
from hudi_core.timeline import ActiveTimeline, Instant, State, avro_metadata
from hudi_core.timeline.instant import CLEAN, COMPACTION, REPLACE_COMMIT


def savepointed_files(timeline: ActiveTimeline) -> set[str]:
    """Names of the data files every completed savepoint pins."""
    names: set[str] = set()
    for savepoint in timeline.savepoints():
        metadata = avro_metadata.deserialize(timeline.read_bytes(savepoint))
        for partition in (metadata.get("partitionMetadata") or {}).values():
            names.update(partition.get("savepointDataFile") or [])
    return names


def files_pending_plans_read(timeline: ActiveTimeline) -> set[str]:
    """Paths (relative to the base path) of the base and log files that pending compaction
    and clustering plans read: whatever happened to their file groups since (replaced by an
    insert_overwrite, say), running the plan needs them. A plan that cannot be read raises
    its CorruptFileError: nothing may be deleted on a guess of what it reads."""
    paths: set[str] = set()
    for instant in timeline.pending([COMPACTION]):
        for op in read_plan(timeline, instant.timestamp).operations:
            names = [*op.log_files] if op.base_file is None else [op.base_file, *op.log_files]
            paths.update(_in_partition(op.partition_path, name) for name in names)
    for instant in timeline.pending([REPLACE_COMMIT]):
        plan = clustering_plan(timeline, instant.timestamp)
        for group in plan.groups if plan is not None else ():
            for planned in group.slices:
                names = [*planned.log_files]
                if planned.base_file is not None:
                    names.append(planned.base_file)
                paths.update(planned.path_of(name) for name in names)
    return paths


def _in_partition(partition: str, name: str) -> str:
    return f"{partition}/{name}" if partition else name


def last_clean_retained(timeline: ActiveTimeline) -> str | None:
    """The earliest commit the latest clean kept (completed, else planned), or None if no
    clean ever bounded retention."""
    for clean in reversed(timeline.instants):
        if clean.action != CLEAN:
            continue
        if clean.is_completed:
            metadata = avro_metadata.deserialize(timeline.read_bytes(clean))
            return metadata.get("earliestCommitToRetain") or None
        requested = Instant(clean.timestamp, CLEAN, State.REQUESTED)
        plan = avro_metadata.deserialize(timeline.read_bytes(requested))
        earliest = plan.get("earliestInstantToRetain")
        return earliest["timestamp"] if earliest else None
    return None
