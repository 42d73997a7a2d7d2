"""What every index works with: the latest file slices, and the keys stored in a base file.

An index reads keys from base files only. On merge-on-read a base file may still hold a key
its file group deleted in a log, and an `insert` may store a key a second time in another
file group: `locate` answers every file group whose base file holds each incoming key, and
the writer decides which of them hold it live (write.global_tagging).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.arrow_utils import positions_in, row_indices_by_value, single_chunk
from hudi_core.engine import EngineContext
from hudi_core.io.base_file import RECORD_KEY_COLUMN, read_base_file
from hudi_core.keygen import KeyGenerator
from hudi_core.model.file_group import FileSlice
from hudi_core.storage import Storage

PARTITION_COLUMN = "_hoodie_partition_path"

# Columns of a `locate` answer: one row per (incoming row, file group storing its key).
ROW = "row"  # the incoming row (int64)
STORED_PARTITION = "stored_partition"  # the partition the key is stored in
STORED_FILE_ID = "stored_file_id"  # the file group holding it

LOCATIONS_SCHEMA = pa.schema(
    [(ROW, pa.int64()), (STORED_PARTITION, pa.string()), (STORED_FILE_ID, pa.string())]
)


@dataclass
class IndexContext:
    storage: Storage
    engine: EngineContext
    slices: list[FileSlice]  # the latest visible slice of every live file group
    key_generator: KeyGenerator
    populate_meta_fields: bool

    def slices_in(self, partitions: set[str]) -> list[FileSlice]:
        return [s for s in self.slices if s.base_file and s.partition_path in partitions]

    def stored_keys(self, file_slice: FileSlice) -> pa.ChunkedArray:
        """The record keys in a slice's base file."""
        assert file_slice.base_file is not None
        path = file_slice.base_file.path
        if self.populate_meta_fields:
            return read_base_file(self.storage, path, [RECORD_KEY_COLUMN]).column(0)
        # No stored keys: recompute them from the key fields, as Apache Hudi does.
        fields = [f.split(".")[0] for f in self.key_generator.record_key_fields]
        keys = self.key_generator.record_keys(read_base_file(self.storage, path, fields))
        return pa.chunked_array([keys])

    def lookup(self, incoming: pa.Table, slices: list[FileSlice]) -> pa.Array:
        """File id of each incoming (key, partition) found in one of `slices`, else null."""
        stored = self.engine.map(self.stored_keys, slices)
        return match_keys(incoming, slices, stored)

    def locate(self, incoming: pa.Table, slices: list[FileSlice]) -> pa.Table:
        """Every slice of `slices` holding each incoming (key, partition) (LOCATIONS_SCHEMA)."""
        stored = self.engine.map(self.stored_keys, slices)
        return match_keys_in_partitions(incoming, slices, stored)


class RecordIndex(Protocol):
    def tag(self, context: IndexContext, incoming: pa.Table) -> pa.Array:
        """File id holding each incoming (record key, partition path), null for new keys.

        `incoming` has the columns `_hoodie_record_key` and `_hoodie_partition_path`.
        """
        ...

    def locate(self, context: IndexContext, incoming: pa.Table) -> pa.Table:
        """Every file group whose base file holds each incoming key (LOCATIONS_SCHEMA rows,
        ordered by incoming row); whether it is live there is the writer's to find out."""
        ...


def match_keys(
    incoming: pa.Table, slices: list[FileSlice], stored_keys: list[pa.ChunkedArray]
) -> pa.Array:
    """Which slice holds each incoming key of its partition, as a file id (null if none).

    Stored keys are probed against a hash of the (smaller) incoming keys of the partition,
    rather than the other way round. A key held by several slices takes the one with the
    newest base file (then the greatest file id): the same answer every run, whatever order
    the slices come in. (Writers look keys up with `locate`, which answers them all.)
    """
    owner = np.full(incoming.num_rows, -1, dtype=np.int32)
    incoming_keys = incoming.column(RECORD_KEY_COLUMN)
    rows_by_partition = row_indices_by_value(incoming.column(PARTITION_COLUMN))
    for partition, rows in rows_by_partition.items():
        probe = incoming_keys.take(pa.array(rows))
        distinct = pc.unique(probe)
        slot_of_row = positions_in(probe, distinct).to_numpy()
        owner_of_slot = np.full(len(distinct), -1, dtype=np.int32)
        for code in _oldest_first(slices):
            file_slice, keys = slices[code], stored_keys[code]
            if file_slice.partition_path != partition:
                continue
            position = positions_in(keys, distinct)
            hits = position.drop_null().to_numpy()
            owner_of_slot[hits] = code
        owner[rows] = owner_of_slot[slot_of_row]
    file_ids = pa.array([s.file_id for s in slices], pa.string())
    codes = pa.array(owner, mask=owner < 0)
    return pa.DictionaryArray.from_arrays(codes, file_ids).cast(pa.string())


def _oldest_first(slices: list[FileSlice]) -> list[int]:
    """Positions of `slices` by base instant time, then file id (the last wins a tie)."""
    return sorted(
        range(len(slices)), key=lambda i: (slices[i].base_instant_time, slices[i].file_id)
    )


def match_keys_globally(
    keys: pa.Array,
    distinct: pa.Array,
    slices: list[FileSlice],
    stored_keys: list[pa.ChunkedArray],
) -> pa.Table:
    """Which slices hold each incoming key, in any partition (LOCATIONS_SCHEMA rows).

    `distinct` are the distinct incoming keys. One Arrow hash join matches the stored keys
    of all slices against them (the smaller side is the hash table; `index_in` per slice
    was several times slower, and far slower on chunked arrays), and the (distinct key,
    slice) hits are joined back to the incoming rows on integers.
    """
    if not stored_keys or len(keys) == 0:
        return LOCATIONS_SCHEMA.empty_table()
    key_type = distinct.type
    stored = pa.concat_tables(
        pa.table({_KEY: keys_of_slice.cast(key_type), _CODE: np.full(len(keys_of_slice), code)})
        for code, keys_of_slice in enumerate(stored_keys)
    )
    slots = pa.table({_KEY: distinct, _SLOT: np.arange(len(distinct), dtype=np.int64)})
    hits = stored.join(slots, _KEY, join_type="inner")
    # A slice storing a key twice still holds it once.
    pairs = np.unique(
        hits.column(_SLOT).to_numpy() * len(stored_keys) + hits.column(_CODE).to_numpy()
    )
    found = pa.table({_SLOT: pairs // len(stored_keys), _CODE: pairs % len(stored_keys)})
    slot_of_row = positions_in(keys.cast(key_type), distinct)
    rows = pa.table(
        {ROW: np.arange(len(keys), dtype=np.int64), _SLOT: slot_of_row.cast(pa.int64())}
    )
    joined = rows.join(found, _SLOT, join_type="inner")
    joined = joined.sort_by([(ROW, "ascending"), (_CODE, "ascending")])
    code = joined.column(_CODE)
    partitions = pa.array([s.partition_path for s in slices], pa.string())
    file_ids = pa.array([s.file_id for s in slices], pa.string())
    return pa.Table.from_arrays(
        [joined.column(ROW), partitions.take(code), file_ids.take(code)], schema=LOCATIONS_SCHEMA
    )


# Working columns of match_keys_globally: a key, a slice's position, a distinct key's position.
_KEY = "key"
_CODE = "code"
_SLOT = "slot"


def match_keys_in_partitions(
    incoming: pa.Table, slices: list[FileSlice], stored_keys: list[pa.ChunkedArray]
) -> pa.Table:
    """Which slices of its own partition hold each incoming key (LOCATIONS_SCHEMA rows)."""
    keys = single_chunk(incoming.column(RECORD_KEY_COLUMN))
    if len(keys) == 0 or not slices:
        return LOCATIONS_SCHEMA.empty_table()
    located = match_keys_globally(keys, pc.unique(keys), slices, stored_keys)
    named = single_chunk(incoming.column(PARTITION_COLUMN)).cast(pa.string())
    same = pc.equal(located.column(STORED_PARTITION), named.take(located.column(ROW)))
    return located.filter(same)
