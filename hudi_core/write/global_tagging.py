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

The same tagger serves the partition-scoped indexes (SIMPLE, BLOOM; `globally=False`): there
a key is (partition, record key), and rows never move. Under any index a key found in several
file groups counts only where it is live (its latest state in the file slice is no delete);
live in several (an `insert` may store a key twice), the write keeps one copy, the one a
merge would keep (greatest ordering value under event-time ordering, then the latest commit,
then the greatest file id: the same every run), and deletes the others in the same commit,
so that after an upsert or delete the key is never read twice. Found but live nowhere, it is
a new key. An insert dropping duplicates drops only the rows whose key is live somewhere.

A key found once is read too when its file group has a pending compaction (and log files):
the write's log goes to the slice the compaction starts, whose base file holds what the
planned slice holds live. Updating a key that slice deleted would leave it in a log only
after the compaction, where SIMPLE and BLOOM never look (the next upsert would store it
twice, a delete would miss it); not live there, the key is new and goes to a base file.
Apache Hudi tags it as an update (HoodieIndexUtils reads base files only) and loses it so.
Elsewhere a key found once updates its file group unread, live or not: the next compaction
merges base, delete and update, and the key stays in the base file.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.arrow_utils import constant_strings
from hudi_core.index.base import LOCATIONS_SCHEMA, ROW, STORED_FILE_ID, STORED_PARTITION
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
from hudi_core.schema.meta_fields import (
    COMMIT_TIME_FIELD,
    OPERATION_FIELD,
    PARTITION_PATH_FIELD,
    RECORD_KEY_FIELD,
)
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
    globally: bool = True  # a global index: a key is one record in the table
    # (partition, file id) of the file groups a pending compaction plans
    under_compaction: Collection[tuple[str, str]] = frozenset()

    @property
    def key_columns(self) -> list[str]:
        """What identifies a record: its key, in its partition unless the index is global."""
        return [RECORD_KEY_FIELD] if self.globally else [PARTITION_PATH_FIELD, RECORD_KEY_FIELD]

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
        dropped = _earlier_rows_of_keys(
            rows, found & ((count > 1) | elsewhere & update), self.key_columns
        )
        found &= ~dropped
        # Rows whose stored record is read: keys found in two file groups (which one holds
        # it live?), rows that may move when moving depends on the merge (not under
        # commit-time ordering, where the incoming record always wins), and keys found in a
        # file group a pending compaction plans (see the module doc).
        may_move = elsewhere & found & decides_by_merge
        looked_at = found & ((count > 1) | may_move | self._held_by_compaction(located, n))
        stored = _StoredMatch.none(n)
        if looked_at.any():
            stored = self._stored_records(rows, looked_at, located)
            partition = pc.if_else(pa.array(stored.live), stored.partition, partition)
            file_id = pc.if_else(pa.array(stored.live), stored.file_id, file_id)
            # Live nowhere: a new key, in its own partition (a key found once and not read
            # updates the file group it was found in, as Apache Hudi does).
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
        rows, file_ids = _deleting_other_copies(rows, file_ids, stored.others, found)
        if dropped.any():
            kept = pa.array(np.concatenate([~dropped, np.ones(rows.num_rows - n, bool)]))
            rows, file_ids = rows.filter(kept), file_ids.filter(kept)
        return rows, file_ids

    def _held_by_compaction(self, located: pa.Table, n: int) -> np.ndarray:
        """Which rows found their key in a file group with log files and a pending compaction."""
        held = [
            (s.partition_path, s.file_id)
            for s in self.slices
            if s.log_files and (s.partition_path, s.file_id) in self.under_compaction
        ]
        rows = np.zeros(n, bool)
        if held:
            rows[located.column(ROW).to_numpy()[_in_groups(located, held)]] = True
        return rows

    def _stored_records(
        self, rows: pa.Table, looked_at: np.ndarray, located: pa.Table
    ) -> _StoredMatch:
        """The live stored record of each looked-at row's key (base merged with log), read
        from the file groups the index found the key in."""
        wanted = pc.is_in(located.column(ROW), value_set=pa.array(np.flatnonzero(looked_at)))
        entries = located.filter(wanted)
        keys = _strings(rows.column(RECORD_KEY_FIELD)).take(entries.column(ROW))
        records = self._read(entries, keys)
        return _StoredMatch.of(rows.num_rows, entries, keys, records, self.merger)

    def without_stored(self, rows: pa.Table, located: pa.Table) -> pa.Table:
        """The rows whose key is live in no file group it was found in (an insert dropping
        duplicates keeps those): a key found in a slice with log files may be deleted there."""
        live = np.ones(located.num_rows, bool)
        logged = _in_logged_slices(located, self.slices)
        if logged.any():
            entries = located.filter(pa.array(logged))
            keys = _strings(rows.column(RECORD_KEY_FIELD)).take(entries.column(ROW))
            records = self._read(entries, keys)
            live[logged] = _records_of_entries(entries, keys, records) >= 0
        stored = np.zeros(rows.num_rows, bool)
        stored[located.column(ROW).to_numpy()[live]] = True
        return rows.filter(pa.array(~stored))

    def _read(self, entries: pa.Table, keys: pa.Array) -> pa.Table:
        """The live stored records of `keys` in the file groups `entries` name (one key per
        entry), with STORED_PARTITION and STORED_FILE_ID."""
        by_id = {(s.partition_path, s.file_id): s for s in self.slices}
        lookups = []
        for members in _runs_of_equal(entries, [STORED_PARTITION, STORED_FILE_ID]):
            first = int(members[0])
            group = (
                entries.column(STORED_PARTITION)[first].as_py(),
                entries.column(STORED_FILE_ID)[first].as_py(),
            )
            lookups.append((by_id[group], _strings(pc.unique(keys.take(pa.array(members))))))
        return pa.concat_tables(self.read_stored(lookups))

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
    file_id: pa.Array  # ... and file group (the copy kept, should it be live in several)
    records: pa.Table  # stored records (file schema, STORED_PARTITION, STORED_FILE_ID)
    position: pa.Array  # each row's record in `records` (null: none)
    others: pa.Table  # the other file groups holding a row's key live (LOCATIONS_SCHEMA)

    @classmethod
    def none(cls, n: int) -> _StoredMatch:
        nothing = pa.nulls(n, pa.string())
        return cls(
            np.zeros(n, bool),
            nothing,
            nothing,
            pa.table({}),
            pa.nulls(n, pa.int32()),
            LOCATIONS_SCHEMA.empty_table(),
        )

    @classmethod
    def of(
        cls,
        n: int,
        entries: pa.Table,
        keys: pa.Array,
        records: pa.Table,
        merger: RecordMerger,
    ) -> _StoredMatch:
        """`entries`: the file groups (LOCATIONS_SCHEMA) each row's key (`keys`, one per
        entry) was found in; `records`: the live ones of them."""
        record = _records_of_entries(entries, keys, records)
        live_entries = np.flatnonzero(record >= 0)
        ranked = _ranked(entries, live_entries, record, records, merger)
        row_of = entries.column(ROW).to_numpy()[ranked]
        _, first = np.unique(row_of, return_index=True)
        kept = ranked[first]  # the best live entry of each row with one
        position = np.full(n, -1, dtype=np.int64)
        position[row_of[first]] = record[kept]
        others = np.ones(len(ranked), bool)
        others[first] = False
        taken = pa.array(position, mask=position < 0)
        return cls(
            position >= 0,
            _strings(records.column(STORED_PARTITION)).take(taken),
            _strings(records.column(STORED_FILE_ID)).take(taken),
            records,
            taken,
            entries.take(pa.array(np.sort(ranked[others]))),
        )


def _records_of_entries(entries: pa.Table, keys: pa.Array, records: pa.Table) -> np.ndarray:
    """For each entry (a key found in a file group), its live record in `records` (-1: the
    key is not live there)."""
    found = np.full(entries.num_rows, -1, dtype=np.int64)
    if entries.num_rows == 0 or records.num_rows == 0:
        return found
    columns = ["k", STORED_PARTITION, STORED_FILE_ID]
    wanted = pa.table(
        [
            keys,
            _strings(entries.column(STORED_PARTITION)),
            _strings(entries.column(STORED_FILE_ID)),
            pa.array(np.arange(entries.num_rows)),
        ],
        names=[*columns, "entry"],
    )
    stored = pa.table(
        [
            _strings(records.column(RECORD_KEY_FIELD)),
            _strings(records.column(STORED_PARTITION)),
            _strings(records.column(STORED_FILE_ID)),
            pa.array(np.arange(records.num_rows)),
        ],
        names=[*columns, "record"],
    )
    joined = wanted.join(stored, columns, join_type="inner")
    found[joined.column("entry").to_numpy()] = joined.column("record").to_numpy()
    return found


def _ranked(
    entries: pa.Table,
    live: np.ndarray,
    record: np.ndarray,
    records: pa.Table,
    merger: RecordMerger,
) -> np.ndarray:
    """The `live` entries by row, the copy to keep first: the one a merge of the copies keeps
    (greatest ordering value under event-time ordering), then the latest commit, then the
    greatest file id."""
    if len(live) == 0:
        return live
    stored = records.take(pa.array(record[live]))
    columns: dict[str, pa.Array | pa.ChunkedArray] = {
        "row": entries.column(ROW).take(pa.array(live))
    }
    ordering = merger.ordering_field
    if merger.mode is MergeMode.EVENT_TIME and ordering and ordering in stored.column_names:
        columns["ordering"] = stored.column(ordering)
    for name, column in (("commit", COMMIT_TIME_FIELD), ("file", STORED_FILE_ID)):
        if column in stored.column_names:
            columns[name] = stored.column(column)
    table = pa.table(columns)
    keys = [("row", "ascending")] + [(c, "descending") for c in table.column_names[1:]]
    try:
        order = pc.sort_indices(table, sort_keys=keys)  # nulls last
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):  # an ordering type that won't sort
        table = table.drop_columns(["ordering"]) if "ordering" in columns else table
        keys = [k for k in keys if k[0] != "ordering"]
        order = pc.sort_indices(table, sort_keys=keys)  # nulls last
    ranked: np.ndarray = live[order.to_numpy()]
    return ranked


def _in_logged_slices(located: pa.Table, slices: list[FileSlice]) -> np.ndarray:
    """Which located entries name a file slice with log files (where a key may be deleted)."""
    return _in_groups(located, [(s.partition_path, s.file_id) for s in slices if s.log_files])


def _in_groups(located: pa.Table, groups: list[tuple[str, str]]) -> np.ndarray:
    """Which located entries name one of `groups` (partition, file id)."""
    if not groups or located.num_rows == 0:
        return np.zeros(located.num_rows, bool)
    separator = "\x00"
    names = pc.binary_join_element_wise(
        _strings(located.column(STORED_PARTITION)),
        _strings(located.column(STORED_FILE_ID)),
        separator,
    )
    value_set = pa.array([f"{p}{separator}{f}" for p, f in groups], pa.string())
    return _flags(pc.is_in(names, value_set=value_set))


def _deleting_other_copies(
    rows: pa.Table, file_ids: pa.Array, others: pa.Table, found: np.ndarray
) -> tuple[pa.Table, pa.Array]:
    """`rows` and their file ids, with a delete of each row's key from every other file group
    holding it live (for the rows still deciding their key, `found`)."""
    if others.num_rows == 0:
        return rows, file_ids
    others = others.filter(pa.array(found[others.column(ROW).to_numpy()]))
    if others.num_rows == 0:
        return rows, file_ids
    keys = rows.column(RECORD_KEY_FIELD).take(others.column(ROW))
    deletes = delete_rows(rows.schema, keys, _strings(others.column(STORED_PARTITION)))
    return (
        pa.concat_tables([rows, deletes]),
        pa.concat_arrays([file_ids, _strings(others.column(STORED_FILE_ID))]),
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


def _earlier_rows_of_keys(
    rows: pa.Table, deciding: np.ndarray, key_columns: list[str]
) -> np.ndarray:
    """The rows of a key (`key_columns`) some `deciding` row holds, but for the last such row
    of the batch (none when the batch's keys are distinct, as pre-combining leaves them)."""
    n = rows.num_rows
    if not deciding.any() or pc.count_distinct(rows.column(RECORD_KEY_FIELD)).as_py() == n:
        return np.zeros(n, bool)
    codes = group_codes(rows, key_columns)
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
