"""Finding key fields in an Arrow batch (dotted paths into structs) and counting bad rows."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.errors import RecordKeyError


def as_table(batch: pa.Table | pa.RecordBatch) -> pa.Table:
    if isinstance(batch, pa.RecordBatch):
        return pa.Table.from_batches([batch])
    return batch


def field_values(table: pa.Table, path: str, role: str) -> pa.Array:
    """The values of `path` ("a" or "a.b.c"), as one Array with dictionaries decoded.

    Hudi always reads a dot as a step into a nested record (HoodieAvroUtils.getNestedFieldVal);
    a null struct on the way yields null, like Hudi. A field that does not exist raises.
    """
    parts = path.split(".")
    if parts[0] not in table.column_names:
        raise RecordKeyError(
            f"{role} field '{path}' is not in the batch; "
            f"columns present: {', '.join(table.column_names) or '(none)'}"
        )
    values = _one_array(table.column(parts[0]))
    for depth, part in enumerate(parts[1:], start=1):
        parent = ".".join(parts[:depth])
        if not pa.types.is_struct(values.type):
            raise RecordKeyError(
                f"{role} field '{path}': '{parent}' is of type {values.type}, not a struct"
            )
        if values.type.get_field_index(part) < 0:
            names = [values.type.field(i).name for i in range(values.type.num_fields)]
            raise RecordKeyError(
                f"{role} field '{path}': struct '{parent}' has no field '{part}'; "
                f"its fields: {', '.join(names)}"
            )
        values = _decoded(pc.struct_field(values, part))
    return values


def _one_array(column: pa.ChunkedArray) -> pa.Array:
    if column.num_chunks == 1:
        return _decoded(column.chunk(0))
    if column.num_chunks == 0:
        return pa.array([], type=_value_type(column.type))
    return _decoded(column.combine_chunks())


def _value_type(arrow_type: pa.DataType) -> pa.DataType:
    return arrow_type.value_type if pa.types.is_dictionary(arrow_type) else arrow_type


def _decoded(values: pa.Array) -> pa.Array:
    if pa.types.is_dictionary(values.type):
        return values.dictionary_decode()
    return values


def bad_row_summary(mask: pa.Array) -> tuple[int, int]:
    """How many rows `mask` flags, and the index of the first one (-1 when none)."""
    flags = pc.fill_null(mask, False)
    count = pc.sum(flags.cast(pa.int64())).as_py() or 0
    first = pc.index(flags, True).as_py() if count else -1
    return count, first


def rows_phrase(count: int, first: int) -> str:
    noun = "row" if count == 1 else "rows"
    return f"{count} {noun}; first at row {first}"
