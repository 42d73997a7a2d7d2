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

from hudi_core.arrow_utils import constant_strings, numbered_strings
from hudi_core.io.base_file import BaseFileWriter, ParquetSettings, read_base_file
from hudi_core.io.bloom_filter import BloomFilter, new_bloom_filter
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
    footer_avro_schema: str
    parquet: ParquetSettings
    bloom: BloomSettings | None  # None when meta fields are not populated
    merger: RecordMerger
    max_file_size: int
    rows_per_chunk: int  # rows written between two checks of the file size
    populate_meta_fields: bool

    def token(self, task_id: int) -> str:
        return write_token(task_id, self.stage_id, 0)


@dataclass
class CreateTask:
    """Writes rows new to the table into new file groups, rolling over at the max file size."""

    task_id: int
    partition_path: str
    file_ids: list[str]  # ids to use in turn; the last one is reused with a suffix if exceeded
    rows: pa.Table  # data columns plus key, partition and delete-flag columns

    def run(self, settings: WriteSettings) -> list[WriteStat]:
        started = time.monotonic()
        rows = _drop_deletes(self.rows)
        stats: list[WriteStat] = []
        offset = 0
        while offset < rows.num_rows or not stats:
            file_id = self._file_id(len(stats))
            writer = _open_writer(settings, self.task_id, self.partition_path, file_id, "CREATE")
            while offset < rows.num_rows and writer.bytes_written < settings.max_file_size:
                chunk = rows.slice(offset, settings.rows_per_chunk)
                position = writer.num_rows
                writer.write(_with_meta(chunk, settings, self.task_id, writer.path, position))
                offset += chunk.num_rows
            written = writer.close()
            stat = _stat(self.partition_path, file_id, written.path, written.size)
            stat.num_writes = stat.num_inserts = written.num_rows
            stats.append(stat)
            if rows.num_rows == 0:
                break
        _add_runtime(stats, started, create=True)
        return stats

    def _file_id(self, index: int) -> str:
        if index < len(self.file_ids):
            return self.file_ids[index]
        return f"{self.file_ids[-1].rsplit('-', 1)[0]}-{index}"


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
        stored = read_base_file(settings.storage, self.base_file.path)
        stored = _align_stored(stored, settings.file_schema)
        incoming = self.rows
        if self.match_keys:
            keys = incoming.column(RECORD_KEY_FIELD)
            position = pc.index_in(stored.column(RECORD_KEY_FIELD), value_set=keys)
        else:
            position = pa.nulls(stored.num_rows, pa.int32())
        plan = _merge_plan(stored, incoming, position, settings.merger)
        writer = _open_writer(settings, self.task_id, self.partition_path, self.file_id, "MERGE")
        merged = _merged_rows(stored, incoming, plan, settings, self.task_id, writer.path)
        writer.write(merged)
        written = writer.close()
        stat = _stat(self.partition_path, self.file_id, written.path, written.size)
        stat.prev_commit = self.base_file.instant_time
        stat.num_writes = written.num_rows
        stat.num_update_writes = plan.updates
        stat.num_deletes = plan.deletes
        stat.num_inserts = plan.inserts
        _add_runtime([stat], started, create=False)
        return [stat]


@dataclass
class _MergePlan:
    source: np.ndarray  # per output row: index into stored, or -1 - index into incoming
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
    seqno = pc.if_else(
        pa.array(plan.from_incoming),
        numbered_strings(f"{settings.instant_time}_{task_id}_", merged.num_rows),
        merged.column(COMMIT_SEQNO_FIELD),
    )
    merged = merged.set_column(1, COMMIT_SEQNO_FIELD, seqno)
    file_name = constant_strings(path.rsplit("/", 1)[-1], merged.num_rows)
    return merged.set_column(4, FILE_NAME_FIELD, file_name)


def _with_meta(
    rows: pa.Table, settings: WriteSettings, task_id: int, path: str, first_position: int
) -> pa.Table:
    """Rows shaped as the file schema: meta columns filled for a write at this instant."""
    n = rows.num_rows
    if settings.populate_meta_fields:
        meta = {
            COMMIT_TIME_FIELD: constant_strings(settings.instant_time, n),
            COMMIT_SEQNO_FIELD: numbered_strings(
                f"{settings.instant_time}_{task_id}_", n, first_position
            ),
            RECORD_KEY_FIELD: rows.column(RECORD_KEY_FIELD),
            PARTITION_PATH_FIELD: rows.column(PARTITION_PATH_FIELD),
            FILE_NAME_FIELD: constant_strings(path.rsplit("/", 1)[-1], n),
        }
    else:
        meta = {name: pa.nulls(n, pa.string()) for name in META_FIELDS}
    data = [rows.column(f.name) for f in settings.file_schema if f.name not in META_FIELDS]
    columns = [meta[name] for name in META_FIELDS] + data
    return pa.Table.from_arrays(columns, schema=settings.file_schema)


def _align_stored(stored: pa.Table, file_schema: pa.Schema) -> pa.Table:
    """A stored base file's rows in the current file schema (columns added since are null)."""
    return cast_batch_to_schema(stored, file_schema)


def _drop_deletes(rows: pa.Table) -> pa.Table:
    return rows.filter(pc.invert(rows.column(DELETE_FLAG)))


def _open_writer(
    settings: WriteSettings, task_id: int, partition_path: str, file_id: str, io_type: str
) -> BaseFileWriter:
    name = base_file_name(file_id, settings.token(task_id), settings.instant_time)
    path = f"{partition_path}/{name}" if partition_path else name
    Markers(settings.storage, settings.instant_time).create(path, io_type)
    bloom = settings.bloom.new_filter() if settings.bloom else None
    return BaseFileWriter(
        settings.storage, path, settings.file_schema, settings.footer_avro_schema,
        settings.parquet, bloom,
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
