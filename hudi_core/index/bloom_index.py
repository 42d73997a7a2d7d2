"""Bloom index: rule out base files by key range and footer bloom filter, then join exactly.

Only base files that may hold one of the incoming keys of their partition have their keys
read; the rest are skipped on the strength of their footer alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.arrow_utils import run_boundaries
from hudi_core.index.base import PARTITION_COLUMN, IndexContext
from hudi_core.io.base_file import RECORD_KEY_COLUMN, read_footer
from hudi_core.io.bloom_filter import (
    FOOTER_MAX_RECORD_KEY,
    FOOTER_MIN_RECORD_KEY,
    bloom_filter_from_footer,
)
from hudi_core.model.file_group import FileSlice


@dataclass
class BloomIndex:
    prune_by_ranges: bool = True

    def tag(self, context: IndexContext, incoming: pa.Table) -> pa.Array:
        return context.lookup(incoming, self._candidates(context, incoming))

    def locate(self, context: IndexContext, incoming: pa.Table) -> pa.Table:
        return context.locate(incoming, self._candidates(context, incoming))

    def _candidates(self, context: IndexContext, incoming: pa.Table) -> list[FileSlice]:
        """The slices of the incoming keys' partitions whose base files may hold one."""
        keys_by_partition = _keys_by_partition(incoming)
        slices = context.slices_in(set(keys_by_partition))

        def may_hold_keys(file_slice: FileSlice) -> bool:
            keys = keys_by_partition[file_slice.partition_path]
            return self.may_hold_any(context, file_slice, keys)

        flags = context.engine.map(may_hold_keys, slices)
        return [s for s, flag in zip(slices, flags, strict=True) if flag]

    def key_range(
        self, context: IndexContext, file_slice: FileSlice
    ) -> tuple[str | None, str | None]:
        """The min and max record key a slice's base file footer records (None: not there),
        for engines that prune by range before sending keys to files."""
        assert file_slice.base_file is not None
        footer = read_footer(context.storage, file_slice.base_file.path)
        return footer.get(FOOTER_MIN_RECORD_KEY), footer.get(FOOTER_MAX_RECORD_KEY)

    def may_hold_any(self, context: IndexContext, file_slice: FileSlice, keys: pa.Array) -> bool:
        """Whether the slice's base file may hold one of `keys`, by its footer alone."""
        assert file_slice.base_file is not None
        footer = read_footer(context.storage, file_slice.base_file.path)
        low, high = footer.get(FOOTER_MIN_RECORD_KEY), footer.get(FOOTER_MAX_RECORD_KEY)
        if self.prune_by_ranges and low is not None and high is not None:
            in_range = pc.and_(pc.greater_equal(keys, low), pc.less_equal(keys, high))
            keys = keys.filter(in_range)
        if len(keys) == 0:
            return False
        bloom = bloom_filter_from_footer(footer)
        if bloom is None:
            return True  # no filter to consult: the file must be read
        return bool(np.any(bloom.might_contain(keys)))


def _keys_by_partition(incoming: pa.Table) -> dict[str, pa.Array]:
    order = pc.sort_indices(incoming, [(PARTITION_COLUMN, "ascending")])
    partitions = incoming.column(PARTITION_COLUMN).take(order)
    keys = incoming.column(RECORD_KEY_COLUMN).take(order).combine_chunks()
    return {
        partitions[start].as_py(): keys.slice(start, end - start)
        for start, end in run_boundaries(partitions)
    }
