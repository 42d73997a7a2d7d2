"""The view's rows for instants: when each state was reached (UTC), how long each step took,
what a completed write did (its commit's totals), whether it is a compaction, and the
Airflow task that made it.

The state times are the timeline files' modification times (`TableInspector.timeline`), as
Apache Hudi's timeline tells them for table version 6, whose instant files carry no
completion time of their own. Times of the timeline (in its zone, UTC or local) are shown in
UTC. A bootstrap's instants are no dates: they are labelled for what they are (`label`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hudi_airflow.ui.airflow_links import made_by
from hudi_core.errors import HudiError
from hudi_core.inspect import CommitInfo, InstantInfo, TableInspector
from hudi_core.timeline import (
    FULL_BOOTSTRAP_INSTANT,
    METADATA_BOOTSTRAP_INSTANT,
    parse_instant_time,
)

COMPACT_OPERATION = "COMPACT"
COMMIT, COMPACTION = "commit", "compaction"  # the timeline's action names
# How the view names a bootstrap's fixed instants in place of a time.
BOOTSTRAP_LABELS = {
    METADATA_BOOTSTRAP_INSTANT: "bootstrap (metadata only)",
    FULL_BOOTSTRAP_INSTANT: "bootstrap (full record)",
}


@dataclass
class WriteStats:
    """What a completed write (or compaction) did, from its commit metadata."""

    operation: str
    partitions: int
    files_added: int
    files_updated: int
    rows_inserted: int
    rows_updated: int
    rows_deleted: int
    rows_written: int
    bytes_written: int
    errors: int
    log_records_compacted: int

    @classmethod
    def of(cls, commit: CommitInfo) -> WriteStats:
        totals = commit.totals
        return cls(
            commit.operation_type,
            len(commit.partitions),
            totals.files_added,
            totals.files_updated,
            totals.rows_inserted,
            totals.rows_updated,
            totals.rows_deleted,
            totals.rows_written,
            totals.bytes_written,
            totals.errors,
            totals.log_records_compacted,
        )


@dataclass
class AirflowLink:
    dag_id: str
    run_id: str
    task_id: str
    path: str  # the task instance's page, relative to the Airflow UI's root


@dataclass
class InstantRow:
    timestamp: str
    action: str
    state: str  # REQUESTED, INFLIGHT or COMPLETED
    compaction: bool  # planned, running, or completed (as a commit) compaction
    time_utc: str | None  # the instant time itself, in UTC
    label: str | None = None  # what an instant time that is no date stands for (bootstrap)
    requested_at: str | None = None  # when each state was reached, UTC (ISO 8601)
    inflight_at: str | None = None
    completed_at: str | None = None
    queued_s: float | None = None  # requested -> inflight
    ran_s: float | None = None  # inflight -> completed
    total_s: float | None = None  # requested -> completed
    stats: WriteStats | None = None
    airflow: AirflowLink | None = None
    problem: str | None = None  # why its commit metadata could not be read


def instant_rows(
    inspector: TableInspector, instants: tuple[InstantInfo, ...], options: Mapping[str, Any]
) -> list[InstantRow]:
    """A row per instant; completed writes read their commit metadata."""
    zone = inspector.config.timeline_timezone
    return [_row(inspector, info, zone, options) for info in instants]


def archived_rows(instants: tuple[InstantInfo, ...], zone: str) -> list[InstantRow]:
    """Rows of archived instants: their times only (their metadata stays in the archive)."""
    return [_timed(info, zone, compaction=info.action == COMPACTION) for info in instants]


def _row(
    inspector: TableInspector, info: InstantInfo, zone: str, options: Mapping[str, Any]
) -> InstantRow:
    row = _timed(info, zone, compaction=info.action == COMPACTION)
    if not (info.is_write and info.is_completed):
        return row
    try:
        commit = inspector.commit(info.timestamp)
    except HudiError as exc:
        row.problem = f"cannot read its commit metadata: {exc}"
        return row
    row.stats = WriteStats.of(commit)
    row.compaction = info.action == COMMIT and (
        commit.compacted or commit.operation_type == COMPACT_OPERATION
    )
    task = made_by(commit.extra_metadata, options)
    if task is not None:
        row.airflow = AirflowLink(task.dag_id, task.run_id, task.task_id, task.path)
    return row


def _timed(info: InstantInfo, zone: str, compaction: bool) -> InstantRow:
    requested, inflight, completed = info.requested_time, info.inflight_time, info.completed_time
    return InstantRow(
        timestamp=info.timestamp,
        action=info.action,
        state=info.state,
        compaction=compaction,
        time_utc=utc_text(info.timestamp, zone),
        label=instant_label(info.timestamp),
        requested_at=utc_text(requested, zone),
        inflight_at=utc_text(inflight, zone),
        completed_at=utc_text(completed, zone),
        queued_s=seconds_between(requested, inflight),
        ran_s=seconds_between(inflight, completed),
        total_s=seconds_between(requested, completed),
    )


def instant_label(timestamp: str) -> str | None:
    """'bootstrap (metadata only)' for 00000000000001, 'bootstrap (full record)' for
    00000000000002; None for an instant time that is a date."""
    return BOOTSTRAP_LABELS.get(timestamp)


def _moment(timeline_time: str, zone: str) -> datetime:
    """A yyyyMMddHHmmss[SSS] time of a timeline in `zone` (UTC or local), as aware UTC."""
    moment = parse_instant_time(timeline_time)
    aware = moment.replace(tzinfo=UTC) if zone == "UTC" else moment.astimezone()
    return aware.astimezone(UTC)


def utc_text(timeline_time: str | None, zone: str) -> str | None:
    """'2024-01-05T10:30:00.123Z'; None for no time, or one that is no date (bootstrap)."""
    if timeline_time is None:
        return None
    try:
        moment = _moment(timeline_time, zone)
    except ValueError:
        return None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def age_seconds(timeline_time: str, zone: str, now: datetime) -> float | None:
    """Seconds from a timeline time to `now` (aware); None if it is no date."""
    try:
        return max(0.0, (now - _moment(timeline_time, zone)).total_seconds())
    except ValueError:
        return None


def seconds_between(earlier: str | None, later: str | None) -> float | None:
    """Seconds between two times of one timeline (same zone), to the millisecond."""
    if earlier is None or later is None:
        return None
    try:
        delta = parse_instant_time(later) - parse_instant_time(earlier)
    except ValueError:
        return None
    return max(0.0, round(delta.total_seconds(), 3))
