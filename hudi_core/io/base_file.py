"""Parquet base files: written with the footer Apache Hudi expects, read back as Arrow.

The footer carries the Avro schema (`parquet.avro.schema`, with the meta fields), and, when
meta fields are populated, the bloom filter of the record keys and their min/max, which the
bloom index and Apache Hudi's own tools read.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_core.config import storage_options as S
from hudi_core.config.option import Options
from hudi_core.io.bloom_filter import (
    FOOTER_MAX_RECORD_KEY,
    FOOTER_MIN_RECORD_KEY,
    BloomFilter,
    bloom_filter_footer,
)
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
        storage.makedirs(path.rsplit("/", 1)[0] if "/" in path else "")
        self._sink = storage.fs.open_output_stream(storage.full_path(path))
        self._writer = pq.ParquetWriter(
            self._sink,
            schema,
            compression=settings.compression,
            use_dictionary=_dictionary_columns(schema) if settings.dictionary else False,
            data_page_size=settings.page_size,
            store_schema=False,  # Hudi files carry the Avro schema, not an Arrow one
            version="2.6",
        )

    @property
    def bytes_written(self) -> int:
        return self._sink.tell()

    def write(self, table: pa.Table, new_keys: pa.Array | None = None) -> None:
        """Writes rows; `new_keys` (default: all keys of `table`) go into the bloom filter,
        for a filter resumed from a file whose other keys it already holds."""
        if table.num_rows == 0:
            return
        if self.bloom_filter is not None:
            keys = table.column(RECORD_KEY_COLUMN)
            self.bloom_filter.add_keys(keys if new_keys is None else new_keys)
            self._track_key_range(keys)
        self._writer.write_table(table, row_group_size=self._rows_per_group(table))
        self.num_rows += table.num_rows

    def close(self) -> BaseFileStats:
        footer = dict(self._footer)
        if self.bloom_filter is not None and self.num_rows:
            footer.update(bloom_filter_footer(self.bloom_filter))
            footer[FOOTER_MIN_RECORD_KEY] = self._min_key
            footer[FOOTER_MAX_RECORD_KEY] = self._max_key
        self._writer.add_key_value_metadata(footer)
        self._writer.close()
        self._sink.close()
        return BaseFileStats(self.path, self.num_rows, self.storage.file_size(self.path))

    def _track_key_range(self, keys: pa.ChunkedArray) -> None:
        bounds = pc.min_max(keys)
        low, high = bounds["min"].as_py(), bounds["max"].as_py()
        if self._min_key is None or low < self._min_key:
            self._min_key = low
        if self._max_key is None or high > self._max_key:
            self._max_key = high

    def _rows_per_group(self, table: pa.Table) -> int:
        bytes_per_row = max(1, table.nbytes // max(1, table.num_rows))
        return max(1, self.settings.row_group_bytes // bytes_per_row)


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


def read_base_file(storage: Storage, path: str, columns: list[str] | None = None) -> pa.Table:
    return pq.read_table(storage.full_path(path), columns=columns, filesystem=storage.fs)


def read_base_file_with_footer(storage: Storage, path: str) -> tuple[pa.Table, dict[str, str]]:
    """All rows of a base file and its footer key-value metadata, from one open."""
    with storage.fs.open_input_file(storage.full_path(path)) as source:
        parquet = pq.ParquetFile(source)
        footer = parquet.metadata.metadata or {}
        return parquet.read(), {k.decode(): v.decode() for k, v in footer.items()}


def read_footer(storage: Storage, path: str) -> dict[str, str]:
    """The key-value metadata of a base file's footer, decoded."""
    with storage.fs.open_input_file(storage.full_path(path)) as source:
        metadata = pq.read_metadata(source).metadata or {}
    return {k.decode(): v.decode() for k, v in metadata.items()}
