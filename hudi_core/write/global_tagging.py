"""Tagging under a global index: each key lives in one partition of the table.

A global index (index.global_index) says where every incoming key is stored, in whatever
partition. What the write then does with a row, as Apache Hudi's HoodieIndexUtils does:

- a key stored nowhere is new: the row is an insert in the partition it names;
- a delete goes to the file group storing its key, whatever partition the row names (deletes
  without, or with a wrong, partition value delete);
- with update.partition.path=false, a row updates its key where it is stored: only its
  `_hoodie_partition_path` becomes the stored one, its data fields stay as they came;
- with update.partition.path=true (the default), a row naming another partition is merged
  with the stored record first; if the merged record stays in the stored partition (a late
  event under event-time ordering), the row updates it there; else the key moves: a delete
  goes to the old file group and the merged record is inserted into the new partition, in
  the same commit.

Deciding a move needs the stored record's latest version, base file merged with its log (a
merge-on-read key may also be found in two base files once it moved: the old file group
deleted it in a log, and only one of them holds it live). Those records are read only for
the rows that need them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.arrow_utils import constant_strings
from hudi_core.index.global_index import ROW, STORED_FILE_ID, STORED_PARTITION
from hudi_core.keygen import KeyGenerator
from hudi_core.merge.record_merger import (
    DELETE_COLUMN,
    NATURAL_COLUMN,
    MergeMode,
    RecordMerger,
    group_codes,
)
from hudi_core.model.file_group import FileSlice
from hudi_core.read.log_scanner import InstantFilter, SliceLog
from hudi_core.read.slice_merger import SliceMerger
from hudi_core.schema.evolution import cast_batch_to_schema
from hudi_core.schema.meta_fields import OPERATION_FIELD, PARTITION_PATH_FIELD, RECORD_KEY_FIELD
from hudi_core.storage import Storage

# Columns of prepared rows that are not the record's data.
_NOT_DATA = frozenset(
    [RECORD_KEY_FIELD, PARTITION_PATH_FIELD, DELETE_COLUMN, NATURAL_COLUMN, OPERATION_FIELD]
)

StoredLookup = tuple[FileSlice, pa.Array]  # a slice, and the keys wanted from it
ReadStored = Callable[[list[StoredLookup]], list[pa.Table]]


@dataclass(frozen=True)
class StoredRecordReader:
    """The latest live version of some keys of a file slice (base rows merged with the
    slice's log), in the table's file schema, with STORED_PARTITION and STORED_FILE_ID.
    Picklable: an engine may run it anywhere."""

    storage: Storage
    file_schema: pa.Schema  # meta columns, then the table's data columns
    merger: RecordMerger
    instants: InstantFilter  # which log blocks count (completed writes)
    memory_budget: int
    spill_path: str | None
    key_generator: KeyGenerator | None  # tables without stored keys

    def __call__(self, lookup: StoredLookup) -> pa.Table:
        file_slice, keys = lookup
        log = SliceLog.scan(self.storage, file_slice, self.instants)
        slice_merger = SliceMerger(
            self.storage,
            self.file_schema,
            self.merger,
            self.memory_budget,
            self.spill_path,
            key_generator=self.key_generator,
        )
        parts = [self.file_schema.empty_table()]
        for rows in slice_merger.merge(file_slice, log):
            wanted = pc.is_in(rows.column(RECORD_KEY_FIELD), value_set=keys)
            parts.append(cast_batch_to_schema(rows.filter(wanted), self.file_schema))
        found = pa.concat_tables(parts)
        n = found.num_rows
        found = found.append_column(
            STORED_PARTITION, constant_strings(file_slice.partition_path, n)
        )
        return found.append_column(STORED_FILE_ID, constant_strings(file_slice.file_id, n))


@dataclass(frozen=True)
class GlobalTagger:
    """Turns a batch's rows and their stored locations into the rows the write makes, each
    tagged with the file group it updates (null: an insert)."""

    update_partition_path: bool
    merger: RecordMerger
    slices: list[FileSlice]  # the slices the index looked in
    read_stored: ReadStored  # a StoredRecordReader mapped over lookups, on an engine

    def tag(self, rows: pa.Table, located: pa.Table) -> tuple[pa.Table, pa.Array]:
        """`located`: the stored locations of the rows' keys (index.global_index.locate)."""
        n = rows.num_rows
        count, partition, file_id = _first_locations(located, n)
        incoming = _strings(rows.column(PARTITION_PATH_FIELD))
        deletes = _flags(rows.column(DELETE_COLUMN))
        found = count > 0
        update = self.update_partition_path
        decides_by_merge = update and self.merger.mode is not MergeMode.COMMIT_TIME
        elsewhere = found & ~_equal(partition, incoming) & ~deletes
        # A key found twice, or that may move, is decided once: of a batch's rows of it (not
        # pre-combined), the last one counts, as Apache Hudi keeps one of them.
        dropped = _earlier_rows_of_keys(rows, found & ((count > 1) | elsewhere & update))
        found &= ~dropped
        # Rows whose stored record is read: keys found in two file groups (which one holds
        # it live?), and rows that may move when moving depends on the merge (not under
        # commit-time ordering, where the incoming record always wins).
        may_move = elsewhere & found & decides_by_merge
        looked_at = found & ((count > 1) | may_move)
        stored = _StoredMatch.none(n)
        if looked_at.any():
            stored = self._stored_records(rows, looked_at, located)
            partition = pc.if_else(pa.array(stored.live), stored.partition, partition)
            file_id = pc.if_else(pa.array(stored.live), stored.file_id, file_id)
            if update:  # live nowhere: a new key, in its own partition
                found &= ~(looked_at & ~stored.live)
        moves = found & ~_equal(partition, incoming) & ~deletes & update
        merged: pa.Table | None = None
        if decides_by_merge and moves.any():
            picked = np.flatnonzero(moves)
            stays, merged = self._merged(rows, picked, stored)
            moves[picked[stays]] = False
            merged = merged.filter(pa.array(~stays))  # the records of the rows still moving
        tagged = found & ~moves
        rows = _with_column(rows, PARTITION_PATH_FIELD, pc.if_else(tagged, partition, incoming))
        file_ids = pc.if_else(tagged, file_id, pa.nulls(n, pa.string()))
        if moves.any():
            if merged is not None and self.merger.mode is MergeMode.PARTIAL:
                rows = _with_merged_data(rows, moves, merged)
            leaving = pa.array(moves)
            rows = pa.concat_tables(
                [
                    rows,
                    delete_rows(
                        rows.schema,
                        rows.column(RECORD_KEY_FIELD).filter(leaving),
                        partition.filter(leaving),
                    ),
                ]
            )
            file_ids = pa.concat_arrays([file_ids, file_id.filter(leaving)])
        if dropped.any():
            kept = pa.array(np.concatenate([~dropped, np.ones(rows.num_rows - n, bool)]))
            rows, file_ids = rows.filter(kept), file_ids.filter(kept)
        return rows, file_ids

    def _stored_records(
        self, rows: pa.Table, looked_at: np.ndarray, located: pa.Table
    ) -> _StoredMatch:
        """The live stored record of each looked-at row's key (base merged with log), read
        from the file groups the index found the key in."""
        wanted = pc.is_in(located.column(ROW), value_set=pa.array(np.flatnonzero(looked_at)))
        of_rows = located.filter(wanted)
        keys = rows.column(RECORD_KEY_FIELD).take(of_rows.column(ROW))
        by_id = {(s.partition_path, s.file_id): s for s in self.slices}
        lookups = []
        for members in _runs_of_equal(of_rows, [STORED_PARTITION, STORED_FILE_ID]):
            first = int(members[0])
            group = (
                of_rows.column(STORED_PARTITION)[first].as_py(),
                of_rows.column(STORED_FILE_ID)[first].as_py(),
            )
            lookups.append((by_id[group], _strings(pc.unique(keys.take(pa.array(members))))))
        return _StoredMatch.of(rows, looked_at, pa.concat_tables(self.read_stored(lookups)))

    def _merged(
        self, rows: pa.Table, picked: np.ndarray, stored: _StoredMatch
    ) -> tuple[np.ndarray, pa.Table]:
        """Of the `picked` rows naming another partition than their key's, which stay where
        the key is stored because their merge with the stored record keeps its partition (the
        stored record wins: a late event); and the merged record of each."""
        incoming, existing = _merge_inputs(rows, picked, stored)
        merged = self.merger.merge_pairs(existing, incoming)
        kept = _equal(merged.rows.column(PARTITION_PATH_FIELD), existing[PARTITION_PATH_FIELD])
        return kept | merged.deleted, merged.rows


def without_located(rows: pa.Table, located: pa.Table) -> pa.Table:
    """The rows whose key is stored nowhere (an insert dropping duplicates keeps those)."""
    stored = np.zeros(rows.num_rows, bool)
    stored[located.column(ROW).to_numpy()] = True
    return rows.filter(pa.array(~stored))


def delete_rows(schema: pa.Schema, keys: pa.ChunkedArray, partitions: pa.Array) -> pa.Table:
    """Prepared rows deleting `keys` from `partitions` whatever their ordering value (as a
    delete operation does): nulls but for the key and partition."""
    n = len(keys)
    given: dict[str, pa.Array | pa.ChunkedArray] = {
        RECORD_KEY_FIELD: keys,
        PARTITION_PATH_FIELD: partitions,
        DELETE_COLUMN: pa.array(np.ones(n, bool)),
        NATURAL_COLUMN: pa.array(np.ones(n, bool)),
    }
    columns = [
        given[f.name].cast(f.type) if f.name in given else pa.nulls(n, f.type) for f in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)


# ---- helpers


@dataclass
class _StoredMatch:
    """The live stored record of the rows that looked theirs up."""

    live: np.ndarray  # the row's key is live in one of the file groups found
    partition: pa.Array  # ... in this partition
    file_id: pa.Array  # ... and file group
    records: pa.Table  # stored records (file schema, STORED_PARTITION, STORED_FILE_ID)
    position: pa.Array  # each row's record in `records` (null: none)

    @classmethod
    def none(cls, n: int) -> _StoredMatch:
        nothing = pa.nulls(n, pa.string())
        return cls(np.zeros(n, bool), nothing, nothing, pa.table({}), pa.nulls(n, pa.int32()))

    @classmethod
    def of(cls, rows: pa.Table, looked_at: np.ndarray, records: pa.Table) -> _StoredMatch:
        keys = records.column(RECORD_KEY_FIELD)
        position = pc.index_in(rows.column(RECORD_KEY_FIELD), value_set=keys)  # the first copy
        if isinstance(position, pa.ChunkedArray):
            position = position.combine_chunks()
        position = pc.if_else(pa.array(looked_at), position, pa.nulls(len(position), pa.int32()))
        live = pc.is_valid(position).to_numpy(zero_copy_only=False)
        return cls(
            live,
            _strings(records.column(STORED_PARTITION)).take(position),
            _strings(records.column(STORED_FILE_ID)).take(position),
            records,
            position,
        )


def _first_locations(located: pa.Table, n: int) -> tuple[np.ndarray, pa.Array, pa.Array]:
    """How many file groups store each row's key, and the first of them (partition, file id;
    null where none)."""
    rows = located.column(ROW).to_numpy()
    count = np.bincount(rows, minlength=n)
    found, first_match = np.unique(rows, return_index=True)
    first = np.full(n, -1, dtype=np.int64)
    first[found] = first_match
    take = pa.array(first, mask=first < 0)
    partition = _strings(located.column(STORED_PARTITION)).take(take)
    file_id = _strings(located.column(STORED_FILE_ID)).take(take)
    return count, partition, file_id


def _strings(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks else pa.array([], values.type)
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    return values.cast(pa.string())


def _flags(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    flags: np.ndarray = pc.fill_null(values, False).to_numpy(zero_copy_only=False)
    return flags.astype(bool)


def _equal(left: pa.Array | pa.ChunkedArray, right: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Element-wise equality, false where either side is null."""
    return _flags(pc.equal(left, right))


def _earlier_rows_of_keys(rows: pa.Table, deciding: np.ndarray) -> np.ndarray:
    """The rows of a key some `deciding` row holds, but for the last such row of the batch
    (none when the batch's keys are distinct, as pre-combining leaves them)."""
    n = rows.num_rows
    keys = rows.column(RECORD_KEY_FIELD)
    if not deciding.any() or pc.count_distinct(keys).as_py() == n:
        return np.zeros(n, bool)
    codes = group_codes(pa.table({"k": keys}), ["k"])
    involved = np.zeros(codes.max() + 1, bool)
    involved[codes[deciding]] = True
    last = np.full(len(involved), -1, dtype=np.int64)
    np.maximum.at(last, codes, np.arange(n))
    earlier: np.ndarray = involved[codes] & (last[codes] != np.arange(n))
    return earlier


def _runs_of_equal(table: pa.Table, columns: list[str]) -> list[np.ndarray]:
    """Row numbers of `table`, one array per distinct value of `columns`."""
    if table.num_rows == 0:
        return []
    codes = group_codes(table, columns)
    order = np.argsort(codes, kind="stable")
    starts = np.flatnonzero(np.diff(codes[order], prepend=-1))
    return np.split(order, starts[1:])


def _with_column(rows: pa.Table, name: str, values: pa.Array | pa.ChunkedArray) -> pa.Table:
    index = rows.schema.get_field_index(name)
    field = rows.schema.field(index)
    return rows.set_column(index, field, values.cast(field.type))


def _data_columns(rows: pa.Table) -> list[str]:
    return [c for c in rows.column_names if c not in _NOT_DATA]


def _merge_inputs(
    rows: pa.Table, picked: np.ndarray, stored: _StoredMatch
) -> tuple[pa.Table, pa.Table]:
    """The picked incoming rows (with their delete flags) and their stored records, in the
    same columns: the incoming data columns and the partition path (the merge says which
    partition the merged record lands in)."""
    columns = [*_data_columns(rows), PARTITION_PATH_FIELD]
    schema = pa.schema([rows.schema.field(c).with_nullable(True) for c in columns])
    taken = pa.array(picked)
    incoming = rows.take(taken)
    incoming_rows = incoming.select(columns).cast(schema)
    for flag in (DELETE_COLUMN, NATURAL_COLUMN):
        incoming_rows = incoming_rows.append_column(flag, incoming.column(flag))
    records = stored.records.take(stored.position.take(taken))
    existing = records.select([c for c in columns if c in records.column_names])
    existing = _with_column(
        cast_batch_to_schema(existing, schema),
        PARTITION_PATH_FIELD,
        records.column(STORED_PARTITION),
    )
    return incoming_rows, existing


def _with_merged_data(rows: pa.Table, moves: np.ndarray, merged: pa.Table) -> pa.Table:
    """Rows whose data columns, on the moving rows, are the merged records' (a partial update
    moves the record it merged, stored fields filling the incoming nulls)."""
    mask = pa.array(moves)
    for name in _data_columns(rows):
        column = rows.column(name)
        values = merged.column(name).cast(column.type)
        try:
            replaced = pc.replace_with_mask(column, mask, values.combine_chunks())
        except pa.ArrowNotImplementedError:  # nested types: gather from [rows, merged]
            source = np.arange(rows.num_rows)
            source[moves] = rows.num_rows + np.arange(len(values))
            replaced = pa.chunked_array([*column.chunks, *values.chunks], column.type).take(
                pa.array(source)
            )
        rows = _with_column(rows, name, replaced)
    return rows
