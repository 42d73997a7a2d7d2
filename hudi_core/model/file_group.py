"""File groups and file slices: how base files (and later log files) belong together."""

from __future__ import annotations

from dataclasses import dataclass, field

from hudi_core.model.file_names import BaseFileName


@dataclass(frozen=True)
class BaseFile:
    path: str  # relative to the base path
    size: int

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

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


@dataclass(frozen=True)
class FileSlice:
    """One version of a file group: a base file (and, on merge-on-read, its log files)."""

    partition_path: str
    file_id: str
    base_instant_time: str
    base_file: BaseFile | None


@dataclass
class FileGroup:
    partition_path: str
    file_id: str
    slices: dict[str, FileSlice] = field(default_factory=dict)  # by base instant time

    def latest_slice(self, visible_instants: set[str]) -> FileSlice | None:
        """The newest slice whose base instant is among `visible_instants`."""
        for instant in sorted(self.slices, reverse=True):
            if instant in visible_instants:
                return self.slices[instant]
        return None
