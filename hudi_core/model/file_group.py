"""File groups and file slices: how base files and log files belong together."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import unquote

from hudi_core.model.file_names import BaseFileName, LogFileName


@dataclass(frozen=True)
class DataFile:
    path: str  # relative to the base path
    size: int

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class BootstrapSource:
    """The file of a bootstrap's source dataset that a skeleton base file stands for: the
    skeleton holds its rows' meta columns, the source file their data, row by row."""

    base_uri: str  # the source dataset's root (hoodie.bootstrap.base.path)
    partition_path: str  # the file's folder, relative to base_uri ('' when not partitioned)
    file_name: str

    @property
    def uri(self) -> str:
        folder = "/".join(p for p in (self.base_uri.rstrip("/"), self.partition_path) if p)
        return f"{folder}/{self.file_name}"

    def partition_values(self) -> dict[str, str]:
        """Values of hive-style folders (`name=value`) on the way to the file, decoded: a
        partitioned dataset's files often do not hold their partition columns."""
        values = {}
        for part in self.partition_path.split("/"):
            name, equals, value = part.partition("=")
            if equals and name:
                values[unquote(name)] = unquote(value)
        return values


@dataclass(frozen=True)
class BaseFile(DataFile):
    # Set on a skeleton base file of a bootstrapped file group (METADATA_ONLY bootstrap).
    bootstrap_source: BootstrapSource | None = None

    @property
    def parsed(self) -> BaseFileName:
        parsed = BaseFileName.parse(self.name)
        assert parsed is not None, self.path
        return parsed

    @property
    def file_id(self) -> str:
        return self.parsed.file_id

    @property
    def instant_time(self) -> str:
        return self.parsed.instant_time


def bootstrap_uri(base_file: BaseFile | None) -> str | None:
    """The URI of the bootstrap source file a base file stands for, as plans record it."""
    if base_file is None or base_file.bootstrap_source is None:
        return None
    return base_file.bootstrap_source.uri


@dataclass(frozen=True)
class LogFile(DataFile):
    @property
    def parsed(self) -> LogFileName:
        parsed = LogFileName.parse(self.name)
        assert parsed is not None, self.path
        return parsed

    @property
    def sort_key(self) -> tuple[int, str]:
        """Log files of a slice are read in version order (then by write token)."""
        return self.parsed.version, self.parsed.write_token or ""


@dataclass(frozen=True)
class FileSlice:
    """One version of a file group: a base file and, on merge-on-read, the log files written
    on top of it (in read order). A slice may have log files only, before its first compaction."""

    partition_path: str
    file_id: str
    base_instant_time: str
    base_file: BaseFile | None
    log_files: tuple[LogFile, ...] = ()

    def with_log_files(self, log_files: list[LogFile]) -> FileSlice:
        ordered = tuple(sorted(log_files, key=lambda f: f.sort_key))
        return FileSlice(
            self.partition_path, self.file_id, self.base_instant_time, self.base_file, ordered
        )


@dataclass
class FileGroup:
    partition_path: str
    file_id: str
    slices: dict[str, FileSlice] = field(default_factory=dict)  # by base instant time

    def latest_slice(self, is_visible: Callable[[str], bool]) -> FileSlice | None:
        """The newest slice whose base instant is visible, with the log files of any newer,
        not yet visible slices appended.

        A newer slice is not visible while the compaction that starts it is pending (or lies
        beyond a time-travel instant): writes since then put their log files on it, and until
        its base file exists those logs belong on top of the previous slice.
        """
        newer_logs: list[LogFile] = []
        for instant in sorted(self.slices, reverse=True):
            candidate = self.slices[instant]
            if is_visible(instant):
                if not newer_logs:
                    return candidate
                return FileSlice(
                    candidate.partition_path,
                    candidate.file_id,
                    candidate.base_instant_time,
                    candidate.base_file,
                    candidate.log_files + tuple(newer_logs),
                )
            newer_logs = list(candidate.log_files) + newer_logs
        return None

    def slice_for_logs(
        self, pending_compaction: str | None, is_visible: Callable[[str], bool]
    ) -> FileSlice | None:
        """The slice new log files go on: past a pending compaction, the (still base-less)
        slice that compaction starts, else the latest visible one."""
        if pending_compaction is not None:
            started = self.slices.get(pending_compaction)
            logs = started.log_files if started else ()
            return FileSlice(self.partition_path, self.file_id, pending_compaction, None, logs)
        for instant in sorted(self.slices, reverse=True):
            if is_visible(instant):
                return self.slices[instant]
        return None
