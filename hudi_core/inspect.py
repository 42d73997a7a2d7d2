"""Read-only answers about a table as it is now, for people and tools: `HudiTable.inspect`.

    inspector = table.inspect
    inspector.timeline()              # active instants, with when each state was reached
    inspector.archived_timeline()     # instants archival moved to .hoodie/archived
    inspector.commit("20240105...")   # a write's stats per partition and file, and totals
    inspector.file_groups()           # every file group, its slices and the latest one
    inspector.pending_compactions(), inspector.pending_clusterings(), inspector.partitions()

An inspector lists the timeline once, when first asked, and answers from that listing: ask
the table for a new one (`table.inspect` again) to see later changes. Results are frozen
dataclasses of plain values: `to_json()` (or `dataclasses.asdict`) gives JSON-ready dicts.
The parsing is hudi_core's own (timeline, file system view, commit metadata, plans); this
module only shapes what they read.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC
from typing import Any

import pyarrow.fs as pafs

from hudi_core.config import table_options as T
from hudi_core.config.table_config import METAFOLDER, TableConfig
from hudi_core.errors import TimelineError
from hudi_core.model.commit_metadata import NULL_COMMIT, CommitMetadata, WriteStat
from hudi_core.model.compaction_plan import read_plan
from hudi_core.model.file_group import FileGroup, FileSlice
from hudi_core.model.file_names import PARTITION_METAFILE
from hudi_core.read.file_system_view import (
    FileSystemView,
    clustering_file_groups,
    list_table_files,
)
from hudi_core.storage import Storage
from hudi_core.timeline import ActiveTimeline, Instant, State, avro_metadata
from hudi_core.timeline.archived_timeline import (
    ArchivedEntry,
    archive_files,
    archive_folder_path,
    read_archived_instants,
)
from hudi_core.timeline.content import parse_json_object
from hudi_core.timeline.instant import (
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    SAVEPOINT,
    WRITE_ACTIONS,
)
from hudi_core.timeline.instant_time import format_instant_time

# An instant's identity across its states: its time, and whether it is a savepoint (which
# shares the time of the commit it pins), as the active and archived timelines tell them apart.
_InstantKey = tuple[str, bool]
# When each state's file was written (yyyyMMddHHmmssSSS, the timeline's time zone).
_StateTimes = Mapping[State, str]


@dataclass(frozen=True)
class _Json:
    def to_json(self) -> dict[str, Any]:
        """This result as a dict of JSON values (nested results as dicts, tuples as lists)."""
        data: dict[str, Any] = json.loads(json.dumps(asdict(self)))
        return data


@dataclass(frozen=True)
class InstantInfo(_Json):
    """An instant in its latest state, and when it reached each state, where known (files
    written by other tools, or archived long ago, may not say)."""

    timestamp: str
    action: str
    state: str  # REQUESTED, INFLIGHT or COMPLETED
    requested_time: str | None = None
    inflight_time: str | None = None
    completed_time: str | None = None

    @property
    def is_completed(self) -> bool:
        return self.state == State.COMPLETED.value

    @property
    def is_write(self) -> bool:
        """A commit, deltacommit or replacecommit (a compaction, once completed): an instant
        whose completion changes what readers see, and which holds commit metadata then."""
        return self.action in WRITE_ACTIONS

    @classmethod
    def of(cls, instant: Instant, times: _StateTimes) -> InstantInfo:
        return cls(
            instant.timestamp,
            instant.action,
            instant.state.value,
            times.get(State.REQUESTED),
            times.get(State.INFLIGHT),
            times.get(State.COMPLETED),
        )


@dataclass(frozen=True, order=True)
class FileGroupId(_Json):
    partition: str
    file_id: str


@dataclass(frozen=True)
class FileWrite(_Json):
    """What one write did to one file group (a row of Apache Hudi's `commit showfiles`)."""

    partition: str
    file_id: str
    path: str  # the file written, relative to the base path
    prev_commit: str  # the file group's previous version; "null" for a new file group
    rows_written: int  # rows in the file written
    rows_inserted: int
    rows_updated: int
    rows_deleted: int
    bytes_written: int
    file_size: int
    errors: int
    log_records_compacted: int  # compactions: log records merged into the new base file

    @classmethod
    def of(cls, stat: WriteStat) -> FileWrite:
        return cls(
            stat.partition_path,
            stat.file_id,
            stat.path,
            stat.prev_commit,
            stat.num_writes,
            stat.num_inserts,
            stat.num_update_writes,
            stat.num_deletes,
            stat.total_write_bytes,
            stat.file_size_in_bytes,
            stat.total_write_errors,
            stat.compaction.log_records if stat.compaction else 0,
        )


@dataclass(frozen=True)
class WriteTotals(_Json):
    """Sums over file writes, as Apache Hudi's `commits show` adds them up: a file write is
    an added file when it starts a file group, an updated one otherwise."""

    files_added: int = 0
    files_updated: int = 0
    rows_written: int = 0
    rows_inserted: int = 0
    rows_updated: int = 0
    rows_deleted: int = 0
    bytes_written: int = 0
    errors: int = 0
    log_records_compacted: int = 0

    @classmethod
    def of(cls, writes: Iterable[FileWrite]) -> WriteTotals:
        writes = list(writes)
        added = sum(1 for w in writes if w.prev_commit == NULL_COMMIT)
        return cls(
            files_added=added,
            files_updated=len(writes) - added,
            rows_written=sum(w.rows_written for w in writes),
            rows_inserted=sum(w.rows_inserted for w in writes),
            rows_updated=sum(w.rows_updated for w in writes),
            rows_deleted=sum(w.rows_deleted for w in writes),
            bytes_written=sum(w.bytes_written for w in writes),
            errors=sum(w.errors for w in writes),
            log_records_compacted=sum(w.log_records_compacted for w in writes),
        )


@dataclass(frozen=True)
class PartitionWrites(_Json):
    """One partition of a commit (a row of `commit showpartitions`, with its files)."""

    partition: str
    totals: WriteTotals
    files: tuple[FileWrite, ...]


@dataclass(frozen=True)
class CommitInfo(_Json):
    """The commit metadata of a completed commit, deltacommit or replacecommit."""

    instant: InstantInfo
    operation_type: str  # UPSERT, INSERT, ... (COMPACT for a compaction)
    compacted: bool
    totals: WriteTotals
    partitions: tuple[PartitionWrites, ...]
    replaced_file_groups: tuple[FileGroupId, ...]  # replacecommits: the groups they retire
    extra_metadata: dict[str, str] = field(default_factory=dict, hash=False)

    @classmethod
    def of(cls, instant: InstantInfo, metadata: CommitMetadata) -> CommitInfo:
        partitions = tuple(
            PartitionWrites(partition, WriteTotals.of(writes), writes)
            for partition, stats in sorted(metadata.partition_to_write_stats.items())
            for writes in [tuple(FileWrite.of(s) for s in stats)]
        )
        return cls(
            instant,
            metadata.operation_type,
            metadata.compacted,
            WriteTotals.of(w for p in partitions for w in p.files),
            partitions,
            tuple(sorted(FileGroupId(p, f) for p, f in metadata.replaced_file_ids())),
            dict(metadata.extra_metadata),
        )


@dataclass(frozen=True)
class DataFileInfo(_Json):
    path: str  # relative to the base path
    size: int  # bytes


@dataclass(frozen=True)
class FileSliceInfo(_Json):
    """A file slice: the base file a write or compaction started it with (none for a slice
    of log files only) and the log files written on top."""

    partition: str
    file_id: str
    base_instant_time: str
    base_file: DataFileInfo | None
    log_files: int
    log_bytes: int
    # Whether the instant that started it completed (or was archived): slices of failed or
    # running writes, and of compactions still pending, are not read.
    committed: bool

    @classmethod
    def of(cls, file_slice: FileSlice, committed: bool) -> FileSliceInfo:
        base = file_slice.base_file
        return cls(
            file_slice.partition_path,
            file_slice.file_id,
            file_slice.base_instant_time,
            DataFileInfo(base.path, base.size) if base is not None else None,
            len(file_slice.log_files),
            sum(log.size for log in file_slice.log_files),
            committed,
        )


@dataclass(frozen=True)
class FileGroupInfo(_Json):
    partition: str
    file_id: str
    slices: tuple[FileSliceInfo, ...]  # every slice on storage, oldest first
    # What a snapshot query reads: the newest committed slice, with the log files written
    # since on top (on a slice a pending compaction starts); None when nothing is committed
    # or the group was replaced.
    latest: FileSliceInfo | None
    replaced: bool  # retired by a completed replacecommit; the cleaner deletes its files
    pending_compaction: str | None  # the pending compaction planning this group, if any
    pending_clustering: str | None  # the pending clustering rewriting this group, if any


@dataclass(frozen=True)
class CompactionInfo(_Json):
    """A compaction and its plan: the file groups it merges."""

    instant: InstantInfo  # a compaction while pending; the commit it completed as, after
    file_groups: tuple[FileGroupId, ...]
    log_files: int  # log files the plan merges
    log_bytes: int = 0  # their size when the plan was made (its TOTAL_LOG_FILES_SIZE metrics)
    io_read_mb: float = 0.0  # what the plan expects to read, base and log files (TOTAL_IO_READ_MB)


@dataclass(frozen=True)
class ClusteringInfo(_Json):
    """A clustering and the file groups its plan rewrites."""

    instant: InstantInfo
    file_groups: tuple[FileGroupId, ...]


@dataclass(frozen=True)
class ArchiveFileInfo(_Json):
    path: str  # relative to the base path
    size: int
    modified_ms: int | None  # when it was written, ms since the epoch


class TableInspector:
    """Inspection of one table, as of its first question (see the module docstring)."""

    def __init__(self, storage: Storage, config: TableConfig) -> None:
        self.storage = storage
        self.config = config

    # ---- timeline

    def timeline(self) -> tuple[InstantInfo, ...]:
        """The active timeline, oldest first, each instant in its latest state."""
        times = self._active_times
        return tuple(
            InstantInfo.of(i, times.get(_key(i), {})) for i in self._active_timeline.instants
        )

    def archived_timeline(self) -> tuple[InstantInfo, ...]:
        """The archived instants, oldest first, each in the latest state archived."""
        latest, times = _latest_states((e.instant, e.state_transition_time) for e in self._archived)
        return tuple(InstantInfo.of(i, times.get(_key(i), {})) for i in sorted(latest.values()))

    def instant(self, instant_time: str, action: str | None = None) -> InstantInfo:
        """The instant at `instant_time` (with `action`, else not the savepoint sharing its
        time), active or archived; a TimelineError if there is none."""
        for timeline in (self.timeline, self.archived_timeline):  # the archive only if needed
            for info in reversed(timeline()):
                if _matches(info.timestamp, info.action, instant_time, action):
                    return info
        raise TimelineError(f"no instant {_named(instant_time, action)} on the timeline of {self}")

    def instant_metadata(self, instant_time: str, action: str | None = None) -> dict[str, Any]:
        """What the instant's latest state file holds: commit metadata JSON, or the Avro plan
        or metadata (a clean's, rollback's, savepoint's, restore's, compaction plan) as a dict;
        {} for an empty file. Archived instants give what the archive kept (Apache Hudi's
        archived record; nothing for what it does not keep, such as restore metadata)."""
        active = self._active_instant(instant_time, action)
        if active is not None:
            return _decode(active, self._active_timeline.read_bytes(active))
        entry = self._archived_entry(instant_time, action)
        return dict(entry.metadata or {})

    def commit(self, instant_time: str) -> CommitInfo:
        """The commit metadata of a completed write (commit, deltacommit, replacecommit,
        compaction), active or archived."""
        info = self.instant(instant_time)
        if info.action not in WRITE_ACTIONS or not info.is_completed:
            raise TimelineError(
                f"{info.action} {instant_time} is {info.state}: commit metadata is kept by "
                "completed commits, deltacommits and replacecommits"
            )
        active = self._active_instant(instant_time, info.action)
        if active is not None:
            content = self._active_timeline.read_bytes(active)
            return CommitInfo.of(info, CommitMetadata.from_json_bytes(content))
        entry = self._archived_entry(instant_time, info.action)
        source = f"the archived {entry.instant} in {self._archive_folder}"
        archived = json.dumps(entry.metadata or {}).encode()
        return CommitInfo.of(info, CommitMetadata.from_json_bytes(archived, source))

    def archive_files(self) -> tuple[ArchiveFileInfo, ...]:
        """The archived timeline's files, oldest first."""
        paths = archive_files(self.storage, self._archive_folder)
        found = self.storage.fs.get_file_info([self.storage.full_path(p) for p in paths])
        return tuple(
            ArchiveFileInfo(path, info.size, info.mtime_ns // 1_000_000 if info.mtime_ns else None)
            for path, info in zip(paths, found, strict=True)
        )

    # ---- files

    def file_groups(self, partition: str | None = None) -> tuple[FileGroupInfo, ...]:
        """Every file group with files on storage (of one partition, if given), by partition
        and file id; failed writes' and replaced groups' files included."""
        view = self._view
        clustering = {
            g: c.instant.timestamp for c in self.pending_clusterings() for g in c.file_groups
        }
        return tuple(
            self._file_group(view, group, clustering)
            for key, group in sorted(view.file_groups.items())
            if partition is None or key[0] == partition
        )

    def partitions(self) -> tuple[str, ...]:
        """The table's partitions: folders holding a partition metadata file, as Apache Hudi
        lists them ("" for a non-partitioned table)."""
        return tuple(
            sorted(
                {
                    entry.parent
                    for entry in list_table_files(self.storage)
                    if entry.name.startswith(PARTITION_METAFILE)
                }
            )
        )

    # ---- table services

    def pending_compactions(self) -> tuple[CompactionInfo, ...]:
        """Compactions planned and not completed, oldest first, with what their plans merge."""
        return tuple(self._compaction(info) for info in self._pending(COMPACTION))

    def compaction(self, instant_time: str) -> CompactionInfo:
        """The compaction at `instant_time` on the active timeline, pending or completed."""
        info = self.instant(instant_time, COMPACTION)
        planned = Instant(instant_time, COMPACTION, State.REQUESTED).file_name
        if not self.storage.exists(f"{METAFOLDER}/{planned}"):
            raise TimelineError(
                f"{info.action} {instant_time} is not a compaction on the active timeline of "
                f"{self}: there is no {METAFOLDER}/{planned}"
            )
        return self._compaction(info)

    def _compaction(self, info: InstantInfo) -> CompactionInfo:
        plan = read_plan(self._active_timeline, info.timestamp)
        groups = tuple(sorted(FileGroupId(p, f) for p, f in plan.file_groups()))
        log_files = sum(len(op.log_files) for op in plan.operations)
        log_bytes = sum(int(op.metrics.get("TOTAL_LOG_FILES_SIZE", 0)) for op in plan.operations)
        read_mb = sum(float(op.metrics.get("TOTAL_IO_READ_MB", 0)) for op in plan.operations)
        return CompactionInfo(info, groups, log_files, log_bytes, read_mb)

    def pending_clusterings(self) -> tuple[ClusteringInfo, ...]:
        """Clusterings planned and not completed, oldest first (pending replacecommits of
        insert_overwrite carry no clustering plan and are not listed)."""
        found = (self._clustering(info) for info in self._pending(REPLACE_COMMIT))
        return tuple(c for c in found if c is not None)

    def clustering(self, instant_time: str) -> ClusteringInfo:
        """The clustering at `instant_time` on the active timeline, pending or completed."""
        found = self._clustering(self.instant(instant_time, REPLACE_COMMIT))
        if found is None:
            raise TimelineError(
                f"replacecommit {instant_time} of {self} is no clustering: its requested file "
                "holds no clustering plan"
            )
        return found

    def _clustering(self, info: InstantInfo) -> ClusteringInfo | None:
        planned = clustering_file_groups(self._active_timeline, info.timestamp)
        if not planned:
            return None
        return ClusteringInfo(info, tuple(sorted(FileGroupId(p, f) for p, f in planned)))

    # ---- what the answers are read from

    @functools.cached_property
    def _active_timeline(self) -> ActiveTimeline:
        return ActiveTimeline.load(self.storage, self.config.timeline_timezone)

    @functools.cached_property
    def _active_times(self) -> dict[_InstantKey, dict[State, str]]:
        """When each state file on the active timeline was written (one listing of .hoodie)."""
        selector = pafs.FileSelector(self.storage.full_path(METAFOLDER), allow_not_found=True)
        stamped = []
        for info in self.storage.fs.get_file_info(selector):
            instant = Instant.from_file_name(info.base_name)
            if instant is not None and info.mtime is not None:
                stamped.append((instant, self._local_time(info.mtime)))
        return _latest_states(stamped)[1]

    def _local_time(self, moment: Any) -> str:
        """A file time as the timeline writes times: in its time zone (UTC or local)."""
        zone = UTC if self.config.timeline_timezone == "UTC" else None
        return format_instant_time(moment.astimezone(zone).replace(tzinfo=None))

    @functools.cached_property
    def _archived(self) -> list[ArchivedEntry]:
        return read_archived_instants(self.storage, self._archive_folder)

    @property
    def _archive_folder(self) -> str:
        return archive_folder_path(self.config.options.get_option(T.ARCHIVELOG_FOLDER))

    @functools.cached_property
    def _view(self) -> FileSystemView:
        return FileSystemView(self.storage, self._active_timeline)

    def _pending(self, action: str) -> list[InstantInfo]:
        return [i for i in self.timeline() if i.action == action and not i.is_completed]

    def _active_instant(self, instant_time: str, action: str | None) -> Instant | None:
        for instant in reversed(self._active_timeline.instants):
            if _matches(instant.timestamp, instant.action, instant_time, action):
                return instant
        return None

    def _archived_entry(self, instant_time: str, action: str | None) -> ArchivedEntry:
        """The archived entry of the instant's latest archived state."""
        for entry in reversed(self._archived):
            if _matches(entry.instant.timestamp, entry.instant.action, instant_time, action):
                return entry
        raise TimelineError(f"no instant {_named(instant_time, action)} on the timeline of {self}")

    def _file_group(
        self, view: FileSystemView, group: FileGroup, clustering: dict[FileGroupId, str]
    ) -> FileGroupInfo:
        key = (group.partition_path, group.file_id)
        replaced = key in view.replaced
        latest = None if replaced else group.latest_slice(view.is_visible)
        return FileGroupInfo(
            group.partition_path,
            group.file_id,
            tuple(FileSliceInfo.of(s, view.is_visible(t)) for t, s in sorted(group.slices.items())),
            FileSliceInfo.of(latest, True) if latest is not None else None,
            replaced,
            view.pending_compactions.get(key),
            clustering.get(FileGroupId(*key)),
        )

    def __str__(self) -> str:
        return str(self.storage.base_uri)


def _key(instant: Instant) -> _InstantKey:
    return instant.timestamp, instant.action == SAVEPOINT


def _latest_states(
    stamped: Iterable[tuple[Instant, str | None]],
) -> tuple[dict[_InstantKey, Instant], dict[_InstantKey, dict[State, str]]]:
    """Each instant in its latest state, and the times of its states, from one entry per
    state file."""
    latest: dict[_InstantKey, Instant] = {}
    times: dict[_InstantKey, dict[State, str]] = {}
    for instant, when in stamped:
        key = _key(instant)
        known = latest.get(key)
        if known is None or instant.state.rank > known.state.rank:
            latest[key] = instant
        if when:
            times.setdefault(key, {})[instant.state] = when
    return latest, times


def _matches(timestamp: str, action: str, wanted_time: str, wanted_action: str | None) -> bool:
    """Whether an instant is the one asked for: any action but a savepoint when none is named;
    a compaction is found by either of its actions (it completes as a commit)."""
    if timestamp != wanted_time:
        return False
    if wanted_action is None:
        return action != SAVEPOINT
    return action == wanted_action or {action, wanted_action} == {COMPACTION, COMMIT}


def _named(instant_time: str, action: str | None) -> str:
    return f"{action} {instant_time}" if action else instant_time


def _decode(instant: Instant, data: bytes) -> dict[str, Any]:
    """A timeline file's content: commit and deltacommit files (and replacecommits past
    requested) hold JSON, all others Avro; {} for an empty file."""
    if not data.strip():
        return {}
    if instant.action in (COMMIT, DELTA_COMMIT) or (
        instant.action == REPLACE_COMMIT and instant.state is not State.REQUESTED
    ):
        return parse_json_object(data)
    return avro_metadata.deserialize(data)
