"""What every index works with: the latest file slices, and the keys stored in a base file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.arrow_utils import constant_strings, row_numbers
from hudi_core.engine import EngineContext
from hudi_core.io.base_file import RECORD_KEY_COLUMN, read_base_file
from hudi_core.keygen import KeyGenerator
from hudi_core.model.file_group import FileSlice
from hudi_core.storage import Storage

PARTITION_COLUMN = "_hoodie_partition_path"
FILE_ID_COLUMN = "__hudi_file_id"
ROW_COLUMN = "__hudi_row"


@dataclass
class IndexContext:
    storage: Storage
    engine: EngineContext
    slices: list[FileSlice]  # the latest visible slice of every live file group
    key_generator: KeyGenerator
    populate_meta_fields: bool

    def slices_in(self, partitions: set[str]) -> list[FileSlice]:
        return [s for s in self.slices if s.base_file and s.partition_path in partitions]

    def stored_keys(self, file_slice: FileSlice) -> pa.Table:
        """(record key, partition, file id) of every record in a slice's base file."""
        assert file_slice.base_file is not None
        path = file_slice.base_file.path
        if self.populate_meta_fields:
            keys = read_base_file(self.storage, path, [RECORD_KEY_COLUMN]).column(0)
        else:  # no stored keys: recompute them from the key fields, as Apache Hudi does
            fields = [f.split(".")[0] for f in self.key_generator.record_key_fields]
            keys = self.key_generator.record_keys(read_base_file(self.storage, path, fields))
        n = len(keys)
        return pa.table(
            {
                RECORD_KEY_COLUMN: keys,
                PARTITION_COLUMN: constant_strings(file_slice.partition_path, n),
                FILE_ID_COLUMN: constant_strings(file_slice.file_id, n),
            }
        )


class RecordIndex(Protocol):
    def tag(self, context: IndexContext, incoming: pa.Table) -> pa.ChunkedArray:
        """File id holding each incoming (record key, partition path), null for new keys.

        `incoming` has the columns `_hoodie_record_key` and `_hoodie_partition_path`.
        """
        ...


def match_keys(incoming: pa.Table, stored: pa.Table) -> pa.ChunkedArray:
    """Joins incoming keys to stored (key, partition, file id) rows; file id per incoming row."""
    probe = incoming.select([RECORD_KEY_COLUMN, PARTITION_COLUMN]).append_column(
        ROW_COLUMN, row_numbers(incoming.num_rows)
    )
    if stored.num_rows == 0:
        return pa.chunked_array([pa.nulls(incoming.num_rows, pa.string())])
    joined = probe.join(
        stored, keys=[RECORD_KEY_COLUMN, PARTITION_COLUMN], join_type="left outer"
    )
    joined = joined.take(pc.sort_indices(joined, [(ROW_COLUMN, "ascending")]))
    if joined.num_rows > incoming.num_rows:  # a key stored twice: keep one match per row
        rows = joined.column(ROW_COLUMN).combine_chunks()
        first = pc.not_equal(rows.slice(1), rows.slice(0, len(rows) - 1))
        joined = joined.filter(pa.concat_arrays([pa.array([True]), first]))
    return joined.column(FILE_ID_COLUMN)
