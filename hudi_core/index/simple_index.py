"""Simple index: join incoming keys against the keys stored in the touched partitions."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.index.base import PARTITION_COLUMN, IndexContext, match_keys


class SimpleIndex:
    def tag(self, context: IndexContext, incoming: pa.Table) -> pa.ChunkedArray:
        partitions = set(pc.unique(incoming.column(PARTITION_COLUMN)).to_pylist())
        slices = context.slices_in(partitions)
        stored = context.engine.map(context.stored_keys, slices)
        if not stored:
            return pa.chunked_array([pa.nulls(incoming.num_rows, pa.string())])
        return match_keys(incoming, pa.concat_tables(stored))
