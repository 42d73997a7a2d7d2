"""Global indexes: keys are unique across the whole table, not only within a partition.

GLOBAL_SIMPLE looks every incoming key up among the keys stored in the latest base file of
every file group of the table; GLOBAL_BLOOM first rules base files out by their footer (key
range and bloom filter), as the bloom index does, then joins exactly. Both answer where each
key is stored: the partition and the file group, whatever partition the incoming row names.

A key may sit in the base files of two file groups (on merge-on-read the old one deleted it
in a log after the key moved partition, but is not compacted yet; or an `insert` stored it
twice): `locate` reports every match, and the writer decides which ones hold it live
(write.global_tagging).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.arrow_utils import single_chunk
from hudi_core.index.base import (
    LOCATIONS_SCHEMA,
    ROW,
    STORED_FILE_ID,
    STORED_PARTITION,
    IndexContext,
    match_keys_globally,
)
from hudi_core.index.bloom_index import BloomIndex
from hudi_core.io.base_file import RECORD_KEY_COLUMN
from hudi_core.model.file_group import FileSlice


@dataclass(frozen=True)
class GlobalIndex:
    """What both global indexes share: the lookup across partitions, and whether a record
    arriving with another partition value moves there (`update_partition_path`) or is
    updated where it is stored."""

    update_partition_path: bool = True

    def candidates(self, context: IndexContext, keys: pa.Array) -> list[FileSlice]:
        """The slices (of any partition) whose base files may hold one of `keys`."""
        return [s for s in context.slices if s.base_file]

    def locate(self, context: IndexContext, incoming: pa.Table) -> pa.Table:
        """Every stored location of every incoming key (see LOCATIONS_SCHEMA), ordered by
        incoming row; rows whose key is stored nowhere have none."""
        keys = single_chunk(incoming.column(RECORD_KEY_COLUMN))
        if len(keys) == 0 or not context.slices:
            return LOCATIONS_SCHEMA.empty_table()
        distinct = pc.unique(keys)
        slices = self.candidates(context, distinct)
        stored = context.engine.map(context.stored_keys, slices)
        return match_keys_globally(keys, distinct, slices, stored)

    def tag(self, context: IndexContext, incoming: pa.Table) -> pa.Array:
        """File id holding each incoming key in any partition (the first, should several),
        null for keys stored nowhere: RecordIndex's answer, for callers that need no more."""
        n = incoming.num_rows
        located = self.locate(context, incoming)
        rows = located.column(ROW).to_numpy()
        found, first_match = np.unique(rows, return_index=True)
        first = np.full(n, -1, dtype=np.int64)
        first[found] = first_match
        picked = located.column(STORED_FILE_ID).combine_chunks()
        return picked.take(pa.array(first, mask=first < 0))


@dataclass(frozen=True)
class GlobalSimpleIndex(GlobalIndex):
    """GLOBAL_SIMPLE: the keys of every latest base file of the table are read."""


@dataclass(frozen=True)
class GlobalBloomIndex(GlobalIndex):
    """GLOBAL_BLOOM: base files whose footer rules out every incoming key are not read."""

    prune_by_ranges: bool = True

    def candidates(self, context: IndexContext, keys: pa.Array) -> list[FileSlice]:
        slices = super().candidates(context, keys)
        bloom = BloomIndex(prune_by_ranges=self.prune_by_ranges)

        def may_hold_keys(file_slice: FileSlice) -> bool:
            return bloom.may_hold_any(context, file_slice, keys)

        flags = context.engine.map(may_hold_keys, slices)
        return [s for s, flag in zip(slices, flags, strict=True) if flag]


__all__ = [
    "LOCATIONS_SCHEMA",
    "ROW",
    "STORED_FILE_ID",
    "STORED_PARTITION",
    "GlobalBloomIndex",
    "GlobalIndex",
    "GlobalSimpleIndex",
    "match_keys_globally",
]
