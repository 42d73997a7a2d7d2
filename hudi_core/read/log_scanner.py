"""Scanning the log files of a file slice: which blocks count, and the record versions in them.

Blocks are taken in log order (files by version, blocks in file order). A block counts when
its instant completed (or predates the active timeline) and is not after the read's instant;
a rollback block cancels every earlier block of the instant it targets; corrupt blocks are
counted and skipped. The versions come out as rows of the table's file schema plus the merge
columns (arrival order, delete flags) the record merger works with.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.io.log_blocks import data_block_batches, data_block_records, deleted_keys
from hudi_core.io.log_format import (
    BlockType,
    HeaderKey,
    LogBlock,
    load_content,
    read_log_block_headers,
)
from hudi_core.merge.record_merger import (
    DELETE_COLUMN,
    IS_DELETED_COLUMN,
    NATURAL_COLUMN,
    SEQ_COLUMN,
)
from hudi_core.model.file_group import FileSlice
from hudi_core.read.file_system_view import pending_instant_times
from hudi_core.schema.evolution import cast_batch_to_schema
from hudi_core.schema.meta_fields import (
    OPERATION_FIELD,
    PARTITION_PATH_FIELD,
    RECORD_KEY_FIELD,
    REMOVING_OPERATIONS,
)
from hudi_core.storage import Storage
from hudi_core.timeline import ActiveTimeline

_LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class InstantFilter:
    """Which block instants a read accepts."""

    completed: frozenset[str]
    pending: frozenset[str]
    timeline_start: str | None
    as_of: str | None = None
    begin: str | None = None  # exclusive; incremental reads only

    @classmethod
    def of(cls, timeline: ActiveTimeline, as_of: str | None = None) -> InstantFilter:
        completed = [i.timestamp for i in timeline.completed_writes()]
        pending = pending_instant_times(timeline)
        return cls(frozenset(completed), pending, timeline.timeline_start(), as_of)

    def accepts(self, instant: str | None) -> bool:
        if instant is None:
            return False
        if self.as_of is not None and instant > self.as_of:
            return False
        if self.begin is not None and instant <= self.begin:
            return False
        if instant in self.completed:
            return True
        if instant in self.pending or self.timeline_start is None:
            return False
        return instant < self.timeline_start  # older than the active timeline: archived


@dataclass
class ScanStats:
    blocks: int = 0
    corrupt_blocks: int = 0
    rollback_blocks: int = 0  # command blocks
    rolled_back_blocks: int = 0  # data and delete blocks they cancelled
    skipped_blocks: int = 0  # of instants the read does not see


@dataclass
class LoggedBlock:
    path: str
    block: LogBlock  # without its content until read


@dataclass
class SliceLog:
    """The blocks of a slice's log files that count for one read."""

    blocks: list[LoggedBlock] = field(default_factory=list)
    stats: ScanStats = field(default_factory=ScanStats)

    @classmethod
    def scan(cls, storage: Storage, file_slice: FileSlice, instants: InstantFilter) -> SliceLog:
        scanned: list[LoggedBlock] = []
        stats = ScanStats()
        for log_file in file_slice.log_files:
            for block in read_log_block_headers(storage, log_file.path):
                stats.blocks += 1
                if block.block_type is BlockType.CORRUPT:
                    stats.corrupt_blocks += 1
                elif block.is_rollback:
                    stats.rollback_blocks += 1
                    target = block.header.get(HeaderKey.TARGET_INSTANT_TIME)
                    kept = [b for b in scanned if b.block.instant_time != target]
                    stats.rolled_back_blocks += len(scanned) - len(kept)
                    scanned = kept
                elif block.block_type in _RECORD_BLOCKS:
                    scanned.append(LoggedBlock(log_file.path, block))
        if stats.corrupt_blocks:
            _LOG.warning(
                "skipped %d corrupt or truncated log block(s) in file group %s of partition '%s'",
                stats.corrupt_blocks,
                file_slice.file_id,
                file_slice.partition_path,
            )
        log = cls(stats=stats)
        for logged in scanned:
            if instants.accepts(logged.block.instant_time):
                log.blocks.append(logged)
            else:
                stats.skipped_blocks += 1
        return log

    def versions(
        self, storage: Storage, schema: pa.Schema, ordering_field: str | None
    ) -> Iterator[pa.Table]:
        """The blocks' records as versions in `schema` plus the merge columns, a bounded
        number of records at a time, in log order."""
        seq = 0
        for logged in self.blocks:
            block = load_content(storage, logged.path, logged.block)
            chunks: Iterable[pa.Table]
            if block.block_type is BlockType.DELETE:
                chunks = [_delete_versions(block, schema, ordering_field)]
            else:
                chunks = (_data_versions(batch, schema) for batch in data_block_batches(block))
            for rows in chunks:
                order = pa.array(np.arange(seq, seq + rows.num_rows))
                seq += rows.num_rows
                yield rows.append_column(SEQ_COLUMN, order)

    def data_records(self, storage: Storage, schema: pa.Schema) -> Iterator[pa.Table]:
        """The records of the data blocks as written, deletes not applied (skip-merge reads)."""
        for logged in self.blocks:
            if logged.block.block_type is not BlockType.DELETE:
                block = load_content(storage, logged.path, logged.block)
                yield _in_schema(data_block_records(block), schema)


_RECORD_BLOCKS = (BlockType.AVRO_DATA, BlockType.PARQUET_DATA, BlockType.DELETE)


def _in_schema(records: pa.Table, schema: pa.Schema) -> pa.Table:
    """A data block's records in the read schema. A block written before a column was
    dropped from the table still holds it: it is left out, as Apache Hudi's readers project
    a block onto the reader schema."""
    dropped = [n for n in records.column_names if n not in schema.names]
    return cast_batch_to_schema(records.drop_columns(dropped) if dropped else records, schema)


def _data_versions(records: pa.Table, schema: pa.Schema) -> pa.Table:
    deleted = np.zeros(records.num_rows, bool)
    if IS_DELETED_COLUMN in records.column_names:
        flagged = pc.fill_null(records.column(IS_DELETED_COLUMN), False)
        deleted |= flagged.to_numpy(zero_copy_only=False)
    if OPERATION_FIELD in records.column_names:
        removes = pc.is_in(records.column(OPERATION_FIELD), pa.array(REMOVING_OPERATIONS))
        deleted |= pc.fill_null(removes, False).to_numpy(zero_copy_only=False)
    rows = _in_schema(records, schema)
    rows = rows.append_column(DELETE_COLUMN, pa.array(deleted))
    return rows.append_column(NATURAL_COLUMN, pa.array(np.zeros(records.num_rows, bool)))


def _delete_versions(block: LogBlock, schema: pa.Schema, ordering_field: str | None) -> pa.Table:
    """Deleted keys as versions: nulls but for the key, partition and ordering value."""
    deleted = deleted_keys(block)
    n = len(deleted.keys)
    natural = deleted.natural.copy()
    columns = {f.name: pa.nulls(n, f.type) for f in schema}
    columns[RECORD_KEY_FIELD] = deleted.keys.cast(pa.string())
    columns[PARTITION_PATH_FIELD] = deleted.partitions.cast(pa.string())
    if ordering_field in columns and not natural.all():
        try:
            columns[ordering_field] = deleted.ordering.cast(schema.field(ordering_field).type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            natural[:] = True  # not comparable with the ordering field: delete unconditionally
    rows = pa.Table.from_arrays([columns[f.name] for f in schema], schema=schema)
    rows = rows.append_column(DELETE_COLUMN, pa.array(np.ones(n, bool)))
    return rows.append_column(NATURAL_COLUMN, pa.array(natural))
