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

from hudi_core.arrow_utils import constant_dictionary, constant_strings, numbered_strings
from hudi_core.io.base_file import BaseFileWriter, ParquetSettings, read_base_file_with_footer
from hudi_core.io.bloom_filter import (
    BloomFilter,
    bloom_filter_from_footer,
    new_bloom_filter,
    resume_bloom_filter,
)
from hudi_core.keygen import KeyGenerator
from hudi_core.merge.record_merger import RecordMerger
from hudi_core.model.commit_metadata import NULL_COMMIT, RuntimeStats, WriteStat
from hudi_core.model.file_group import BaseFile
from hudi_core.model.file_names import base_file_name, write_token
from hudi_core.schema.evolution import cast_batch_to_schema
from hudi_core.schema.meta_fields import (
    COMMIT_SEQNO_FIELD,
    COMMIT_TIME_FIELD,
    FILE_NAME_FIELD,
    META_FIELDS,
    PARTITION_PATH_FIELD,
    RECORD_KEY_FIELD,
)
from hudi_core.storage import Storage
from hudi_core.write.markers import Markers

DELETE_FLAG = "__hudi_is_delete"  # set on incoming rows that delete their key


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

    def token(self, task_id: int) -> str:
        return write_token(task_id, self.stage_id, 0)

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
        started = time.monotonic()
        rows = self.rows if self.order is None else self.rows.take(self.order)
        rows = _drop_deletes(rows)
        stats: list[WriteStat] = []
        offset, bytes_per_row = 0, float(settings.record_size)
        while offset < rows.num_rows:
            file_id = self._file_id(len(stats))
            writer = _open_writer(settings, self.task_id, self.partition_path, file_id, "CREATE")
            while offset < rows.num_rows and _has_room(writer, settings.max_file_size):
                count = _rows_that_fit(writer, settings.max_file_size, bytes_per_row)
                chunk = rows.slice(offset, count)
                first = writer.num_rows
                writer.write(_with_meta(chunk, settings, self.task_id, writer.path, first))
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
        stored, footer = read_base_file_with_footer(settings.storage, self.base_file.path)
        incoming = self.rows
        if self.match_keys:
            keys = incoming.column(RECORD_KEY_FIELD)
            position = pc.index_in(settings.stored_keys(stored), value_set=keys)
        else:
            position = pa.nulls(stored.num_rows, pa.int32())
        plan = _merge_plan(stored, incoming, position, settings.merger)
        bloom, new_keys = self._bloom_filter(settings, footer, plan)
        writer = _open_writer(
            settings, self.task_id, self.partition_path, self.file_id, "MERGE", bloom
        )
        stored = _as_rows_of(stored, writer.path, settings)
        merged = _merged_rows(stored, incoming, plan, settings, self.task_id, writer.path)
        writer.write(merged, new_keys)
        written = writer.close()
        stat = _stat(self.partition_path, self.file_id, written.path, written.size)
        stat.prev_commit = self.base_file.instant_time
        stat.num_writes = written.num_rows
        stat.num_update_writes = plan.updates
        stat.num_deletes = plan.deletes
        stat.num_inserts = plan.inserts
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
                return resumed, self.rows.column(RECORD_KEY_FIELD).take(pa.array(plan.inserted))
        return fresh, None


@dataclass
class _MergePlan:
    source: np.ndarray  # per output row: index into stored, or -1 - index into incoming
    inserted: np.ndarray  # incoming rows appended as new records
    from_incoming: np.ndarray  # per output row: whether it is a new version
    updates: int
    deletes: int
    inserts: int


def _merge_plan(
    stored: pa.Table, incoming: pa.Table, position: pa.Array, merger: RecordMerger
) -> _MergePlan:
    matched = pc.is_valid(position).to_numpy(zero_copy_only=False)
    match_at = pc.fill_null(position, 0).to_numpy(zero_copy_only=False).astype(np.int64)
    is_delete = incoming.column(DELETE_FLAG).to_numpy()
    stored_rows = np.flatnonzero(matched)
    incoming_rows = match_at[stored_rows]
    wins = merger.incoming_wins(stored.take(stored_rows), incoming.take(incoming_rows))
    takes_incoming = np.zeros(stored.num_rows, dtype=bool)
    dropped = np.zeros(stored.num_rows, dtype=bool)
    takes_incoming[stored_rows[wins & ~is_delete[incoming_rows]]] = True
    dropped[stored_rows[wins & is_delete[incoming_rows]]] = True
    kept = ~dropped
    source = np.where(takes_incoming, -1 - match_at, np.arange(stored.num_rows))[kept]
    consumed = np.zeros(incoming.num_rows, dtype=bool)
    consumed[incoming_rows] = True
    new_rows = np.flatnonzero(~consumed & ~is_delete)
    return _MergePlan(
        source=np.concatenate([source, -1 - new_rows]),
        inserted=new_rows,
        from_incoming=np.concatenate([takes_incoming[kept], np.ones(len(new_rows), bool)]),
        updates=int(takes_incoming.sum()),
        deletes=int(dropped.sum()),
        inserts=len(new_rows),
    )


def _merged_rows(
    stored: pa.Table,
    incoming: pa.Table,
    plan: _MergePlan,
    settings: WriteSettings,
    task_id: int,
    path: str,
) -> pa.Table:
    """Output rows in plan order: stored rows as they were, new versions with fresh meta."""
    used = np.unique(-1 - plan.source[plan.source < 0])
    if len(used):
        fresh = _with_meta(incoming.take(pa.array(used)), settings, task_id, path, 0)
        stored = pa.concat_tables([stored, fresh])
    slot = stored.num_rows - len(used) + np.searchsorted(used, -1 - plan.source)
    merged = stored.take(pa.array(np.where(plan.source >= 0, plan.source, slot)))
    if not settings.populate_meta_fields:
        return merged
    seqno = pc.if_else(  # a new version is numbered by its place in the new file
        pa.array(plan.from_incoming),
        numbered_strings(f"{settings.instant_time}_{task_id}_", merged.num_rows),
        merged.column(COMMIT_SEQNO_FIELD),
    )
    return merged.set_column(1, COMMIT_SEQNO_FIELD, seqno)


def _with_meta(
    rows: pa.Table, settings: WriteSettings, task_id: int, path: str, first_position: int
) -> pa.Table:
    """New rows in the writer schema, meta columns filled for a write at this instant."""
    n = rows.num_rows
    meta = _constant_meta(settings, path, n)
    if settings.populate_meta_fields:
        meta[COMMIT_TIME_FIELD] = constant_strings(settings.instant_time, n)
        prefix = f"{settings.instant_time}_{task_id}_"
        meta[COMMIT_SEQNO_FIELD] = numbered_strings(prefix, n, first_position)
        meta[RECORD_KEY_FIELD] = rows.column(RECORD_KEY_FIELD)
    data = [rows.column(f.name) for f in settings.file_schema if f.name not in META_FIELDS]
    columns = [meta[name] for name in META_FIELDS] + data
    return pa.Table.from_arrays(columns, schema=settings.writer_schema)


def _as_rows_of(stored: pa.Table, path: str, settings: WriteSettings) -> pa.Table:
    """A stored base file's rows as rows of the new file at `path`: in the current schema
    (columns added since come back null), with this file's name and partition."""
    stored = cast_batch_to_schema(stored, settings.file_schema)
    for name, column in _constant_meta(settings, path, stored.num_rows).items():
        if name in (PARTITION_PATH_FIELD, FILE_NAME_FIELD):
            stored = stored.set_column(stored.schema.get_field_index(name), name, column)
    return stored.cast(settings.writer_schema)


def _constant_meta(settings: WriteSettings, path: str, n: int) -> dict[str, pa.Array]:
    """Meta columns all null, but for the partition and file name when meta fields are kept."""
    meta = {f.name: pa.nulls(n, f.type) for f in settings.writer_schema if f.name in META_FIELDS}
    if settings.populate_meta_fields:
        partition, _, name = path.rpartition("/")
        meta[PARTITION_PATH_FIELD] = constant_dictionary(partition, n)
        meta[FILE_NAME_FIELD] = constant_dictionary(name, n)
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
    flags = rows.column(DELETE_FLAG)
    if not pc.any(flags).as_py():
        return rows  # the common case; filtering would copy every column
    return rows.filter(pc.invert(flags))


def _open_writer(
    settings: WriteSettings,
    task_id: int,
    partition_path: str,
    file_id: str,
    io_type: str,
    bloom: BloomFilter | None = None,
) -> BaseFileWriter:
    name = base_file_name(file_id, settings.token(task_id), settings.instant_time)
    path = f"{partition_path}/{name}" if partition_path else name
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
