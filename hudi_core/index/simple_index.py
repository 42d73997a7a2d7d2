"""Simple index: look incoming keys up among the keys stored in the partitions they touch."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.index.base import PARTITION_COLUMN, IndexContext


class SimpleIndex:
    def tag(self, context: IndexContext, incoming: pa.Table) -> pa.Array:
        partitions = set(pc.unique(incoming.column(PARTITION_COLUMN)).to_pylist())
        return context.lookup(incoming, context.slices_in(partitions))
