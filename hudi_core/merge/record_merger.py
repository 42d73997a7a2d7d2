"""Record mergers: which version of a record survives when versions meet, vectorized.

Versions meet when a batch holds a key twice (pre-combine), when log records of one key are
scanned (log merge), and when an incoming or logged record meets the stored one (upsert,
snapshot read, compaction). Apache Hudi names the policies by payload class, and so do we:

- OverwriteWithLatestAvroPayload: commit-time ordering, the latest write wins.
- DefaultHoodieRecordPayload: event-time ordering, the larger ordering (precombine) value
  wins, ties to the later write, so late data never overwrites newer data.
- PartialUpdateAvroPayload: event-time ordering field by field: each column keeps the newest
  non-null value, so an incoming null keeps the stored value. With ordering groups
  (`_ts1:name,price;_ts2:age`, see merge.ordering_groups) each group's columns are ordered by
  the group's own field, and a delete removes the whole row in write order (see
  _reduce_grouped).
- EmptyHoodieRecordPayload: a delete.

Versions are rows of one table: SEQ_COLUMN orders them by arrival, DELETE_COLUMN marks deletes,
NATURAL_COLUMN marks deletes without an ordering value (a delete operation), which always win
over what came before them. Pre-combining a batch always compares ordering values, as Apache
Hudi's preCombine does, whatever the payload.
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import Enum

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.arrow_utils import positions_in, row_numbers
from hudi_core.config import table_options as T
from hudi_core.config import write_options as W
from hudi_core.config.option import Options
from hudi_core.errors import InvalidOptionError, PrecombineFieldError
from hudi_core.merge.ordering_groups import OrderingGroups

PAYLOAD_PACKAGE = "org.apache.hudi.common.model."
OVERWRITE_WITH_LATEST = PAYLOAD_PACKAGE + "OverwriteWithLatestAvroPayload"
DEFAULT_PAYLOAD = PAYLOAD_PACKAGE + "DefaultHoodieRecordPayload"
PARTIAL_UPDATE = PAYLOAD_PACKAGE + "PartialUpdateAvroPayload"
EMPTY_PAYLOAD = PAYLOAD_PACKAGE + "EmptyHoodieRecordPayload"

# EmptyHoodieRecordPayload as a write's payload class deletes the write's keys; the Flink
# documentation spells it without the package's last two names.
DELETING_PAYLOADS = (EMPTY_PAYLOAD, "org.apache.hudi.EmptyHoodieRecordPayload")

IS_DELETED_COLUMN = "_hoodie_is_deleted"
SEQ_COLUMN = "__hudi_seq"
DELETE_COLUMN = "__hudi_is_delete"
NATURAL_COLUMN = "__hudi_natural_delete"
_GROUP = "__hudi_group"


class MergeMode(Enum):
    COMMIT_TIME = "COMMIT_TIME_ORDERING"
    EVENT_TIME = "EVENT_TIME_ORDERING"
    PARTIAL = "PARTIAL_UPDATE"


_MODES = {
    OVERWRITE_WITH_LATEST: MergeMode.COMMIT_TIME,
    EMPTY_PAYLOAD: MergeMode.COMMIT_TIME,
    DEFAULT_PAYLOAD: MergeMode.EVENT_TIME,
    PARTIAL_UPDATE: MergeMode.PARTIAL,
}


def is_deleting_payload(payload_class: str | None) -> bool:
    """Whether a write with this payload class deletes every key it carries."""
    return (payload_class or "").strip() in DELETING_PAYLOADS


def merging_payload_class(write_payload: str | None, table_payload: str) -> str:
    """The payload class a write's versions merge by: the write's own, unless it only marks
    the write's rows as deletes (EmptyHoodieRecordPayload), when the table's still merges."""
    if not write_payload or is_deleting_payload(write_payload):
        return table_payload
    return write_payload


def merger_for(options: Options, ordering_field: str | None) -> RecordMerger:
    """The merger of a write or table service, by its payload options (the write's
    hoodie.datasource.write.payload.class, else the table's hoodie.compaction.payload.class)."""
    write_payload = options.get_option(W.PAYLOAD_CLASS)
    return RecordMerger(
        merging_payload_class(write_payload, options.get_option(T.PAYLOAD_CLASS)), ordering_field
    )


@dataclass(frozen=True)
class RecordMerger:
    """Merge policy of a payload class, with the ordering (precombine) field it compares."""

    payload_class: str
    ordering_field: str | None

    def __post_init__(self) -> None:
        if self.payload_class not in _MODES:
            raise InvalidOptionError(
                f"payload class {self.payload_class} is not supported; use one of "
                + ", ".join(_MODES)
            )
        if self.groups is not None and self.mode is not MergeMode.PARTIAL:
            raise InvalidOptionError(
                f"ordering groups ({self.ordering_field}) merge column by column: they need "
                f"payload class {PARTIAL_UPDATE}, not {self.payload_class}"
            )

    @property
    def mode(self) -> MergeMode:
        return _MODES[self.payload_class]

    @functools.cached_property
    def groups(self) -> OrderingGroups | None:
        """The ordering groups the ordering field declares; None for a single field."""
        return OrderingGroups.parse(self.ordering_field)

    def require_ordering_field(self, schema: pa.Schema) -> None:
        if self.groups is not None:
            self.groups.require_batch_fits(schema)
            return
        if self.ordering_field and self.ordering_field not in schema.names:
            raise PrecombineFieldError(
                f"precombine field '{self.ordering_field}' is missing from the batch; "
                f"its columns are: {', '.join(schema.names)}"
            )

    def precombine(self, batch: pa.Table, key_columns: list[str]) -> pa.Table:
        """One row per key of a batch; `batch` carries DELETE_COLUMN, the winner may be a delete."""
        if batch.num_rows < 2 or _all_distinct(batch.column(key_columns[-1])):
            return batch
        mode = MergeMode.PARTIAL if self.mode is MergeMode.PARTIAL else MergeMode.EVENT_TIME
        versions = batch.append_column(SEQ_COLUMN, row_numbers(batch.num_rows))
        return self._reduce(versions, key_columns, mode).drop_columns([SEQ_COLUMN])

    def merge_versions(self, versions: pa.Table, key_columns: list[str]) -> pa.Table:
        """One row per key of logged versions (SEQ_COLUMN, DELETE_COLUMN, maybe NATURAL_COLUMN):
        the state the key is in after all of them, which may be a delete."""
        if versions.num_rows < 2:
            return versions
        return self._reduce(versions, key_columns, self.mode)

    def merge_pairs(self, stored: pa.Table, incoming: pa.Table) -> MergedPairs:
        """Row i of `incoming` (newer, with DELETE_COLUMN) merged into row i of `stored`; both
        tables hold the same columns otherwise."""
        n = stored.num_rows
        if n == 0:
            return MergedPairs(stored, np.zeros(0, bool), np.zeros(0, bool))
        if self.mode is MergeMode.COMMIT_TIME:  # the newer version always wins, deletes too
            deleted = incoming.column(DELETE_COLUMN).to_numpy(zero_copy_only=False)
            rows = _stored_where_deleted(stored, incoming, deleted)
            return MergedPairs(rows, deleted, np.ones(n, bool))
        pair = row_numbers(n)
        older = _with_flags(stored, pair, seq=0, delete=False)
        newer = _with_flags(incoming, pair, seq=1)
        winners = self._reduce(pa.concat_tables([older, newer]), [_GROUP], self.mode)
        deleted = winners.column(DELETE_COLUMN).to_numpy(zero_copy_only=False)
        changed = winners.column(SEQ_COLUMN).to_numpy() == 1
        if self.mode is MergeMode.PARTIAL:
            changed = ~deleted  # fields may come from both sides
        rows = winners.drop_columns(
            [c for c in winners.column_names if c not in stored.column_names]
        )
        return MergedPairs(rows, deleted, changed)

    # ---- the one reduction every case goes through

    def _reduce(self, versions: pa.Table, key_columns: list[str], mode: MergeMode) -> pa.Table:
        """The surviving version of each key, in key order."""
        if self.groups is not None and mode is MergeMode.PARTIAL:
            return _reduce_grouped(versions, key_columns, self.groups)
        if mode is not MergeMode.COMMIT_TIME:
            versions = _after_last_reset(versions, key_columns)
        sort_keys: list[tuple[str, ...]] = [(c, "ascending") for c in key_columns]
        ordering = self.ordering_field
        if mode is not MergeMode.COMMIT_TIME and ordering and ordering in versions.column_names:
            sort_keys.append((ordering, "ascending", "at_start"))  # null is lowest
        sort_keys.append((SEQ_COLUMN, "ascending"))
        ordered = versions.take(pc.sort_indices(versions, sort_keys=sort_keys))
        last = _last_of_runs(ordered, key_columns)
        if mode is MergeMode.PARTIAL:
            return _newest_non_null(ordered, last, key_columns)
        return ordered.filter(pa.array(last))


@dataclass
class MergedPairs:
    rows: pa.Table  # merged row of each pair (meaningless where deleted)
    deleted: np.ndarray  # the pair ends deleted
    changed: np.ndarray  # the result is not simply the stored row


def with_delete_flags(
    rows: pa.Table, deleted: pa.Array | pa.ChunkedArray | None, natural: bool = False
) -> pa.Table:
    """Adds DELETE_COLUMN (false where `deleted` is None) and NATURAL_COLUMN."""
    n = rows.num_rows
    flags = pa.array(np.zeros(n, bool)) if deleted is None else deleted
    rows = rows.append_column(DELETE_COLUMN, flags)
    return rows.append_column(NATURAL_COLUMN, pa.array(np.full(n, natural)))


def is_delete_mask(batch: pa.Table) -> pa.ChunkedArray | None:
    """Rows flagged by a true `_hoodie_is_deleted` column, or None when there is none."""
    if IS_DELETED_COLUMN not in batch.column_names:
        return None
    return pc.fill_null(batch.column(IS_DELETED_COLUMN), False)


def _stored_where_deleted(stored: pa.Table, incoming: pa.Table, deleted: np.ndarray) -> pa.Table:
    """`incoming`'s rows in `stored`'s schema, where a delete row (whose columns may be null even
    where the schema says not null) keeps the stored row: callers drop deleted rows anyway."""
    if not deleted.any():
        return incoming.select(stored.column_names).cast(stored.schema)
    mask = pa.array(deleted)
    columns = [
        pc.if_else(mask, stored.column(name), incoming.column(name).cast(field.type))
        for name, field in zip(stored.column_names, stored.schema, strict=True)
    ]
    return pa.Table.from_arrays(columns, schema=stored.schema)


def _with_flags(rows: pa.Table, pair: pa.Array, seq: int, delete: bool | None = None) -> pa.Table:
    """`rows` as versions: their columns, then delete flags, pair number and arrival order."""
    n = rows.num_rows
    flags = {
        DELETE_COLUMN: pa.array(np.full(n, delete)) if delete is not None else None,
        NATURAL_COLUMN: None
        if NATURAL_COLUMN in rows.column_names
        else pa.array(np.zeros(n, bool)),
    }
    for name, values in flags.items():
        column = rows.column(name) if values is None else values
        rows = rows.drop_columns([name]) if name in rows.column_names else rows
        rows = rows.append_column(name, column)
    rows = rows.append_column(_GROUP, pair)
    return rows.append_column(SEQ_COLUMN, pa.array(np.full(n, seq)))


def _after_last_reset(versions: pa.Table, key_columns: list[str]) -> pa.Table:
    """Drops the versions of each key that precede its last natural-order delete."""
    if NATURAL_COLUMN not in versions.column_names:
        return versions
    natural = pc.fill_null(versions.column(NATURAL_COLUMN), False)
    if not pc.any(natural).as_py():
        return versions
    codes = group_codes(versions, key_columns)
    seq = versions.column(SEQ_COLUMN).to_numpy()
    is_reset = natural.to_numpy(zero_copy_only=False)
    last_reset = np.full(codes.max() + 1, np.iinfo(np.int64).min)
    np.maximum.at(last_reset, codes[is_reset], seq[is_reset])
    return versions.filter(pa.array(seq >= last_reset[codes]))


def group_codes(table: pa.Table, key_columns: list[str]) -> np.ndarray:
    """A number per row, equal for rows with equal values in `key_columns`."""
    key = table.column(key_columns[0])
    if len(key_columns) > 1:
        key = pc.binary_join_element_wise(*[table.column(c) for c in key_columns], "\x00")
    if isinstance(key, pa.ChunkedArray):
        key = key.combine_chunks()
    codes: np.ndarray = pc.dictionary_encode(key).indices.to_numpy(zero_copy_only=False)
    return codes.astype(np.int64)


def _newest_non_null(ordered: pa.Table, last: np.ndarray, key_columns: list[str]) -> pa.Table:
    """Per key (runs of a table sorted oldest to newest), each column's newest non-null value
    among the versions after the key's newest delete; a key whose newest version is a delete
    stays a delete."""
    n = ordered.num_rows
    positions = np.arange(n)
    ends = np.flatnonzero(last)
    starts = np.concatenate(([0], ends[:-1] + 1))
    deleted = ordered.column(DELETE_COLUMN).to_numpy(zero_copy_only=False)
    last_delete = np.maximum.reduceat(np.where(deleted, positions, -1), starts)
    after_delete = positions > np.repeat(last_delete, ends - starts + 1)
    columns = []
    for name in ordered.column_names:
        column = ordered.column(name)
        usable = after_delete & pc.is_valid(column).to_numpy(zero_copy_only=False)
        if name in (DELETE_COLUMN, SEQ_COLUMN, NATURAL_COLUMN, *key_columns):
            usable = np.ones(n, bool)  # these describe the newest version itself
        pick = np.maximum.reduceat(np.where(usable, positions, -1), starts)
        columns.append(column.take(pa.array(pick, mask=pick < 0)))
    return pa.Table.from_arrays(columns, schema=ordered.schema)


def _reduce_grouped(versions: pa.Table, key_columns: list[str], groups: OrderingGroups) -> pa.Table:
    """The state of each key after its versions, by ordering groups, in key order.

    Every delete removes the whole row as it stands when the delete is written: the versions
    written before it (by SEQ_COLUMN) no longer count. Among the versions after it that carry
    a group (a non-null value in any of its columns: a stream's batch is widened with nulls
    for the other groups), the one with the largest ordering value gives all the group's
    columns (a null ordering value lowest, ties to the later write): the per-group maximum,
    whatever order the versions came in. Columns no group owns (the key, the partition, meta
    columns) take their newest non-null value in write order. Both rules give the same state
    whether versions are merged all at once or a compacted state first, so compaction never
    changes a row. A key whose last version is a delete stays a delete.
    """
    versions = _after_last_delete(versions, key_columns)
    n = versions.num_rows
    if n == 0:
        return versions
    keys = [(c, "ascending") for c in key_columns]
    by_write = pc.sort_indices(versions, sort_keys=[*keys, (SEQ_COLUMN, "ascending")])
    runs = _last_of_runs(versions.select(key_columns).take(by_write), key_columns)
    ends = np.flatnonzero(runs)
    starts = np.concatenate(([0], ends[:-1] + 1))
    deleted = versions.column(DELETE_COLUMN).to_numpy(zero_copy_only=False)
    owner = groups.owner()
    by_write_order = by_write.to_numpy()
    winners: dict[str, pa.Array] = {}  # group field -> each key's winning version, if any
    for group in groups.groups:
        if group.field not in versions.column_names:
            continue
        sort_keys = [*keys, (group.field, "ascending", "at_start"), (SEQ_COLUMN, "ascending")]
        order = pc.sort_indices(versions, sort_keys=sort_keys).to_numpy()
        carries = np.zeros(n, bool)
        for column in (c for c in group.columns if c in versions.column_names):
            carries |= pc.is_valid(versions.column(column)).to_numpy(zero_copy_only=False)
        winners[group.field] = _last_usable(order, (~deleted & carries)[order], starts)
    newest = by_write_order[ends]
    # A key whose versions start with a delete replaces what is stored before them: its state
    # carries NATURAL_COLUMN, as a delete by operation does (and is written after a delete).
    resets = deleted | _natural_flags(versions)
    starts_with_reset = np.maximum.reduceat(resets[by_write_order], starts)
    columns = []
    for name in versions.column_names:
        column = versions.column(name)
        if name == NATURAL_COLUMN:
            columns.append(pa.array(starts_with_reset))
            continue
        if name in (DELETE_COLUMN, SEQ_COLUMN, *key_columns):
            columns.append(column.take(pa.array(newest)))  # they describe the newest version
            continue
        owned = owner.get(name)
        if owned is not None and owned.field in winners:
            columns.append(column.take(winners[owned.field]))
        elif owned is not None:  # the group's ordering field is not in these versions
            columns.append(column.take(pa.array(newest)))
        else:
            usable = ~deleted & pc.is_valid(column).to_numpy(zero_copy_only=False)
            columns.append(
                column.take(_last_usable(by_write_order, usable[by_write_order], starts))
            )
    return pa.Table.from_arrays(columns, schema=versions.schema)


def _last_usable(order: np.ndarray, usable: np.ndarray, starts: np.ndarray) -> pa.Array:
    """Per run of `order` (runs begin at `starts`), the row of its last usable position; null
    for a run with none."""
    pick = np.maximum.reduceat(np.where(usable, np.arange(len(order)), -1), starts)
    return pa.array(np.where(pick >= 0, order[np.maximum(pick, 0)], 0), mask=pick < 0)


def _natural_flags(versions: pa.Table) -> np.ndarray:
    if NATURAL_COLUMN not in versions.column_names:
        return np.zeros(versions.num_rows, bool)
    flags: np.ndarray = pc.fill_null(versions.column(NATURAL_COLUMN), False).to_numpy(
        zero_copy_only=False
    )
    return flags


def _after_last_delete(versions: pa.Table, key_columns: list[str]) -> pa.Table:
    """Drops the versions of each key written before its last delete or reset (which stays)."""
    deleted = versions.column(DELETE_COLUMN).to_numpy(zero_copy_only=False)
    deleted = deleted | _natural_flags(versions)
    if not deleted.any():
        return versions
    codes = group_codes(versions, key_columns)
    seq = versions.column(SEQ_COLUMN).to_numpy()
    last_delete = np.full(codes.max() + 1, np.iinfo(np.int64).min)
    np.maximum.at(last_delete, codes[deleted], seq[deleted])
    return versions.filter(pa.array(seq >= last_delete[codes]))


def _all_distinct(values: pa.ChunkedArray) -> bool:
    # unique builds the same hash table as count_distinct, at about half the cost
    return values.null_count == 0 and len(pc.unique(values)) == len(values)


def _last_of_runs(ordered: pa.Table, key_columns: list[str]) -> np.ndarray:
    """True on the last row of every run of equal keys in a sorted table."""
    n = ordered.num_rows
    differs = np.zeros(n, dtype=bool)
    differs[-1] = True
    for column in key_columns:
        values = ordered.column(column).combine_chunks()
        ahead = pc.not_equal(values.slice(0, n - 1), values.slice(1))
        differs[:-1] |= ahead.to_numpy(zero_copy_only=False)
    return differs


@dataclass
class MergeOutcome:
    rows: pa.Table  # stored rows in place (merged, or dropped when deleted), then new keys
    renewed: np.ndarray  # per output row: whether it is a new version rather than as stored
    inserted: np.ndarray  # indices into the versions of the rows appended as new keys
    updates: int
    deletes: int


def _replaced_in_place(stored: pa.Table, positions: np.ndarray, values: pa.Table) -> pa.Table:
    """`stored` with the rows at `positions` (ascending) replaced by `values`, column by
    column. A column the merge left as it was (the key, the columns a partial update does not
    touch) is kept when few rows change: comparing those rows costs a fraction of rebuilding
    the column. Fixed-width values without nulls are copied and overwritten in numpy; other
    fixed-width ones replaced under a mask, which copies each column once; variable-width ones
    (a masked replace rebuilds them value by value) gathered from [stored, values] in one
    take."""
    if len(positions) == 0:
        return stored
    mask = np.zeros(stored.num_rows, bool)
    mask[positions] = True
    mask_array = pa.array(mask)
    source = np.arange(stored.num_rows)
    source[positions] = stored.num_rows + np.arange(len(positions))
    source_array = pa.array(source)
    positions_array = pa.array(positions)
    few = len(positions) <= stored.num_rows * _FEW_CHANGED

    def replaced(name: str) -> pa.ChunkedArray:
        old = stored.column(name)
        new = values.column(name).combine_chunks().cast(old.type)
        unchanged_possible = few and _exactly_comparable(old.type)
        if unchanged_possible and old.take(positions_array).combine_chunks().equals(new):
            return old
        if _overwritable(old, new):
            out = old.to_numpy(zero_copy_only=False)
            out = out if out.flags.writeable else out.copy()
            out[positions] = new.to_numpy(zero_copy_only=False)
            return pa.chunked_array([pa.array(out, type=old.type)])
        if pa.types.is_primitive(old.type):
            try:
                return pc.replace_with_mask(old, mask_array, new)
            except pa.ArrowNotImplementedError:
                pass
        both = pa.chunked_array([*old.chunks, new], type=old.type)
        return both.take(source_array)

    if stored.num_rows * stored.num_columns < _PARALLEL_REPLACE_CELLS:
        # Small files (write tasks already run side by side): threads would only add overhead.
        columns = [replaced(name) for name in stored.column_names]
    else:  # Arrow kernels release the GIL: columns are replaced on all cores at once.
        columns = list(_replace_pool().map(replaced, stored.column_names))
    return pa.Table.from_arrays(columns, schema=stored.schema)


_PARALLEL_REPLACE_CELLS = 4_000_000  # rows x columns from which replacing goes parallel
_FEW_CHANGED = 0.5  # share of rows up to which unchanged columns are looked for


def _exactly_comparable(kind: pa.DataType) -> bool:
    """Whether equal values are the same value: not for floats (-0.0 equals 0.0) nor nested
    types, which may hold them."""
    return not (pa.types.is_floating(kind) or pa.types.is_nested(kind))


def _overwritable(old: pa.ChunkedArray, new: pa.Array) -> bool:
    """Numbers and times without nulls: numpy copies and overwrites them fastest."""
    kind = old.type
    numeric = pa.types.is_integer(kind) or pa.types.is_floating(kind)
    dated = pa.types.is_timestamp(kind) or pa.types.is_date(kind) or pa.types.is_duration(kind)
    return (numeric or dated) and not (old.null_count or new.null_count)


@functools.cache
def _replace_pool() -> ThreadPoolExecutor:
    """One pool for every replace, rather than threads started per file."""
    return ThreadPoolExecutor(max_workers=pa.cpu_count(), thread_name_prefix="hudi-replace")


def merge_into(
    merger: RecordMerger,
    stored: pa.Table,
    stored_keys: pa.Array | pa.ChunkedArray,
    versions: pa.Table,
    version_keys: pa.Array | pa.ChunkedArray,
    match_keys: bool = True,
) -> MergeOutcome:
    """Stored rows merged with one newer version per key (`versions`: the stored columns plus
    DELETE_COLUMN and NATURAL_COLUMN). Stored rows keep their order; versions of keys not
    stored (and not deletes) follow. Without `match_keys` every version is new (duplicates)."""
    n = stored.num_rows
    if match_keys and n and versions.num_rows:
        position = positions_in(stored_keys, version_keys)
    else:
        position = pa.nulls(n, pa.int32())
    stored_rows = np.flatnonzero(pc.is_valid(position).to_numpy(zero_copy_only=False))
    version_rows = pc.drop_null(position).to_numpy().astype(np.int64)
    if SEQ_COLUMN in versions.column_names:
        versions = versions.drop_columns([SEQ_COLUMN])
    merged = merger.merge_pairs(
        stored.take(pa.array(stored_rows)), versions.take(pa.array(version_rows))
    )
    is_delete = versions.column(DELETE_COLUMN).to_numpy(zero_copy_only=False)
    new_key = np.ones(versions.num_rows, bool)
    new_key[version_rows] = False
    inserted = np.flatnonzero(new_key & ~is_delete)
    keep = np.ones(n, bool)
    keep[stored_rows[merged.deleted]] = False
    renewed = np.zeros(n, bool)
    renewed[stored_rows[merged.changed]] = True
    rows = _replaced_in_place(stored, stored_rows, merged.rows)
    if not keep.all():
        rows = rows.filter(pa.array(keep))
    if len(inserted):
        appended = versions.take(pa.array(inserted)).select(stored.column_names)
        rows = pa.concat_tables([rows, appended.cast(rows.schema)])
    return MergeOutcome(
        rows=rows,
        renewed=np.concatenate([renewed[keep], np.ones(len(inserted), bool)]),
        inserted=inserted,
        updates=int(np.count_nonzero(merged.changed & ~merged.deleted)),
        deletes=int(np.count_nonzero(merged.deleted)),
    )
