"""Which partitions the timeline changed after a given instant: the partitions written by
completed commits, those whose file groups a replacecommit retired (insert_overwrite,
delete_partition), and those a clean deleted."""

from __future__ import annotations

from dataclasses import dataclass, field

from hudi_core.model.commit_metadata import CommitMetadata
from hudi_core.timeline import ActiveTimeline, avro_metadata
from hudi_core.timeline.instant import CLEAN


@dataclass
class TimelineChanges:
    written: set[str] = field(default_factory=set)
    replaced: set[str] = field(default_factory=set)
    cleaned_away: set[str] = field(default_factory=set)
    newest_write: str | None = None  # the newest completed write instant, if any
    complete: bool = True  # False: instants after `since` were archived, list everything

    @property
    def touched(self) -> set[str]:
        return self.written | self.replaced | self.cleaned_away


def timeline_changes(timeline: ActiveTimeline, since: str | None) -> TimelineChanges:
    """Changes by instants completed after `since` (None: since the beginning)."""
    changes = TimelineChanges()
    writes = timeline.completed_writes()
    changes.newest_write = writes[-1].timestamp if writes else None
    start = timeline.timeline_start()
    if (
        since is not None
        and start is not None
        and since < start
        and _archived_after(since, timeline)
    ):
        changes.complete = False
    for instant in writes:
        if since is not None and instant.timestamp <= since:
            continue
        metadata = CommitMetadata.from_json_bytes(timeline.read_bytes(instant))
        changes.written.update(stat.partition_path for stat in metadata.write_stats())
        changes.replaced.update(metadata.partition_to_replace_file_ids or {})
    for clean in timeline.completed([CLEAN]):
        if since is not None and clean.timestamp <= since:
            continue
        partitions = avro_metadata.deserialize(timeline.read_bytes(clean))["partitionMetadata"]
        changes.cleaned_away.update(
            name for name, meta in (partitions or {}).items() if meta.get("isPartitionDeleted")
        )
    return changes


def _archived_after(since: str, timeline: ActiveTimeline) -> bool:
    """Whether writes after `since` may have been archived: `since` is not on the active
    timeline any more."""
    return timeline.find(since) is None


def partitions_written_since(
    timeline: ActiveTimeline, since: str | None
) -> tuple[set[str], str | None]:
    """(partitions holding data written after `since`, the newest completed write)."""
    changes = timeline_changes(timeline, since)
    return changes.written, changes.newest_write
