"""Base files of bootstrapped file groups, read as one: the skeleton file in the table holds
the meta columns of the rows, the source dataset's file their data, row for row.

Each side is read only when a requested column lives there: a query of data columns reads
the source file alone, one of meta columns the skeleton alone. Columns of hive-style partition
folders (`name=value`) that the source file does not hold come from its path.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from hudi_core.errors import CorruptFileError
from hudi_core.filesystems import filesystem_for, scheme_of
from hudi_core.io.base_file import (
    decoded_footer,
    open_base_file,
    parquet_errors,
    read_base_file_with_footer,
)
from hudi_core.model.file_group import BaseFile, BootstrapSource
from hudi_core.schema.meta_fields import is_meta_field
from hudi_core.storage import Storage


def source_location(storage: Storage, source: BootstrapSource) -> tuple[pafs.FileSystem, str]:
    """The file system and path of a source file: the table's own file system (and its
    credentials) when the source lives on the same kind of store."""
    filesystem, path = filesystem_for(source.uri)
    if scheme_of(source.uri) == scheme_of(storage.base_uri) or (
        storage.is_local and isinstance(filesystem, pafs.LocalFileSystem)
    ):
        return storage.fs, path
    return filesystem, path


def open_source_file(storage: Storage, source: BootstrapSource, **kwargs: Any) -> pq.ParquetFile:
    filesystem, path = source_location(storage, source)
    with parquet_errors(storage, source.uri):
        return pq.ParquetFile(path, filesystem=filesystem, **kwargs)


def folder_columns(source: BootstrapSource, held: Sequence[str]) -> dict[str, str]:
    """The hive-style partition values of the source file's folders that the file does not
    hold as columns (`held`), by column name."""
    return {k: v for k, v in source.partition_values().items() if k not in held}


def with_folder_columns(
    table: pa.Table,
    source: BootstrapSource,
    held: Sequence[str],
    wanted: Collection[str] | None = None,
) -> pa.Table:
    """`table` (rows read from the source file) with its folders' values appended as string
    columns: those the file does not hold, of those `wanted` (default all)."""
    for name, value in folder_columns(source, held).items():
        if wanted is None or name in wanted:
            table = table.append_column(name, pa.repeat(pa.scalar(value, pa.string()), len(table)))
    return table


class StitchedBaseFile:
    """A skeleton base file and its source file, with the reading methods of
    pyarrow.parquet.ParquetFile that base file readers use."""

    def __init__(self, storage: Storage, base_file: BaseFile) -> None:
        assert base_file.bootstrap_source is not None
        self.storage = storage
        self.base_file = base_file
        self.source = base_file.bootstrap_source
        self._skeleton: pq.ParquetFile | None = None
        self._data: pq.ParquetFile | None = None

    @property
    def skeleton(self) -> pq.ParquetFile:
        if self._skeleton is None:
            self._skeleton = open_base_file(self.storage, self.base_file.path)
        return self._skeleton

    @property
    def data(self) -> pq.ParquetFile:
        if self._data is None:
            self._data = open_source_file(self.storage, self.source)
        return self._data

    @property
    def metadata(self) -> pq.FileMetaData:
        """The skeleton's footer: it holds the bloom filter and key range of the rows."""
        return self.skeleton.metadata

    @property
    def schema_arrow(self) -> pa.Schema:
        data = self.data.schema_arrow
        meta = [f for f in self.skeleton.schema_arrow if is_meta_field(f.name)]
        folders = [pa.field(n, pa.string()) for n in folder_columns(self.source, data.names)]
        return pa.schema([*meta, *data, *folders])

    def read(self, columns: Sequence[str] | None = None) -> pa.Table:
        """The rows in `columns` (default all), each side read only if it holds one."""
        wanted = list(self.schema_arrow.names if columns is None else columns)
        meta = [c for c in wanted if is_meta_field(c)]
        data = [c for c in wanted if not is_meta_field(c)]
        parts = []
        if meta or not data:  # a read of no columns still needs the row count
            parts.append(self._read_skeleton(meta))
        if data:
            parts.append(self._read_data(data))
        if len(parts) == 2 and parts[0].num_rows != parts[1].num_rows:
            raise CorruptFileError(
                f"skeleton file {self.base_file.path} has {parts[0].num_rows} rows but its "
                f"bootstrap source {self.source.uri} has {parts[1].num_rows}: the source file "
                "changed since the bootstrap; restore it, or bootstrap the table anew"
            )
        return _side_by_side(parts, wanted)

    def iter_batches(
        self, batch_size: int, columns: Sequence[str] | None = None
    ) -> Iterator[pa.RecordBatch]:
        """The rows in batches (both sides are read whole first: they align by position)."""
        yield from self.read(columns).to_batches(max_chunksize=batch_size)

    def _read_skeleton(self, columns: list[str]) -> pa.Table:
        with parquet_errors(self.storage, self.base_file.path):
            return self.skeleton.read(columns=columns)  # no columns: the rows, counted

    def _read_data(self, columns: list[str]) -> pa.Table:
        held = self.data.schema_arrow.names
        with parquet_errors(self.storage, self.source.uri):
            table = self.data.read(columns=[c for c in columns if c in held])
        return with_folder_columns(table, self.source, held, columns)


def _side_by_side(parts: list[pa.Table], order: list[str]) -> pa.Table:
    """Columns of tables of equal length as one table, in `order` (absent names skipped)."""
    columns: dict[str, pa.ChunkedArray] = {}
    for part in parts:
        columns.update(zip(part.column_names, part.columns, strict=True))
    names = [c for c in order if c in columns]
    if not names:
        return parts[0]
    return pa.table([columns[c] for c in names], names=names)


def open_base(
    storage: Storage, base_file: BaseFile, **kwargs: Any
) -> pq.ParquetFile | StitchedBaseFile:
    """A base file opened for reading: a skeleton file stitched with its source file, any
    other a parquet file (`kwargs` go to pyarrow.parquet.ParquetFile)."""
    if base_file.bootstrap_source is not None:
        return StitchedBaseFile(storage, base_file)
    return open_base_file(storage, base_file.path, **kwargs)


def read_with_footer(
    storage: Storage, base_file: BaseFile, without: Collection[str] = ()
) -> tuple[pa.Table, dict[str, str]]:
    """All rows of a base file (all columns but those `without`) and its footer key-value
    metadata (a skeleton file's, for a bootstrapped file group)."""
    if base_file.bootstrap_source is None:
        return read_base_file_with_footer(storage, base_file.path, without)
    stitched = StitchedBaseFile(storage, base_file)
    columns = [name for name in stitched.schema_arrow.names if name not in without]
    return stitched.read(columns), decoded_footer(stitched.metadata.metadata or {})
