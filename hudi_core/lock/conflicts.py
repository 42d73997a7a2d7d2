"""Optimistic concurrency: before a write commits (under the table lock), the instants that
appeared since it started must not touch the file groups it touched.

Candidates are the writes completed since the writer loaded its timeline, and the compaction
and clustering plans scheduled since then: a log file appended to a slice that a newer
compaction plan already covers would be lost when the compaction replaces the slice. A
compaction already planned when the write started is not a candidate: the write put its logs
on the slice after it.
"""

from __future__ import annotations

from hudi_core.errors import WriteConflictError
from hudi_core.model.commit_metadata import CommitMetadata
from hudi_core.model.compaction_plan import read_plan
from hudi_core.read.file_system_view import clustering_file_groups
from hudi_core.timeline import ActiveTimeline, Instant
from hudi_core.timeline.instant import (
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    WRITE_ACTIONS,
)

FileGroupId = tuple[str, str]  # (partition path, file id)
# On a merge-on-read table a commit is a compaction's.
_APPENDS_AND_COMPACTIONS = (DELTA_COMMIT, COMMIT, COMPACTION)


def check_no_conflicts(
    started_from: ActiveTimeline,
    current: ActiveTimeline,
    instant_time: str,
    touched: set[FileGroupId],
    by_bucket: bool = False,
    non_blocking: bool = False,
) -> None:
    """Raises WriteConflictError if an instant newer than `started_from` touched any of
    `touched`, the file groups the write at `instant_time` changed. `by_bucket` (the bucket
    index): file groups of one bucket conflict even with different file ids, as two writers
    that both made a bucket's first file group would leave two in it. `non_blocking`
    (non-blocking concurrency control, whose writes only append logs): other appends and
    compactions are no conflict, the commit places its logs after theirs (write.log_placement);
    replacements (clustering, overwrites) still are."""
    if not touched:
        return
    same = _bucket_of if by_bucket else _itself
    mine = {same(group): group for group in touched}
    for other in _candidates(started_from, current, instant_time):
        if non_blocking and other.action in _APPENDS_AND_COMPACTIONS:
            continue
        theirs = {same(group) for group in file_groups_of(current, other)}
        overlap = {mine[key] for key in mine.keys() & theirs}
        if overlap:
            shown = ", ".join(f"{p or '(no partition)'}/{f}" for p, f in sorted(overlap)[:3])
            more = f" and {len(overlap) - 3} more" if len(overlap) > 3 else ""
            what = "completed" if other.is_completed else "was planned"
            raise WriteConflictError(
                f"write {instant_time} conflicts with {other.action} {other.timestamp}, which "
                f"{what} after the write started and changes the same file groups: "
                f"{shown}{more}; the write is rolled back, retry it"
            )


def _itself(group: FileGroupId) -> FileGroupId:
    return group


def _bucket_of(group: FileGroupId) -> FileGroupId:
    """A bucket file group as (partition, its 8-digit bucket number)."""
    partition, file_id = group
    prefix = file_id[:8]
    return (partition, prefix) if prefix.isdigit() and file_id[8:9] == "-" else group


def _candidates(
    started_from: ActiveTimeline, current: ActiveTimeline, instant_time: str
) -> list[Instant]:
    completed_before = {i.timestamp for i in started_from.completed()}
    compactions_known = {i.timestamp for i in started_from.pending([COMPACTION])}
    pending_known = {i.timestamp for i in started_from.pending()}
    candidates = [
        i
        for i in current.completed(WRITE_ACTIONS)
        if i.timestamp != instant_time
        and i.timestamp not in completed_before
        and i.timestamp not in compactions_known
    ]
    candidates += [
        i
        for i in current.pending([COMPACTION, REPLACE_COMMIT])
        if i.timestamp != instant_time and i.timestamp not in pending_known
    ]
    return candidates


def file_groups_of(timeline: ActiveTimeline, instant: Instant) -> set[FileGroupId]:
    """The file groups an instant writes (completed writes) or plans to rewrite (plans)."""
    if instant.is_completed:
        metadata = CommitMetadata.from_json_bytes(timeline.read_bytes(instant))
        written = {(s.partition_path, s.file_id) for s in metadata.write_stats() if s.file_id}
        return written | metadata.replaced_file_ids()
    if instant.action == COMPACTION:
        plan = read_plan(timeline, instant.timestamp)
        return {(op.partition_path, op.file_id) for op in plan.operations}
    return clustering_file_groups(timeline, instant.timestamp)
