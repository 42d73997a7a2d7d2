"""The view's drill-down into a table's files: per partition, its file groups, and each
group's file slices (base file and log files, with their sizes), from
`TableInspector.file_groups`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import groupby

from hudi_core.inspect import FileGroupInfo, FileSliceInfo


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

    def merge(self, other: FileStats) -> None:
        for name in ("slices", "base_files", "base_bytes", "log_files", "log_bytes"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class SliceRow:
    base_instant_time: str
    base_file: str | None  # relative to the base path; None for a slice of log files only
    base_bytes: int
    log_files: int
    log_bytes: int
    committed: bool  # its instant completed: readers see it
    latest: bool  # the slice a snapshot query reads

    @property
    def bytes(self) -> int:
        return self.base_bytes + self.log_bytes


@dataclass
class FileGroupRow:
    file_id: str
    slices: list[SliceRow]  # oldest first
    replaced: bool
    pending_compaction: str | None
    pending_clustering: str | None
    # The latest slice's log files: what the next compaction of the group merges.
    log_files: int = 0
    log_bytes: int = 0


@dataclass
class PartitionRow:
    partition: str  # "" for a non-partitioned table
    file_groups: list[FileGroupRow]
    latest: FileStats = field(default_factory=FileStats)  # of the latest slices
    all: FileStats = field(default_factory=FileStats)  # of every slice on storage


def partition_rows(groups: Iterable[FileGroupInfo]) -> list[PartitionRow]:
    """File groups by partition (the inspector lists them by partition, then file id)."""
    rows = []
    for partition, members in groupby(groups, key=lambda g: g.partition):
        row = PartitionRow(partition, [])
        for group in members:
            row.file_groups.append(_group_row(group))
            if group.latest is not None:
                row.latest.add(group.latest)
            for file_slice in group.slices:
                row.all.add(file_slice)
        rows.append(row)
    return rows


def _group_row(group: FileGroupInfo) -> FileGroupRow:
    latest = group.latest
    latest_time = latest.base_instant_time if latest is not None else None
    return FileGroupRow(
        file_id=group.file_id,
        slices=[_slice_row(s, s.base_instant_time == latest_time) for s in group.slices],
        replaced=group.replaced,
        pending_compaction=group.pending_compaction,
        pending_clustering=group.pending_clustering,
        log_files=latest.log_files if latest is not None else 0,
        log_bytes=latest.log_bytes if latest is not None else 0,
    )


def _slice_row(file_slice: FileSliceInfo, latest: bool) -> SliceRow:
    base = file_slice.base_file
    return SliceRow(
        base_instant_time=file_slice.base_instant_time,
        base_file=base.path if base is not None else None,
        base_bytes=base.size if base is not None else 0,
        log_files=file_slice.log_files,
        log_bytes=file_slice.log_bytes,
        committed=file_slice.committed,
        latest=latest,
    )
