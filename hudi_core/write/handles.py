"""Per-file-group write tasks: create new base files, or merge into a new version of one.

A task gets everything it needs in picklable form, so an engine may run it on a thread or on
a Spark executor. Tasks only write data files (after their marker) and return write stats;
the driver commits.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.arrow_utils import (
    constant_dictionary,
    constant_strings,
    numbered_strings,
    numbered_strings_at,
    replaced_at,
)
from hudi_core.engine import task_attempt
from hudi_core.io.base_file import BaseFileWriter, ParquetSettings, parquet_errors
from hudi_core.io.bloom_filter import (
    BloomFilter,
    bloom_filter_from_footer,
    new_bloom_filter,
    resume_bloom_filter,
)
from hudi_core.io.bootstrap_file import open_source_file, read_with_footer, with_folder_columns
from hudi_core.keygen import KeyGenerator
from hudi_core.merge.record_merger import (
    DELETE_COLUMN,
    NATURAL_COLUMN,
    RecordMerger,
    merge_into,
)
from hudi_core.model.commit_metadata import NULL_COMMIT, RuntimeStats, WriteStat
from hudi_core.model.file_group import BaseFile, BootstrapSource
from hudi_core.model.file_names import base_file_name, write_token
from hudi_core.schema.evolution import cast_batch_to_schema
from hudi_core.schema.meta_fields import (
    COMMIT_SEQNO_FIELD,
    COMMIT_TIME_FIELD,
    FILE_NAME_FIELD,
    INSERT_OPERATION,
    META_FIELDS,
    OPERATION_FIELD,
    PARTITION_PATH_FIELD,
    RECORD_KEY_FIELD,
    UPDATE_OPERATION,
)
from hudi_core.storage import Storage
from hudi_core.write.markers import IoType, Markers


@dataclass(frozen=True)
class BloomSettings:
    type_code: str
    num_entries: int
    fpp: float
    max_entries: int

    def new_filter(self) -> BloomFilter:
        return new_bloom_filter(self.type_code, self.num_entries, self.fpp, self.max_entries)


@dataclass(frozen=True)
class WriteSettings:
    """What every task of one write shares."""

    storage: Storage
    instant_time: str
    stage_id: int
    file_schema: pa.Schema  # meta columns, then the table's data columns
    writer_schema: pa.Schema  # file_schema with the per-file constant meta columns as dictionaries
    footer_avro_schema: str
    parquet: ParquetSettings
    bloom: BloomSettings | None  # None when meta fields are not populated
    merger: RecordMerger
    max_file_size: int
    record_size: int  # estimated bytes per record on disk, until measured on the data written
    populate_meta_fields: bool
    key_generator: KeyGenerator  # recomputes stored keys when meta fields are not populated
    changelog: bool = False  # files keep `_hoodie_operation` (I, -U, U, D)
    log_block_format: str = "avro"  # data blocks of merge-on-read logs: avro or parquet
    # hoodie.write.log.suffix: ends the names of this writer's log files (stage_id derives
    # from it, see file_names.log_suffix_stage_id); None: no suffix
    log_suffix: str | None = None

    def token(self, task_id: int) -> str:
        """A retried task (another attempt) writes files of other names."""
        return write_token(task_id, self.stage_id, task_attempt())

    def stored_keys(self, stored: pa.Table) -> pa.Array | pa.ChunkedArray:
        if self.populate_meta_fields:
            return stored.column(RECORD_KEY_FIELD)
        return self.key_generator.record_keys(stored)


@dataclass
class CreateTask:
    """Writes rows new to the table into new file groups, rolling over at the max file size."""

    task_id: int
    partition_path: str
    file_id: str  # of the first file; rolled-over files take the next '-<n>' suffixes
    rows: pa.Table  # data columns plus key, partition and delete-flag columns
    order: pa.Array | None = None  # the rows to write, by index into `rows`, in write order

    @property
    def num_rows(self) -> int:
        return self.rows.num_rows if self.order is None else len(self.order)

    def run(self, settings: WriteSettings) -> list[WriteStat]:
        rows = self.rows if self.order is None else self.rows.take(self.order)
        return self.write_files(_drop_deletes(rows), settings)

    def write_files(self, rows: pa.Table, settings: WriteSettings) -> list[WriteStat]:
        """New base files of `rows`, in order; one write stat per file."""
        started = time.monotonic()
        stats: list[WriteStat] = []
        offset, bytes_per_row = 0, float(settings.record_size)
        while offset < rows.num_rows:
            file_id = self._file_id(len(stats))
            path = new_file_path(settings, self.task_id, self.partition_path, file_id)
            writer = open_writer(settings, path, "CREATE")
            while offset < rows.num_rows and _has_room(writer, settings.max_file_size):
                count = _rows_that_fit(writer, settings.max_file_size, bytes_per_row)
                chunk = rows.slice(offset, count)
                first = writer.num_rows
                file = _file_of(writer.path)
                writer.write(with_meta(chunk, settings, self.task_id, file, first))
                offset += chunk.num_rows
                if writer.bytes_written:  # measured on this very data from now on
                    bytes_per_row = writer.bytes_written / writer.num_rows
            written = writer.close()
            stat = _stat(self.partition_path, file_id, written.path, written.size)
            stat.num_writes = stat.num_inserts = written.num_rows
            stats.append(stat)
        _add_runtime(stats, started, create=True)
        return stats

    def _file_id(self, index: int) -> str:
        """The id of the index-th file: a UUID with the suffix -<index>, as Apache Hudi rolls."""
        return f"{self.file_id.rsplit('-', 1)[0]}-{index}"


@dataclass
class SkeletonTask:
    """Writes the skeleton file of one source file of a metadata-only bootstrap: the meta
    columns of its rows, in its row order (readers stitch the two by position), keys from
    the table's key generator."""

    task_id: int
    partition_path: str  # the table partition the source file's rows belong to
    file_id: str
    source: BootstrapSource

    def run(self, settings: WriteSettings) -> tuple[WriteStat, pa.Schema]:
        """The skeleton's write stat, and the source file's schema."""
        started = time.monotonic()
        parquet = open_source_file(settings.storage, self.source)
        held = parquet.schema_arrow.names
        fields = [f for f in settings.key_generator.record_key_fields if f in held]
        with parquet_errors(settings.storage, self.source.uri):
            keyed = with_folder_columns(parquet.read(columns=fields), self.source, held)
        keys = settings.key_generator.record_keys(keyed)
        rows = pa.table({RECORD_KEY_FIELD: keys})
        path = new_file_path(settings, self.task_id, self.partition_path, self.file_id)
        writer = open_writer(settings, path, "CREATE")
        writer.write(with_meta(rows, settings, self.task_id, _file_of(path), 0))
        written = writer.close()
        stat = _stat(self.partition_path, self.file_id, written.path, written.size)
        stat.num_writes = stat.num_inserts = written.num_rows
        _add_runtime([stat], started, create=True)
        return stat, parquet.schema_arrow


_ROLL_SLACK = 0.05  # a file within 5% of the max size is full: no sliver row groups


def _has_room(writer: BaseFileWriter, max_file_size: int) -> bool:
    return writer.bytes_written < max_file_size * (1 - _ROLL_SLACK)


def _rows_that_fit(writer: BaseFileWriter, max_file_size: int, bytes_per_row: float) -> int:
    """Rows to write next: enough to fill the file, by the current bytes-per-row figure.

    The first piece of a file is a quarter of that, so that the figure is measured on the
    actual data before the rest is sized by it.
    """
    fit = max(1, int((max_file_size - writer.bytes_written) / max(bytes_per_row, 1.0)))
    return fit if writer.num_rows else max(1, fit // 4)


@dataclass
class MergeTask:
    """Merges incoming rows into a file group's latest base file, writing its next version.

    Stored rows keep their place (updated in place, or dropped when deleted); rows for keys
    the file does not hold are appended, as Apache Hudi's merge handle does.
    """

    task_id: int
    partition_path: str
    file_id: str
    base_file: BaseFile
    rows: pa.Table
    match_keys: bool = True  # False: inserts keep duplicates of stored keys (insert operation)

    def run(self, settings: WriteSettings) -> list[WriteStat]:
        started = time.monotonic()
        path = new_file_path(settings, self.task_id, self.partition_path, self.file_id)
        # The partition path and file name are set anew for the new file: not read at all.
        renamed = (PARTITION_PATH_FIELD, FILE_NAME_FIELD)
        stored, footer = read_with_footer(settings.storage, self.base_file, renamed)
        stored = as_rows_of(stored, path, settings)
        plan = _merge_plan(stored, self.rows, settings, self.task_id, path, self.match_keys)
        bloom, new_keys = self._bloom_filter(settings, footer, plan)
        writer = open_writer(settings, path, "MERGE", bloom)
        writer.write(plan.rows, new_keys)
        written = writer.close()
        stat = _stat(self.partition_path, self.file_id, written.path, written.size)
        stat.prev_commit = self.base_file.instant_time
        stat.num_writes = written.num_rows
        stat.num_update_writes = plan.updates
        stat.num_deletes = plan.deletes
        stat.num_inserts = len(plan.inserted_keys)
        _add_runtime([stat], started, create=False)
        return [stat]

    def _bloom_filter(
        self, settings: WriteSettings, footer: dict[str, str], plan: _MergePlan
    ) -> tuple[BloomFilter | None, pa.Array | None]:
        """The new file's filter and the keys still to add to it.

        Without deletes the new file holds the stored keys, in their order, then the inserted
        ones: the stored filter extended by the inserted keys equals one built from scratch,
        and skips hashing every stored key again.
        """
        if settings.bloom is None:
            return None, None
        fresh = settings.bloom.new_filter()
        if plan.deletes == 0:
            resumed = resume_bloom_filter(bloom_filter_from_footer(footer), fresh)
            if resumed is not None:
                return resumed, plan.inserted_keys
        return fresh, None


@dataclass
class _MergePlan:
    rows: pa.Table  # the new file's rows, in order
    inserted_keys: pa.Array  # keys of the rows appended as new records
    updates: int
    deletes: int


def _merge_plan(
    stored: pa.Table,
    incoming: pa.Table,
    settings: WriteSettings,
    task_id: int,
    path: str,
    match_keys: bool,
) -> _MergePlan:
    """The new file version: stored rows in place (merged with their incoming version, or
    dropped when it deletes them), then incoming rows for keys the file did not hold."""
    keys = incoming.column(RECORD_KEY_FIELD)
    operation: str | pa.Array = INSERT_OPERATION
    if settings.changelog and match_keys:
        stored_before = pc.is_in(keys, value_set=settings.stored_keys(stored))
        operation = pc.if_else(stored_before, UPDATE_OPERATION, INSERT_OPERATION)
    if match_keys:
        stored = _without_earlier_copies(stored, settings.stored_keys(stored), keys)
    fresh = with_meta(incoming, settings, task_id, _file_of(path), 0, operation)
    versions = with_delete_columns(fresh, incoming)
    outcome = merge_into(
        settings.merger, stored, settings.stored_keys(stored), versions, keys, match_keys
    )
    rows = outcome.rows
    if settings.populate_meta_fields:  # a new version is numbered by its place in the new file
        renewed = np.flatnonzero(outcome.renewed)  # numbers made for these rows only
        if len(renewed):
            seqno = replaced_at(
                rows.column(COMMIT_SEQNO_FIELD),
                renewed,
                numbered_strings_at(f"{settings.instant_time}_{task_id}_", renewed),
            )
            rows = rows.set_column(1, COMMIT_SEQNO_FIELD, seqno)
    return _MergePlan(
        rows=rows,
        inserted_keys=keys.take(pa.array(outcome.inserted)),
        updates=outcome.updates,
        deletes=outcome.deletes,
    )


def _without_earlier_copies(
    stored: pa.Table, stored_keys: pa.Array | pa.ChunkedArray, incoming_keys: pa.ChunkedArray
) -> pa.Table:
    """The stored rows but for earlier copies of a key the incoming rows update or delete: an
    insert may store a key twice in a file, and once written again it is one record (the
    last copy is merged), never two."""
    matched = np.flatnonzero(
        pc.is_in(stored_keys, value_set=incoming_keys).to_numpy(zero_copy_only=False)
    )
    if len(matched) < 2:
        return stored
    keys = pa.chunked_array([stored_keys]) if isinstance(stored_keys, pa.Array) else stored_keys
    codes = pc.dictionary_encode(keys.take(pa.array(matched)).combine_chunks()).indices
    codes_np = codes.to_numpy(zero_copy_only=False)
    if len(np.unique(codes_np)) == len(matched):
        return stored
    last = np.full(int(codes_np.max()) + 1, -1, dtype=np.int64)
    np.maximum.at(last, codes_np, matched)
    keep = np.ones(stored.num_rows, bool)
    keep[matched] = False
    keep[last] = True
    return stored.filter(pa.array(keep))


def with_delete_columns(rows: pa.Table, incoming: pa.Table) -> pa.Table:
    """`rows` with the delete flags of the incoming rows they were made from."""
    rows = rows.append_column(DELETE_COLUMN, incoming.column(DELETE_COLUMN))
    return rows.append_column(NATURAL_COLUMN, incoming.column(NATURAL_COLUMN))


@dataclass(frozen=True)
class FileIdentity:
    """What the per-file meta columns say: the partition, and the file name (a base file's
    name; for log records Apache Hudi writes the file id there)."""

    partition_path: str
    file_name: str


def _file_of(path: str) -> FileIdentity:
    partition, _, name = path.rpartition("/")
    return FileIdentity(partition, name)


def with_meta(
    rows: pa.Table,
    settings: WriteSettings,
    task_id: int,
    file: FileIdentity,
    first_position: int,
    operation: str | pa.Array = INSERT_OPERATION,
) -> pa.Table:
    """New rows in the writer schema, meta columns filled for a write at this instant.

    `operation` (I, U, D, one for all rows or one per row) fills `_hoodie_operation` when the
    table keeps it (changelog mode), unless the batch brought its own.
    """
    n = rows.num_rows
    meta = _constant_meta(settings, file, n)
    if settings.populate_meta_fields:
        meta[COMMIT_TIME_FIELD] = constant_strings(settings.instant_time, n)
        prefix = f"{settings.instant_time}_{task_id}_"
        meta[COMMIT_SEQNO_FIELD] = numbered_strings(prefix, n, first_position)
        meta[RECORD_KEY_FIELD] = rows.column(RECORD_KEY_FIELD)
        if settings.changelog:
            meta[OPERATION_FIELD] = _operations(rows, operation)
    return _in_writer_schema(rows, meta, settings)


def with_meta_of_groups(
    rows: pa.Table,
    settings: WriteSettings,
    groups: list[tuple[int, FileIdentity, int]],
    operation: str = INSERT_OPERATION,
) -> pa.Table:
    """`with_meta` of consecutive groups of rows at once, each (task id, file, row count)
    written by its own task from position 0: the same rows as with_meta of each group,
    concatenated."""
    n = rows.num_rows
    if not settings.populate_meta_fields:
        return with_meta(rows, settings, 0, FileIdentity("", ""), 0)
    counts = np.array([count for _, _, count in groups], np.int64)
    group = np.repeat(np.arange(len(groups), dtype=np.int32), counts)
    starts = np.cumsum(counts) - counts
    position = np.arange(n, dtype=np.int64) - np.repeat(starts, counts)
    prefixes = pa.array([f"{settings.instant_time}_{task_id}_" for task_id, _, _ in groups])
    indices = pa.array(group)

    def per_group(values: list[str]) -> pa.DictionaryArray:
        return pa.DictionaryArray.from_arrays(indices, pa.array(values, pa.string()))

    meta: dict[str, pa.Array | pa.ChunkedArray] = {
        f.name: pa.nulls(n, f.type) for f in settings.writer_schema if f.name in META_FIELDS
    }
    meta[PARTITION_PATH_FIELD] = per_group([file.partition_path for _, file, _ in groups])
    meta[FILE_NAME_FIELD] = per_group([file.file_name for _, file, _ in groups])
    meta[COMMIT_TIME_FIELD] = constant_strings(settings.instant_time, n)
    meta[COMMIT_SEQNO_FIELD] = pc.binary_join_element_wise(
        prefixes.take(indices), pc.cast(pa.array(position), pa.string()), ""
    )
    meta[RECORD_KEY_FIELD] = rows.column(RECORD_KEY_FIELD)
    if settings.changelog:
        meta[OPERATION_FIELD] = _operations(rows, operation)
    return _in_writer_schema(rows, meta, settings)


def _in_writer_schema(
    rows: pa.Table, meta: dict[str, pa.Array | pa.ChunkedArray], settings: WriteSettings
) -> pa.Table:
    n = rows.num_rows
    columns = [
        meta[f.name]
        if f.name in meta
        else rows.column(f.name)
        if f.name in rows.column_names
        else pa.nulls(n, f.type)  # deletes by key carry no data columns
        for f in settings.writer_schema
    ]
    return pa.Table.from_arrays(columns, schema=settings.writer_schema)


def _operations(rows: pa.Table, operation: str | pa.Array) -> pa.ChunkedArray:
    if isinstance(operation, str):
        operation = constant_strings(operation, rows.num_rows)
    ops = operation if isinstance(operation, pa.ChunkedArray) else pa.chunked_array([operation])
    if OPERATION_FIELD in rows.column_names:  # changes a CDC source spelled out itself
        return pc.coalesce(rows.column(OPERATION_FIELD), ops)
    return ops


def as_rows_of(stored: pa.Table, path: str, settings: WriteSettings) -> pa.Table:
    """A stored base file's rows as rows of the new file at `path`: in the current schema
    (columns added since come back null), with this file's name and partition."""
    stored = cast_batch_to_schema(stored, settings.file_schema)
    renamed = (PARTITION_PATH_FIELD, FILE_NAME_FIELD)  # without stored keys: all meta is null
    for name, column in _constant_meta(settings, _file_of(path), stored.num_rows).items():
        if name in renamed or not settings.populate_meta_fields:
            stored = stored.set_column(stored.schema.get_field_index(name), name, column)
    return stored.cast(settings.writer_schema)


def _constant_meta(settings: WriteSettings, file: FileIdentity, n: int) -> dict[str, pa.Array]:
    """Meta columns all null, but for the partition and file name when meta fields are kept."""
    meta = {f.name: pa.nulls(n, f.type) for f in settings.writer_schema if f.name in META_FIELDS}
    if settings.populate_meta_fields:
        meta[PARTITION_PATH_FIELD] = constant_dictionary(file.partition_path, n)
        meta[FILE_NAME_FIELD] = constant_dictionary(file.file_name, n)
    return meta


def writer_schema(file_schema: pa.Schema) -> pa.Schema:
    """The file schema as written: partition path and file name are one value per file, so
    they travel dictionary-encoded (parquet stores them the same way either way)."""
    dictionary = pa.dictionary(pa.int32(), pa.string())
    for name in (PARTITION_PATH_FIELD, FILE_NAME_FIELD):
        index = file_schema.get_field_index(name)
        file_schema = file_schema.set(index, file_schema.field(index).with_type(dictionary))
    return file_schema


def _drop_deletes(rows: pa.Table) -> pa.Table:
    flags = rows.column(DELETE_COLUMN)
    if not pc.any(flags).as_py():
        return rows  # the common case; filtering would copy every column
    return rows.filter(pc.invert(flags))


def new_file_path(settings: WriteSettings, task_id: int, partition_path: str, file_id: str) -> str:
    name = base_file_name(file_id, settings.token(task_id), settings.instant_time)
    return f"{partition_path}/{name}" if partition_path else name


def open_writer(
    settings: WriteSettings, path: str, io_type: IoType, bloom: BloomFilter | None = None
) -> BaseFileWriter:
    """A base file writer for `path`, after the marker that lets a rollback find the file."""
    Markers(settings.storage, settings.instant_time).create(path, io_type)
    if bloom is None and settings.bloom is not None:
        bloom = settings.bloom.new_filter()
    return BaseFileWriter(
        settings.storage,
        path,
        settings.writer_schema,
        settings.footer_avro_schema,
        settings.parquet,
        bloom,
    )


def _stat(partition: str, file_id: str, path: str, size: int) -> WriteStat:
    return WriteStat(
        file_id=file_id,
        partition_path=partition,
        path=path,
        prev_commit=NULL_COMMIT,
        total_write_bytes=size,
        file_size_in_bytes=size,
    )


def _add_runtime(stats: list[WriteStat], started: float, create: bool) -> None:
    millis = int((time.monotonic() - started) * 1000)
    for stat in stats:
        if create:
            stat.runtime_stats = RuntimeStats(total_create_time=millis)
        else:
            stat.runtime_stats = RuntimeStats(total_upsert_time=millis)
