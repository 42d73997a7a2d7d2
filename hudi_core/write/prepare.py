"""Turning a user's batch into rows ready to write: validated, keyed, pre-combined.

Everything that can reject a batch happens here, before an instant exists, so a bad batch
changes nothing a reader can see.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.config import index_options as I
from hudi_core.config.option import Options
from hudi_core.config.schema_options import SET_NULL_FOR_MISSING_COLUMNS
from hudi_core.errors import SchemaError
from hudi_core.keygen import KeyGenerator
from hudi_core.merge.record_merger import (
    DELETE_COLUMN,
    NATURAL_COLUMN,
    RecordMerger,
    is_delete_mask,
)
from hudi_core.schema.evolution import cast_batch_to_schema, deduce_writer_schema
from hudi_core.schema.meta_fields import (
    OPERATION_FIELD,
    PARTITION_PATH_FIELD,
    RECORD_KEY_FIELD,
    is_meta_field,
)
from hudi_core.write.changelog import batch_operations, removes


@dataclass
class PreparedBatch:
    rows: pa.Table  # data columns (table order), then record key, partition path, delete flag
    data_schema: pa.Schema  # the table's schema once this write commits (no meta columns)


def as_arrow_table(data: Any) -> pa.Table:
    """Accepts an Arrow table, record batch(es) or a pandas DataFrame."""
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, list) and all(isinstance(b, pa.RecordBatch) for b in data):
        return pa.Table.from_batches(data)
    if type(data).__name__ == "DataFrame" and hasattr(data, "to_records"):
        return pa.Table.from_pandas(data, preserve_index=False)
    raise SchemaError(
        f"cannot write a {type(data).__name__}: "
        "pass a pyarrow Table, RecordBatch or pandas DataFrame"
    )


def prepare_rows(
    batch: pa.Table,
    table_schema: pa.Schema | None,
    key_generator: KeyGenerator,
    merger: RecordMerger,
    options: Options,
    changelog: bool = False,
) -> PreparedBatch:
    """Validates `batch` against the table and adds keys and delete flags.

    Keys and the ordering field are checked first: a batch without them is wrong whatever
    its other columns, and the error should say so. In changelog mode a batch's own
    `_hoodie_operation` stays with its rows (its -U and D rows delete).
    """
    operations = batch_operations(batch)
    if operations is not None and not changelog:
        _refuse_changes(operations)
        operations = None
    batch = _without_meta_columns(batch)
    merger.require_ordering_field(batch.schema)
    deleted = is_delete_mask(batch)
    if operations is not None:
        removed = removes(operations)
        deleted = removed if deleted is None else pc.or_(deleted, removed)
    if merger.groups is not None:
        # Each stream carries its own group's columns: the others are widened with nulls,
        # which the partial-update merge never lets overwrite a stored value.
        options = Options(options, {SET_NULL_FOR_MISSING_COLUMNS.key: True})
        _require_partition_values(batch, key_generator)
    keys = _keys(batch, key_generator, deleted)
    data_schema = deduce_writer_schema(table_schema, batch.schema, options)
    rows = _append(cast_batch_to_schema(batch, data_schema), keys)
    if operations is not None:
        rows = rows.append_column(OPERATION_FIELD, operations)
    return PreparedBatch(rows, data_schema)


def _require_partition_values(batch: pa.Table, key_generator: KeyGenerator) -> None:
    """Streams stitch into one row only where they name the same partition: a stream whose
    rows lack a partition field would put them in the default partition, where no other
    stream's columns ever meet them."""
    for field in key_generator.partition_path_fields:
        name = field.split(":")[0]  # CustomKeyGenerator's field:TYPE
        missing = name not in batch.column_names
        nulls = 0 if missing else batch.column(name).null_count
        if missing or nulls:
            what = "lacks it" if missing else f"has {nulls} rows without a value"
            raise SchemaError(
                f"partition field '{name}': the batch {what}. With ordering groups every "
                "stream must carry the table's partition fields, so that its columns land in "
                "the partition the other streams' columns of the row are in"
            )


def _refuse_changes(operations: pa.ChunkedArray) -> None:
    """A table not in changelog mode has no `_hoodie_operation`: a batch's -U and D rows would
    silently become upserts there."""
    removing = removes(operations)
    if pc.any(removing).as_py():
        raise SchemaError(
            f"the batch's {OPERATION_FIELD} column marks {pc.sum(removing).as_py()} rows as "
            "-U or D, but the table is not in changelog mode (created without "
            "hoodie.allow.operation.metadata.field=true), where they would be written as "
            "upserts; write them with operation delete, or drop the column"
        )


def prepare_deletes(
    batch: pa.Table,
    table_schema: pa.Schema | None,
    key_generator: KeyGenerator,
    keys_are_global: bool = False,
) -> pa.Table:
    """Keys to delete: only the key and partition fields need to be in the batch (only the
    key fields under a global index, which finds each key's partition). Columns of the table
    it does carry are kept (typed as the table's), for changelog records."""
    batch = _without_meta_columns(batch)
    missing = [f for f in key_generator.partition_path_fields if f not in batch.column_names]
    if keys_are_global and missing:
        keys: dict[str, pa.Array | pa.ChunkedArray] = dict(_keys_only(batch, key_generator))
    else:
        keys = _keys(batch, key_generator, None, delete_all=True)
    known = [f for f in table_schema or [] if f.name in batch.column_names]
    if not known:  # a table without columns has no rows: start from the keys
        return pa.table(keys)
    return _append(
        cast_batch_to_schema(batch.select([f.name for f in known]), pa.schema(known)), keys
    )


def _keys(
    batch: pa.Table,
    key_generator: KeyGenerator,
    delete_mask: pa.ChunkedArray | None,
    delete_all: bool = False,
) -> dict[str, pa.Array | pa.ChunkedArray]:
    """Record key, partition path and delete flags of every row.

    A delete by operation has no ordering value: it is a natural-order delete, which wins over
    whatever came before it. A `_hoodie_is_deleted` row keeps its ordering value.
    """
    if delete_mask is None:
        delete_mask = pa.array(np.full(batch.num_rows, delete_all))
    return {
        RECORD_KEY_FIELD: key_generator.record_keys(batch),
        PARTITION_PATH_FIELD: key_generator.partition_paths(batch),
        DELETE_COLUMN: delete_mask,
        NATURAL_COLUMN: pa.array(np.full(batch.num_rows, delete_all)),
    }


def _keys_only(batch: pa.Table, key_generator: KeyGenerator) -> dict[str, pa.Array]:
    """Deletes by record key alone: the partition path is left empty, for a global index to
    find each key's."""
    every_row = np.full(batch.num_rows, True)
    return {
        RECORD_KEY_FIELD: key_generator.record_keys(batch),
        PARTITION_PATH_FIELD: pa.array(np.full(batch.num_rows, ""), pa.string()),
        DELETE_COLUMN: pa.array(every_row),
        NATURAL_COLUMN: pa.array(every_row),
    }


def _append(batch: pa.Table, columns: dict[str, pa.Array | pa.ChunkedArray]) -> pa.Table:
    for name, values in columns.items():
        batch = batch.append_column(name, values)
    return batch


def _without_meta_columns(batch: pa.Table) -> pa.Table:
    """Drops _hoodie_* meta columns a batch read from a Hudi table may carry."""
    meta = [name for name in batch.column_names if is_meta_field(name)]
    return batch.drop_columns(meta) if meta else batch


@dataclass(frozen=True)
class BatchPreparer:
    """How one write prepares batches; picklable, so that engines can prepare batches where
    they lie (Spark executors) and pre-combine them once duplicates are brought together."""

    operation: str  # upper case, as hoodie.datasource.write.operation parses
    table_schema: pa.Schema | None
    key_generator: KeyGenerator
    merger: RecordMerger
    options: Options
    changelog: bool = False  # the table keeps `_hoodie_operation`, a batch's own included

    def prepare(self, batch: pa.Table, combine: bool) -> tuple[pa.Table, pa.Schema | None]:
        """Keyed, validated rows (duplicate keys pre-combined when `combine`) and the data
        schema they commit."""
        if self.operation == "DELETE_PARTITION":
            return batch, self.table_schema
        if self.operation == "DELETE":
            keys_are_global = self.options.get_option(I.INDEX_TYPE).startswith("GLOBAL_")
            rows = prepare_deletes(batch, self.table_schema, self.key_generator, keys_are_global)
            schema = self.table_schema
        else:
            prepared = prepare_rows(
                batch,
                self.table_schema,
                self.key_generator,
                self.merger,
                self.options,
                self.changelog,
            )
            rows, schema = prepared.rows, prepared.data_schema
        return (self.precombine(rows) if combine else rows), schema

    def precombine(self, rows: pa.Table, globally: bool = False) -> pa.Table:
        """Duplicate keys among prepared rows reduced to one, as `prepare` does with combine;
        `globally` (a global index, where a key is one record whatever partition its rows
        name): by record key alone, the winner keeping its partition.

        Deletes by operation carry no ordering value, and a batch of changes (with its own
        `_hoodie_operation`) is in the order they happened: there the last row of a key wins.
        """
        merger = self.merger
        if self.operation == "DELETE" or OPERATION_FIELD in rows.column_names:
            merger = RecordMerger(merger.payload_class, None)
        keys = [RECORD_KEY_FIELD] if globally else [PARTITION_PATH_FIELD, RECORD_KEY_FIELD]
        return merger.precombine(rows, keys)
