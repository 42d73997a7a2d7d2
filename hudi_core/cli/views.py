"""The read-only commands: what `table.inspect` answers, shaped for operators."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

from hudi_core.cli.output import Output, age_seconds, utc_time
from hudi_core.errors import TimelineError
from hudi_core.inspect import CompactionInfo, InstantInfo, TableInspector
from hudi_core.model.compaction_plan import read_plan
from hudi_core.table import HudiTable
from hudi_core.timeline import ActiveTimeline
from hudi_core.timeline.instant import COMMIT

TIMELINE_COLUMNS = ("instant", "action", "state", "requested", "inflight", "completed")
COMMIT_COLUMNS = (
    "instant",
    "action",
    "operation",
    "rows_inserted",
    "rows_updated",
    "rows_deleted",
    "rows_written",
    "files_added",
    "files_updated",
    "bytes_written",
)
COMPACTION_COLUMNS = ("instant", "state", "age_s", "file_groups", "log_files", "log_bytes")
FSVIEW_COLUMNS = (
    "partition",
    "file_id",
    "base_instant",
    "base_file_size",
    "log_files",
    "log_bytes",
    "slices",
    "pending_compaction",
)


def timeline_show(table: HudiTable, archived: bool) -> Output:
    inspector = table.inspect
    instants = inspector.archived_timeline() if archived else inspector.timeline()
    rows = [_instant(i, table.config.timeline_timezone) for i in instants]
    return Output(rows, TIMELINE_COLUMNS, rows)


def commits_show(table: HudiTable, limit: int) -> Output:
    """The latest completed writes (compactions included), newest first."""
    inspector = table.inspect
    writes = [i for i in inspector.timeline() if i.is_write and i.is_completed]
    rows = []
    for info in list(reversed(writes))[:limit]:
        commit = inspector.commit(info.timestamp)
        rows.append(
            {
                "instant": info.timestamp,
                "action": info.action,
                "operation": commit.operation_type,
                **commit.totals.to_json(),
            }
        )
    return Output(rows, COMMIT_COLUMNS, rows)


def compactions_show(table: HudiTable) -> Output:
    """Pending compactions, then those completed on the active timeline, oldest first."""
    inspector = table.inspect
    zone = table.config.timeline_timezone
    timeline = ActiveTimeline.load(table.storage, zone)
    now = datetime.now(UTC)
    found = list(inspector.pending_compactions())
    found += [c for i in inspector.timeline() if (c := _completed(inspector, i)) is not None]
    rows = [_compaction(c, timeline, zone, now) for c in found]
    return Output(rows, COMPACTION_COLUMNS, rows)


def fsview_latest(table: HudiTable, partition: str | None) -> Output:
    """Every file group and the slice a snapshot query reads from it."""
    rows = []
    for group in table.inspect.file_groups(partition):
        latest = group.latest
        base = latest.base_file if latest is not None else None
        rows.append(
            {
                "partition": group.partition,
                "file_id": group.file_id,
                "base_instant": latest.base_instant_time if latest is not None else None,
                "base_file": base.path if base is not None else None,
                "base_file_size": base.size if base is not None else 0,
                "log_files": latest.log_files if latest is not None else 0,
                "log_bytes": latest.log_bytes if latest is not None else 0,
                "slices": len(group.slices),
                "replaced": group.replaced,
                "pending_compaction": group.pending_compaction,
                "pending_clustering": group.pending_clustering,
            }
        )
    return Output(rows, FSVIEW_COLUMNS, rows)


def stats(table: HudiTable) -> Output:
    """A summary: partitions, file groups, data files and their bytes, instants by action."""
    inspector = table.inspect
    groups = inspector.file_groups()
    slices = [s for g in groups for s in g.slices]
    base_files = [s.base_file for s in slices if s.base_file is not None]
    summary: dict[str, Any] = {
        "table": table.name,
        "table_type": str(table.table_type),
        "base_path": str(table.storage.base_uri),
        "partitions": len(inspector.partitions()),
        "file_groups": len(groups),
        "file_slices": len(slices),
        "base_files": len(base_files),
        "log_files": sum(s.log_files for s in slices),
        "bytes": sum(b.size for b in base_files) + sum(s.log_bytes for s in slices),
        "instants": dict(sorted(Counter(i.action for i in inspector.timeline()).items())),
        "archived_instants": len(inspector.archived_timeline()),
        "pending_compactions": len(inspector.pending_compactions()),
    }
    rows = [{"key": k, "value": _flat(v)} for k, v in summary.items()]
    return Output(summary, ("key", "value"), rows)


def _instant(info: InstantInfo, zone: str) -> dict[str, Any]:
    return {
        "instant": info.timestamp,
        "action": info.action,
        "state": info.state,
        "requested": utc_time(info.requested_time, zone),
        "inflight": utc_time(info.inflight_time, zone),
        "completed": utc_time(info.completed_time, zone),
    }


def _completed(inspector: TableInspector, info: InstantInfo) -> CompactionInfo | None:
    """The compaction a completed commit finished, if it was one (a commit files no
    compaction plan otherwise)."""
    if info.action != COMMIT or not info.is_completed:
        return None
    try:
        return inspector.compaction(info.timestamp)
    except TimelineError:
        return None


def _compaction(
    compaction: CompactionInfo, timeline: ActiveTimeline, zone: str, now: datetime
) -> dict[str, Any]:
    info = compaction.instant
    plan = read_plan(timeline, info.timestamp)
    pending = info.action != COMMIT
    return {
        "instant": info.timestamp,
        "state": info.state if pending else "COMPLETED",
        "age_s": age_seconds(info.timestamp, zone, now),
        "file_groups": len(compaction.file_groups),
        "log_files": compaction.log_files,
        # What the plan merges: the log bytes it recorded for each slice when scheduled.
        "log_bytes": int(sum(op.metrics.get("TOTAL_LOG_FILES_SIZE", 0) for op in plan.operations)),
        "requested": utc_time(info.requested_time, zone),
        "completed": utc_time(info.completed_time, zone),
        "partitions": sorted({g.partition for g in compaction.file_groups}),
    }


def _flat(value: Any) -> Any:
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "-"
    return value
