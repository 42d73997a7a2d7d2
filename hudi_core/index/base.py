"""What every index works with: the latest file slices, and the keys stored in a base file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.arrow_utils import row_indices_by_value
from hudi_core.engine import EngineContext
from hudi_core.io.base_file import RECORD_KEY_COLUMN, read_base_file
from hudi_core.keygen import KeyGenerator
from hudi_core.model.file_group import FileSlice
from hudi_core.storage import Storage

PARTITION_COLUMN = "_hoodie_partition_path"


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


class RecordIndex(Protocol):
    def tag(self, context: IndexContext, incoming: pa.Table) -> pa.Array:
        """File id holding each incoming (record key, partition path), null for new keys.

        `incoming` has the columns `_hoodie_record_key` and `_hoodie_partition_path`.
        """
        ...


def match_keys(
    incoming: pa.Table, slices: list[FileSlice], stored_keys: list[pa.ChunkedArray]
) -> pa.Array:
    """Which slice holds each incoming key of its partition, as a file id (null if none).

    Stored keys are probed against a hash of the (smaller) incoming keys of the partition,
    rather than the other way round.
    """
    owner = np.full(incoming.num_rows, -1, dtype=np.int32)
    incoming_keys = incoming.column(RECORD_KEY_COLUMN)
    rows_by_partition = row_indices_by_value(incoming.column(PARTITION_COLUMN))
    for partition, rows in rows_by_partition.items():
        probe = incoming_keys.take(pa.array(rows))
        distinct = pc.unique(probe)
        slot_of_row = pc.index_in(probe, value_set=distinct).to_numpy()
        owner_of_slot = np.full(len(distinct), -1, dtype=np.int32)
        for code, (file_slice, keys) in enumerate(zip(slices, stored_keys, strict=True)):
            if file_slice.partition_path != partition:
                continue
            position = pc.index_in(keys, value_set=distinct)
            hits = position.drop_null().to_numpy()
            owner_of_slot[hits] = code
        owner[rows] = owner_of_slot[slot_of_row]
    file_ids = pa.array([s.file_id for s in slices], pa.string())
    codes = pa.array(owner, mask=owner < 0)
    return pa.DictionaryArray.from_arrays(codes, file_ids).cast(pa.string())
