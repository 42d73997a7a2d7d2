"""What the Hudi view shows of a table, read with `HudiTable.inspect`: its timeline (a row
per instant: state times, durations, what it wrote, the Airflow task that made it), the
compaction backlog, the last clean, archival and the archived instants, and its files per
partition and file group, as plain dataclasses (`to_dict()` gives JSON-ready dicts), so that
it is testable without Airflow's server. Times are UTC.

Each table stands alone: a bad entry of the tables file is summarized as `invalid` with its
message, a configured table whose base path holds no table yet as `not_created`, and a table
that cannot be read as `error` with the reason. One table never takes the page down.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from hudi_airflow.tables_config import EntryError, TableEntry, TablesFile
from hudi_airflow.ui.instants import InstantRow, age_seconds, archived_rows, instant_rows, utc_text
from hudi_airflow.ui.layout import FileStats, PartitionRow, partition_rows
from hudi_core import HudiTable, TableNotFoundError
from hudi_core.config import Options
from hudi_core.config import compaction_options as C
from hudi_core.inspect import CompactionInfo, InstantInfo, TableInspector
from hudi_core.timeline import State

OK = "ok"
NOT_CREATED = "not_created"
ERROR = "error"
INVALID = "invalid"  # the entry of the tables file is not usable
COMPLETED = State.COMPLETED.value
DELTA_COMMIT = "deltacommit"
ARCHIVED_SHOWN = 200  # the newest archived instants listed (all are counted)

__all__ = ["ERROR", "INVALID", "NOT_CREATED", "OK", "FileStats", "TableSummary", "summarize"]


@dataclass
class CleanInfo:
    timestamp: str
    time_utc: str | None
    # From the clean's metadata (active or archived); None where it does not say.
    files_deleted: int | None = None
    earliest_commit_to_retain: str | None = None


@dataclass
class ArchivalInfo:
    archived_instants: int = 0
    newest_archived: str | None = None
    archive_files: int = 0
    last_archived_at: str | None = None  # when the newest archive file was written (UTC, ISO)
    newest: list[InstantRow] = field(default_factory=list)  # newest first, ARCHIVED_SHOWN


@dataclass
class PendingCompaction:
    timestamp: str
    state: str  # REQUESTED (planned) or INFLIGHT (running)
    time_utc: str | None
    age_s: float | None  # since it was planned
    file_groups: int
    partitions: list[str]
    log_files: int
    log_bytes: int  # the log files' size when planned


@dataclass
class CompactionBacklog:
    """Merge-on-read tables: plans waiting, and how close the next plan is."""

    pending: list[PendingCompaction]
    last_compaction: str | None  # the newest completed compaction on the active timeline
    delta_commits_since: int  # completed delta commits after it
    max_delta_commits: int  # hoodie.compact.inline.max.delta.commits, from the entry
    trigger_strategy: str  # hoodie.compact.inline.trigger.strategy, from the entry


@dataclass
class PendingClustering:
    timestamp: str
    state: str  # REQUESTED, or INFLIGHT while (or after) an attempt runs
    file_groups: int  # the file groups its plan rewrites


@dataclass
class TableSummary:
    name: str
    base_path: str
    table_type: str
    status: str  # OK, NOT_CREATED, ERROR or INVALID
    error: str | None = None
    # The active timeline, oldest first, each instant in its latest state.
    instants: list[InstantRow] = field(default_factory=list)
    counts_by_action: dict[str, int] = field(default_factory=dict)
    counts_by_state: dict[str, int] = field(default_factory=dict)
    pending_compactions: list[str] = field(default_factory=list)
    pending_clusterings: list[PendingClustering] = field(default_factory=list)
    compaction_backlog: CompactionBacklog | None = None  # merge-on-read tables
    last_clean: CleanInfo | None = None
    archival: ArchivalInfo = field(default_factory=ArchivalInfo)
    # The newest visible slice of every file group: what a snapshot query reads.
    latest_files: FileStats = field(default_factory=FileStats)
    # Every slice on storage, older ones the cleaner has not deleted yet included.
    all_files: FileStats = field(default_factory=FileStats)
    partitions: list[PartitionRow] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize_file(tables: TablesFile) -> list[TableSummary]:
    """Every entry of the tables file in its order, bad ones as INVALID."""
    return [
        summarize_or_report(item) if isinstance(item, TableEntry) else invalid(item)
        for item in tables.items
    ]


def summarize_all(entries: Iterable[TableEntry]) -> list[TableSummary]:
    return [summarize_or_report(entry) for entry in entries]


def invalid(error: EntryError) -> TableSummary:
    name = error.name or f"entry #{error.number}"
    return TableSummary(name, "", "", INVALID, error.message)


def summarize_or_report(entry: TableEntry) -> TableSummary:
    """`summarize`, or a summary with status ERROR saying why the table cannot be read."""
    try:
        return summarize(entry)
    except Exception as exc:  # a broken table must not hide the others
        message = f"cannot read the table: {type(exc).__name__}: {exc}"
        return TableSummary(entry.name, entry.base_path, entry.table_type, ERROR, message)


def summarize(entry: TableEntry, now: datetime | None = None) -> TableSummary:
    try:
        table = HudiTable.open(entry.base_path)
    except TableNotFoundError:
        return TableSummary(entry.name, entry.base_path, entry.table_type, NOT_CREATED)
    now = now or datetime.now(UTC)
    options = Options(entry.hoodie_options())
    inspector = table.inspect
    active = inspector.timeline()
    pending = inspector.pending_compactions()
    summary = TableSummary(
        name=entry.name,
        base_path=entry.base_path,
        table_type=table.table_type,
        status=OK,
        instants=instant_rows(inspector, active, options),
        counts_by_action=dict(sorted(Counter(i.action for i in active).items())),
        counts_by_state=dict(sorted(Counter(i.state for i in active).items())),
        pending_compactions=[c.instant.timestamp for c in pending],
        pending_clusterings=[
            PendingClustering(c.instant.timestamp, c.instant.state, len(c.file_groups))
            for c in inspector.pending_clusterings()
        ],
        last_clean=_last_clean(inspector, active),
        archival=_archival(inspector),
    )
    if table.config.is_merge_on_read:
        zone = table.config.timeline_timezone
        summary.compaction_backlog = _backlog(summary.instants, pending, options, zone, now)
    _add_files(inspector, summary)
    return summary


def _backlog(
    rows: Sequence[InstantRow],
    pending: Sequence[CompactionInfo],
    options: Options,
    zone: str,
    now: datetime,
) -> CompactionBacklog:
    done = [r.timestamp for r in rows if r.compaction and r.state == COMPLETED]
    last = max(done, default=None)
    since_last = [r for r in rows if last is None or r.timestamp > last]
    deltas = [r for r in since_last if r.action == DELTA_COMMIT and r.state == COMPLETED]
    return CompactionBacklog(
        pending=[_pending(c, zone, now) for c in pending],
        last_compaction=last,
        delta_commits_since=len(deltas),
        max_delta_commits=options.get_option(C.MAX_DELTA_COMMITS),
        trigger_strategy=options.get_option(C.TRIGGER_STRATEGY),
    )


def _pending(compaction: CompactionInfo, zone: str, now: datetime) -> PendingCompaction:
    info = compaction.instant
    return PendingCompaction(
        timestamp=info.timestamp,
        state=info.state,
        time_utc=utc_text(info.timestamp, zone),
        age_s=age_seconds(info.timestamp, zone, now),
        file_groups=len(compaction.file_groups),
        partitions=sorted({g.partition for g in compaction.file_groups}),
        log_files=compaction.log_files,
        log_bytes=compaction.log_bytes,
    )


def _last_clean(inspector: TableInspector, active: Iterable[InstantInfo]) -> CleanInfo | None:
    # Archival may have moved every clean off the active timeline: look there too.
    cleans = [
        i
        for i in (*inspector.archived_timeline(), *active)
        if i.action == "clean" and i.is_completed
    ]
    if not cleans:
        return None
    metadata = inspector.instant_metadata(cleans[-1].timestamp, "clean")
    return CleanInfo(
        cleans[-1].timestamp,
        utc_text(cleans[-1].timestamp, inspector.config.timeline_timezone),
        metadata.get("totalFilesDeleted"),
        metadata.get("earliestCommitToRetain") or None,
    )


def _archival(inspector: TableInspector) -> ArchivalInfo:
    archived = inspector.archived_timeline()
    files = inspector.archive_files()
    written_ms = files[-1].modified_ms if files else None
    newest = archived[::-1][:ARCHIVED_SHOWN]
    return ArchivalInfo(
        archived_instants=len(archived),
        newest_archived=max((i.timestamp for i in archived), default=None),
        archive_files=len(files),
        last_archived_at=(
            datetime.fromtimestamp(written_ms / 1000, UTC)
            .isoformat(timespec="seconds")
            .replace("+00:00", "Z")
            if written_ms is not None
            else None
        ),
        newest=archived_rows(newest, inspector.config.timeline_timezone),
    )


def _add_files(inspector: TableInspector, summary: TableSummary) -> None:
    summary.partitions = partition_rows(inspector.file_groups())
    for partition in summary.partitions:
        summary.latest_files.merge(partition.latest)
        summary.all_files.merge(partition.all)
