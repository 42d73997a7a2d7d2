"""File access under a table's base path, through pyarrow.fs: a local disk, an object store
(s3a://, s3://, gs://, abfs[s]://) or HDFS, as hudi_core.filesystems resolves the location.

Every path handed to or returned by `Storage` is relative to the table's base path and
uses '/' separators, as Hudi's metadata does.
"""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

import pyarrow.fs as pafs

from hudi_core.errors import MissingDataFileError, PathOutsideTableError, StorageUnreachableError
from hudi_core.filesystems import connection_settings, filesystem_for, is_object_store

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _reaching(
    method: Callable[Concatenate[Storage, _P], _R],
) -> Callable[Concatenate[Storage, _P], _R]:
    """A Storage method whose file system may be out of reach: a remote store's bare OSError
    (no network, a wrong endpoint, refused credentials; pyarrow raises these as OSError
    itself, absent files and the like as its subclasses) becomes StorageUnreachableError,
    naming the table's location and the settings to check."""

    @functools.wraps(method)
    def reaching(self: Storage, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except OSError as exc:
            if type(exc) is not OSError or self.is_local:
                raise
            raise StorageUnreachableError(
                f"cannot reach {self.base_uri}: {exc}. It is reached through "
                f"{connection_settings(self.base_uri, self._options)}"
            ) from exc

    return reaching


@dataclass(frozen=True)
class FileEntry:
    """A file found by a listing: its path relative to the base path, and its size."""

    path: str
    size: int
    modified_ms: int = 0  # when last written (ms since the epoch), where the listing says

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def parent(self) -> str:
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""


class Storage:
    """The file system a table lives on, rooted at the table's base path."""

    def __init__(
        self,
        base_uri: str,
        filesystem: pafs.FileSystem | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        """`options` configure an object store (fs.s3a.endpoint, ...; hudi_core.filesystems);
        with `filesystem` given, `base_uri` is already that file system's path."""
        if filesystem is None:
            filesystem, base = filesystem_for(base_uri, options)
        else:
            base = base_uri
        self.fs = filesystem
        self.base_path = base.rstrip("/")
        self.base_uri = base_uri
        self._options = dict(options or {})  # for StorageUnreachableError's message

    @property
    def is_local(self) -> bool:
        return isinstance(self.fs, pafs.LocalFileSystem)

    @property
    def is_object_store(self) -> bool:
        """S3, GCS or Azure: no rename and no exclusive create; a PUT publishes whole."""
        return is_object_store(self.base_uri) or isinstance(
            self.fs, (pafs.S3FileSystem, pafs.GcsFileSystem, pafs.AzureFileSystem)
        )

    def full_path(self, relative: str) -> str:
        return f"{self.base_path}/{relative}" if relative else self.base_path

    def uri_of(self, relative: str) -> str:
        """The full location of a file as Apache Hudi records it in plans and metadata: as
        Hadoop prints paths, `file:/...` on local disks, the table's URI elsewhere."""
        base = f"file:{self.base_path}" if self.is_local else self.base_uri.rstrip("/")
        return f"{base}/{relative}" if relative else base

    def relative_of(self, location: str) -> str:
        """The inverse of uri_of, also accepting the 'file:' form Hadoop paths take."""
        prefixes = (self.uri_of(""), self.base_uri.rstrip("/"), f"file://{self.base_path}")
        for prefix in (*prefixes, self.base_path):
            if location.startswith(prefix + "/"):
                return location[len(prefix) + 1 :]
        raise PathOutsideTableError(f"{location} is not under the table at {self.base_uri}")

    @_reaching
    def exists(self, relative: str) -> bool:
        return bool(self.fs.get_file_info(self.full_path(relative)).type != pafs.FileType.NotFound)

    @_reaching
    def read_bytes(self, relative: str) -> bytes:
        with self.fs.open_input_stream(self.full_path(relative)) as stream:
            return cast(bytes, stream.read())

    @_reaching
    def write_bytes(self, relative: str, data: bytes) -> None:
        """Writes a file, replacing any file of that name."""
        self.makedirs(_parent(relative))
        with self.fs.open_output_stream(self.full_path(relative)) as stream:
            stream.write(data)

    @_reaching
    def replace(self, relative: str, data: bytes) -> None:
        """Writes a file whole or not at all: a reader (or a crash) never sees half of it.

        Locally the content goes to a temporary file renamed over the target; object stores
        publish an upload only once it is complete.
        """
        if not self.is_local:
            self.write_bytes(relative, data)
            return
        self.makedirs(_parent(relative))
        target = self.full_path(relative)
        temp = f"{target}.{uuid.uuid4().hex}.tmp"
        with open(temp, "wb") as handle:
            handle.write(data)
        os.replace(temp, target)

    @_reaching
    def create_new(self, relative: str, data: bytes) -> None:
        """Creates a file that must not exist yet (else FileExistsError), never half-written.

        Locally the content is written to a temporary file and hard-linked into place, which
        fails if the target exists. Object stores have no exclusive create: there a prior
        existence check guards single writers and the lock provider guards several.
        """
        self.makedirs(_parent(relative))
        target = self.full_path(relative)
        if not self.is_local:
            if self.exists(relative):
                raise FileExistsError(f"{relative} already exists")
            self.write_bytes(relative, data)
            return
        temp = f"{target}.{uuid.uuid4().hex}.tmp"
        with open(temp, "wb") as handle:
            handle.write(data)
        try:
            os.link(temp, target)  # raises FileExistsError if the target exists
        finally:
            os.unlink(temp)

    @_reaching
    def move(self, source: str, target: str) -> None:
        """Moves a file to a name that is not taken (a rename locally and on HDFS; a copy and a
        delete on object stores, which have no rename)."""
        if self.exists(target):
            raise FileExistsError(f"{target} already exists")
        self.fs.move(self.full_path(source), self.full_path(target))

    @_reaching
    def delete(self, relative: str) -> bool:
        """Deletes a file; returns False if it was already gone."""
        if self.is_object_store and not self.exists(relative):
            return False  # object stores delete absent keys without complaint
        try:
            self.fs.delete_file(self.full_path(relative))
            return True
        except FileNotFoundError:
            return False

    @_reaching
    def delete_dir(self, relative: str) -> None:
        if self.exists(relative):
            self.fs.delete_dir(self.full_path(relative))

    @_reaching
    def makedirs(self, relative: str) -> None:
        self.fs.create_dir(self.full_path(relative), recursive=True)

    @_reaching
    def list_files(self, relative: str = "", recursive: bool = False) -> list[FileEntry]:
        """Files (not folders) under a folder; an absent folder lists as empty."""
        selector = pafs.FileSelector(
            self.full_path(relative), recursive=recursive, allow_not_found=True
        )
        prefix_len = len(self.base_path) + 1
        return [
            FileEntry(info.path[prefix_len:], info.size, (info.mtime_ns or 0) // 1_000_000)
            for info in self.fs.get_file_info(selector)
            if info.type == pafs.FileType.File
        ]

    @_reaching
    def list_folders(self, relative: str = "") -> list[str]:
        """Sub-folders directly under a folder, as paths relative to the base path."""
        selector = pafs.FileSelector(self.full_path(relative), allow_not_found=True)
        prefix_len = len(self.base_path) + 1
        return [
            info.path[prefix_len:]
            for info in self.fs.get_file_info(selector)
            if info.type == pafs.FileType.Directory
        ]

    @_reaching
    def modified_ms(self, relative: str) -> int | None:
        """When a file was last written (ms since the epoch); None if it does not exist."""
        info = self.fs.get_file_info(self.full_path(relative))
        if info.type == pafs.FileType.NotFound or info.mtime_ns is None:
            return None
        return int(info.mtime_ns) // 1_000_000

    @_reaching
    def file_size(self, relative: str) -> int:
        """A file's size; MissingDataFileError (a FileNotFoundError) if it does not exist."""
        info = self.fs.get_file_info(self.full_path(relative))
        if info.type == pafs.FileType.NotFound or info.size is None:
            raise MissingDataFileError(f"{relative} does not exist")
        return int(info.size)


def _parent(relative: str) -> str:
    return relative.rsplit("/", 1)[0] if "/" in relative else ""
