"""What the timeline says must be kept: files pinned by savepoints, and the earliest commit
the last clean retained (older file slices may be gone, so nothing may depend on them)."""

from __future__ import annotations

from hudi_core.timeline import ActiveTimeline, Instant, State, avro_metadata
from hudi_core.timeline.instant import CLEAN


def savepointed_files(timeline: ActiveTimeline) -> set[str]:
    """Names of the data files every completed savepoint pins."""
    names: set[str] = set()
    for savepoint in timeline.savepoints():
        metadata = avro_metadata.deserialize(timeline.read_bytes(savepoint))
        for partition in (metadata.get("partitionMetadata") or {}).values():
            names.update(partition.get("savepointDataFile") or [])
    return names


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
