"""What the Hudi view shows of a table, read with `HudiTable.inspect`: its timeline, pending
compactions, last clean, archival and data files, as plain dataclasses (`to_dict()` gives JSON-ready
dicts), so that it is testable without Airflow's server.

A configured table whose base path holds no table yet is summarized as `not_created`, and a
table that cannot be read as `error` with the reason: one table never takes the page down.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from hudi_airflow.tables_config import TableEntry
from hudi_core import HudiTable, TableNotFoundError
from hudi_core.inspect import FileSliceInfo, InstantInfo, TableInspector
from hudi_core.timeline import parse_instant_time

OK = "ok"
NOT_CREATED = "not_created"
ERROR = "error"


@dataclass
class FileStats:
    """Data files (parquet base files and Hudi log files) of a set of file slices."""

    slices: int = 0
    base_files: int = 0
    base_bytes: int = 0
    log_files: int = 0
    log_bytes: int = 0

    def add(self, file_slice: FileSliceInfo) -> None:
        self.slices += 1
        if file_slice.base_file is not None:
            self.base_files += 1
            self.base_bytes += file_slice.base_file.size
        self.log_files += file_slice.log_files
        self.log_bytes += file_slice.log_bytes


@dataclass
class CleanInfo:
    timestamp: str
    # From the clean's metadata (active or archived); None where it does not say.
    files_deleted: int | None = None
    earliest_commit_to_retain: str | None = None


@dataclass
class ArchivalInfo:
    archived_instants: int = 0
    newest_archived: str | None = None
    archive_files: int = 0
    last_archived_at: str | None = None  # when the newest archive file was written (UTC, ISO)


@dataclass
class TableSummary:
    name: str
    base_path: str
    table_type: str
    status: str  # OK, NOT_CREATED or ERROR
    error: str | None = None
    # The active timeline, oldest first, each instant in its latest state.
    instants: list[dict[str, str]] = field(default_factory=list)
    counts_by_action: dict[str, int] = field(default_factory=dict)
    counts_by_state: dict[str, int] = field(default_factory=dict)
    pending_compactions: list[str] = field(default_factory=list)
    last_clean: CleanInfo | None = None
    archival: ArchivalInfo = field(default_factory=ArchivalInfo)
    # The newest visible slice of every file group: what a snapshot query reads.
    latest_files: FileStats = field(default_factory=FileStats)
    # Every slice on storage, older ones the cleaner has not deleted yet included.
    all_files: FileStats = field(default_factory=FileStats)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize_all(entries: Iterable[TableEntry]) -> list[TableSummary]:
    return [summarize_or_report(entry) for entry in entries]


def summarize_or_report(entry: TableEntry) -> TableSummary:
    """`summarize`, or a summary with status ERROR saying why the table cannot be read."""
    try:
        return summarize(entry)
    except Exception as exc:  # a broken table must not hide the others
        message = f"cannot read the table: {type(exc).__name__}: {exc}"
        return TableSummary(entry.name, entry.base_path, entry.table_type, ERROR, message)


def summarize(entry: TableEntry) -> TableSummary:
    try:
        table = HudiTable.open(entry.base_path)
    except TableNotFoundError:
        return TableSummary(entry.name, entry.base_path, entry.table_type, NOT_CREATED)
    inspector = table.inspect
    active = inspector.timeline()
    summary = TableSummary(
        name=entry.name,
        base_path=entry.base_path,
        table_type=table.table_type,
        status=OK,
        instants=[_instant_dict(i) for i in active],
        counts_by_action=dict(sorted(Counter(i.action for i in active).items())),
        counts_by_state=dict(sorted(Counter(i.state for i in active).items())),
        pending_compactions=[c.instant.timestamp for c in inspector.pending_compactions()],
        last_clean=_last_clean(inspector, active),
        archival=_archival(inspector),
    )
    _count_files(inspector, summary)
    return summary


def _instant_dict(instant: InstantInfo) -> dict[str, str]:
    return {"timestamp": instant.timestamp, "action": instant.action, "state": instant.state}


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
        metadata.get("totalFilesDeleted"),
        metadata.get("earliestCommitToRetain") or None,
    )


def _archival(inspector: TableInspector) -> ArchivalInfo:
    archived = inspector.archived_timeline()
    files = inspector.archive_files()
    written_ms = files[-1].modified_ms if files else None
    return ArchivalInfo(
        archived_instants=len(archived),
        newest_archived=max((i.timestamp for i in archived), default=None),
        archive_files=len(files),
        last_archived_at=(
            datetime.fromtimestamp(written_ms / 1000, UTC).isoformat(timespec="seconds")
            if written_ms is not None
            else None
        ),
    )


def _count_files(inspector: TableInspector, summary: TableSummary) -> None:
    for group in inspector.file_groups():
        if group.latest is not None:
            summary.latest_files.add(group.latest)
        for file_slice in group.slices:
            summary.all_files.add(file_slice)


def instant_time_text(timestamp: str) -> str:
    """'20240105103000123' as '2024-01-05 10:30:00.123' (bootstrap instants stay as they are)."""
    try:
        moment = parse_instant_time(timestamp)
    except ValueError:
        return timestamp
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d}"
