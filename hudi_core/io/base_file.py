"""Parquet base files: written with the footer Apache Hudi expects, read back as Arrow.

The footer carries the Avro schema (`parquet.avro.schema`, with the meta fields), and, when
meta fields are populated, the bloom filter of the record keys and their min/max, which the
bloom index and Apache Hudi's own tools read.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_core.config import storage_options as S
from hudi_core.config.option import Options
from hudi_core.errors import CorruptFileError, MissingDataFileError
from hudi_core.io.bloom_filter import (
    FOOTER_MAX_RECORD_KEY,
    FOOTER_MIN_RECORD_KEY,
    BloomFilter,
    bloom_filter_footer,
)
from hudi_core.model.file_names import BaseFileName
from hudi_core.storage import Storage

FOOTER_AVRO_SCHEMA = "parquet.avro.schema"
FOOTER_WRITER_MODEL = "writer.model.name"
RECORD_KEY_COLUMN = "_hoodie_record_key"


@dataclass(frozen=True)
class ParquetSettings:
    compression: str
    page_size: int
    row_group_bytes: int
    dictionary: bool

    @classmethod
    def from_options(cls, options: Options) -> ParquetSettings:
        codec = options.get_option(S.PARQUET_COMPRESSION_CODEC)
        return cls(
            compression="none" if codec == "uncompressed" else codec,
            page_size=options.get_option(S.PARQUET_PAGE_SIZE),
            row_group_bytes=options.get_option(S.PARQUET_BLOCK_SIZE),
            dictionary=options.get_option(S.PARQUET_DICTIONARY_ENABLED),
        )


@dataclass(frozen=True)
class BaseFileStats:
    path: str
    num_rows: int
    size: int


class BaseFileWriter:
    """Writes one base file, in chunks; the footer is completed on close."""

    def __init__(
        self,
        storage: Storage,
        path: str,
        schema: pa.Schema,
        avro_schema_json: str,
        settings: ParquetSettings,
        bloom_filter: BloomFilter | None,
    ) -> None:
        self.storage = storage
        self.path = path
        self.settings = settings
        self.bloom_filter = bloom_filter
        self.num_rows = 0
        self._min_key: str | None = None
        self._max_key: str | None = None
        self._footer = {FOOTER_AVRO_SCHEMA: avro_schema_json, FOOTER_WRITER_MODEL: "avro"}
        self._schema = schema
        storage.makedirs(path.rsplit("/", 1)[0] if "/" in path else "")
        self._sink = storage.fs.open_output_stream(storage.full_path(path))
        # Opened on the first rows: which columns to dictionary-encode depends on them.
        self._writer: pq.ParquetWriter | None = None

    @property
    def bytes_written(self) -> int:
        return int(self._sink.tell())

    def write(self, table: pa.Table, new_keys: pa.Array | None = None) -> None:
        """Writes rows; `new_keys` (default: all keys of `table`) go into the bloom filter,
        for a filter resumed from a file whose other keys it already holds."""
        if table.num_rows == 0:
            return
        if self.bloom_filter is not None:
            keys = table.column(RECORD_KEY_COLUMN)
            self.bloom_filter.add_keys(keys if new_keys is None else new_keys)
            self._track_key_range(keys)
        self._open(table).write_table(table, row_group_size=self._rows_per_group(table))
        self.num_rows += table.num_rows

    def close(self) -> BaseFileStats:
        footer = dict(self._footer)
        # The key range is tracked with the bloom filter, from the first row written.
        if (
            self.bloom_filter is not None
            and self._min_key is not None
            and self._max_key is not None
        ):
            footer.update(bloom_filter_footer(self.bloom_filter))
            footer[FOOTER_MIN_RECORD_KEY] = self._min_key
            footer[FOOTER_MAX_RECORD_KEY] = self._max_key
        writer = self._open(None)
        writer.add_key_value_metadata(footer)
        writer.close()
        self._sink.close()
        return BaseFileStats(self.path, self.num_rows, self.storage.file_size(self.path))

    def _open(self, first: pa.Table | None) -> pq.ParquetWriter:
        """The parquet writer, opened on the `first` rows written (None: a file of no rows)."""
        if self._writer is None:
            dictionary: list[str] | bool = False
            if self.settings.dictionary:
                dictionary = _dictionary_columns(self._schema)
                if first is not None:
                    dictionary = _worth_a_dictionary(dictionary, first)
            self._writer = pq.ParquetWriter(
                self._sink,
                self._schema,
                compression=self.settings.compression,
                use_dictionary=dictionary,
                data_page_size=self.settings.page_size,
                store_schema=False,  # Hudi files carry the Avro schema, not an Arrow one
                version="2.6",
            )
        return self._writer

    def _track_key_range(self, keys: pa.ChunkedArray) -> None:
        bounds = pc.min_max(keys)
        low, high = bounds["min"].as_py(), bounds["max"].as_py()
        if self._min_key is None or low < self._min_key:
            self._min_key = low
        if self._max_key is None or high > self._max_key:
            self._max_key = high

    def _rows_per_group(self, table: pa.Table) -> int:
        bytes_per_row = max(1, table.nbytes // max(1, table.num_rows))
        return max(1, self.settings.row_group_bytes // int(bytes_per_row))


# Unique per record by construction: dictionary encoding would only be tried and dropped.
_UNIQUE_COLUMNS = ("_hoodie_commit_seqno", RECORD_KEY_COLUMN)


@functools.lru_cache(maxsize=64)
def _dictionary_columns(schema: pa.Schema) -> list[str]:
    """Parquet leaf column paths to dictionary-encode: all but the unique meta columns."""
    sink = pa.BufferOutputStream()
    pq.write_table(schema.empty_table(), sink, store_schema=False)
    parquet_schema = pq.read_metadata(pa.BufferReader(sink.getvalue())).schema
    paths = [parquet_schema.column(i).path for i in range(len(parquet_schema))]
    return [path for path in paths if path not in _UNIQUE_COLUMNS]


# Values of a column's first rows looked at to tell whether a dictionary pays off.
_DICTIONARY_SAMPLE = 1024
_MOSTLY_DISTINCT = 0.9


def _worth_a_dictionary(candidates: list[str], first: pa.Table) -> list[str]:
    """The candidate columns worth dictionary-encoding, judged on the first rows written.

    Like parquet-mr, which drops a column's dictionary when it does not make the first page
    smaller, a top-level column whose sampled values are mostly distinct is written plain:
    Arrow would otherwise hash every value of the file into a dictionary that only grows it.
    """
    sample = first.slice(0, _DICTIONARY_SAMPLE)
    rows = sample.num_rows
    if rows < 64:  # too few to tell
        return candidates
    names = set(first.column_names)
    kept = []
    for path in candidates:
        if path in names:  # a top-level column (nested leaves keep their dictionary)
            column = sample.column(path)
            if not pa.types.is_dictionary(column.type) and (
                len(column.unique()) > _MOSTLY_DISTINCT * (rows - column.null_count)
            ):
                continue
        kept.append(path)
    return kept


# pyarrow reports failures of remote storage as OSError, as it does damage to a file's
# pages; messages with these markers are the storage's, not the file's.
_TRANSPORT_MARKERS = (
    "AWS Error",
    "When reading",
    "When getting",
    "When opening",
    "HDFS",
    "onnection",
    "timed out",
    "Timeout",
    "curl",
)


@contextlib.contextmanager
def parquet_errors(storage: Storage, path: str) -> Iterator[None]:
    """Reads of the base file at `path` inside this block raise a CorruptFileError naming
    it, what is wrong and what to do, when the file is damaged (truncated, overwritten,
    not parquet) or gone; failures of the storage itself pass through."""
    try:
        yield
    except FileNotFoundError as exc:
        raise MissingDataFileError(
            f"{path} does not exist: the table's listing named it, so it was deleted since "
            "(a clean or rollback running meanwhile?); reload the table and retry"
        ) from exc
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
        if isinstance(exc, OSError) and (
            exc.errno is not None or any(m in str(exc) for m in _TRANSPORT_MARKERS)
        ):
            raise
        raise _corrupt_base_file(storage, path, exc) from exc


def _corrupt_base_file(storage: Storage, path: str, exc: Exception) -> CorruptFileError:
    detail = str(exc).split("\n")[0]
    try:
        size = f"{storage.file_size(path)} bytes"
    except OSError:
        size = "size unknown"
    if "file size is 0" in detail:
        problem = "empty, truncated to nothing"
    elif "magic bytes not found" in detail:
        problem = "no parquet footer at its end: truncated, or not a parquet file"
    else:
        problem = f"its parquet data is damaged ({detail})"
    parsed = BaseFileName.parse(path.rsplit("/", 1)[-1])
    hint = "restore it from a backup"
    if parsed is not None:
        ts = parsed.instant_time
        hint += (
            f", or, if {ts} (the write that made it) is the table's latest write, roll that "
            f"write back with HudiTable.rollback('{ts}')"
        )
    return CorruptFileError(f"base file {path} ({size}): {problem}; {hint}")


def open_base_file(storage: Storage, path: str, **kwargs: Any) -> pq.ParquetFile:
    """A base file opened for reading (its footer read); a CorruptFileError naming it when
    the footer cannot be read. Wrap reads of its row groups in `parquet_errors`."""
    with parquet_errors(storage, path):
        return pq.ParquetFile(storage.full_path(path), filesystem=storage.fs, **kwargs)


def check_base_file(storage: Storage, path: str) -> None:
    """Raises the CorruptFileError of a base file whose footer cannot be read (after a read
    failed somewhere without saying which file was to blame)."""
    with parquet_errors(storage, path):
        pq.read_metadata(storage.full_path(path), filesystem=storage.fs)


def read_base_file(storage: Storage, path: str, columns: list[str] | None = None) -> pa.Table:
    with parquet_errors(storage, path):
        return pq.read_table(storage.full_path(path), columns=columns, filesystem=storage.fs)


def read_base_file_with_footer(
    storage: Storage, path: str, without: Collection[str] = ()
) -> tuple[pa.Table, dict[str, str]]:
    """All rows of a base file (all columns but those `without`) and its footer key-value
    metadata, from one open."""
    with parquet_errors(storage, path), storage.fs.open_input_file(storage.full_path(path)) as f:
        parquet = pq.ParquetFile(f)
        footer = parquet.metadata.metadata or {}
        columns = [name for name in parquet.schema_arrow.names if name not in without]
        return parquet.read(columns=columns), decoded_footer(footer)


def read_footer(storage: Storage, path: str) -> dict[str, str]:
    """The key-value metadata of a base file's footer, decoded."""
    with parquet_errors(storage, path), storage.fs.open_input_file(storage.full_path(path)) as f:
        metadata = pq.read_metadata(f).metadata or {}
    return decoded_footer(metadata)


def decoded_footer(footer: dict[bytes, bytes]) -> dict[str, str]:
    return {k.decode(): v.decode() for k, v in footer.items()}
