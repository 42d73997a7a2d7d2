"""Markers: an empty file per data file a write creates, made before the data file itself.

`.hoodie/.temp/<instant>/<partition>/<file name>.marker.<CREATE|MERGE|APPEND>`. If the writer
dies, the markers name every file it may have left behind, so rollback can delete exactly those.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, get_args

from hudi_core.config.table_config import METAFOLDER
from hudi_core.storage import Storage

TEMP_FOLDER = f"{METAFOLDER}/.temp"
MARKER_INFIX = ".marker."
# What the write does to the data file; the type checker holds writers to these three.
IoType = Literal["CREATE", "MERGE", "APPEND"]
IO_TYPES: tuple[str, ...] = get_args(IoType)


@dataclass(frozen=True)
class Marker:
    data_file: str  # relative to the base path
    io_type: str


class Markers:
    """The markers of one instant."""

    def __init__(self, storage: Storage, instant_time: str) -> None:
        self.storage = storage
        self.folder = f"{TEMP_FOLDER}/{instant_time}"

    def create(self, data_file: str, io_type: IoType) -> None:
        self.storage.write_bytes(f"{self.folder}/{data_file}{MARKER_INFIX}{io_type}", b"")

    def delete(self, data_file: str, io_type: str) -> None:
        """Withdraws the marker of a file this instant did not create after all."""
        self.storage.delete(f"{self.folder}/{data_file}{MARKER_INFIX}{io_type}")

    def exist(self) -> bool:
        return self.storage.exists(self.folder)

    def all(self) -> list[Marker]:
        markers = []
        for entry in self.storage.list_files(self.folder, recursive=True):
            relative = entry.path[len(self.folder) + 1 :]
            data_file, _, io_type = relative.rpartition(MARKER_INFIX)
            if data_file and io_type in IO_TYPES:
                markers.append(Marker(data_file, io_type))
        return markers

    def reconcile(self, written: set[str]) -> list[str]:
        """Deletes the data files markers name that are not among `written` (what the tasks
        reported): leftovers of task attempts that failed and were retried. Returns them."""
        stray = [m.data_file for m in self.all() if m.data_file not in written]
        return [path for path in stray if self.storage.delete(path)]

    def delete_all(self) -> None:
        self.storage.delete_dir(self.folder)


def files_of_pending_writes(storage: Storage, pending_instants: Iterable[str]) -> set[str]:
    """The data files the markers of pending writes name: files no plan may take yet."""
    return {m.data_file for i in pending_instants for m in Markers(storage, i).all()}
