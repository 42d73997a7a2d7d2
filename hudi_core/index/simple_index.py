"""Simple index: look incoming keys up among the keys stored in the partitions they touch."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.index.base import PARTITION_COLUMN, IndexContext
from hudi_core.model.file_group import FileSlice


class SimpleIndex:
    def tag(self, context: IndexContext, incoming: pa.Table) -> pa.Array:
        return context.lookup(incoming, self._slices(context, incoming))

    def locate(self, context: IndexContext, incoming: pa.Table) -> pa.Table:
        return context.locate(incoming, self._slices(context, incoming))

    def _slices(self, context: IndexContext, incoming: pa.Table) -> list[FileSlice]:
        partitions = set(pc.unique(incoming.column(PARTITION_COLUMN)).to_pylist())
        return context.slices_in(partitions)
