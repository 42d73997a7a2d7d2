"""Read filters: (column, op, value) conjunctions, as pyarrow and hudi-rs take them.

The same filters prune partitions (when a filter names a partition field) and then filter
rows; pruning only saves work, the row filter alone decides the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from hudi_core.errors import QueryError

Filter = tuple[str, str, Any]
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
_OPERATORS = {
    "=": pc.equal,
    "==": pc.equal,
    "!=": pc.not_equal,
    "<": pc.less,
    "<=": pc.less_equal,
    ">": pc.greater,
    ">=": pc.greater_equal,
}


def to_expression(filters: Sequence[Filter] | None, schema: pa.Schema) -> ds.Expression | None:
    """One expression ANDing every filter; string values are cast to the column's type."""
    expression = None
    for column, op, value in filters or []:
        if column not in schema.names:
            raise QueryError(f"filter on '{column}': no such column; columns are {schema.names}")
        term = _term(ds.field(column), op.strip().lower(), value, schema.field(column).type)
        expression = term if expression is None else expression & term
    return expression


def _term(field: ds.Expression, op: str, value: Any, dtype: pa.DataType) -> ds.Expression:
    if op in ("in", "not in"):
        values = pa.array([_typed(v, dtype) for v in value], type=dtype)
        term = field.isin(values)
        return ~term if op == "not in" else term
    if op not in _OPERATORS:
        raise QueryError(f"filter operator '{op}' is not one of {sorted(_OPERATORS)}, in, not in")
    return _OPERATORS[op](field, pa.scalar(_typed(value, dtype), type=dtype))


def _typed(value: Any, dtype: pa.DataType) -> Any:
    if isinstance(value, str) and not pa.types.is_string(dtype):
        try:
            return pa.scalar(value).cast(dtype).as_py()
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise QueryError(
                f"filter value {value!r} does not fit the column type {dtype}"
            ) from exc
    return value


def prune_partitions(
    partitions: list[str],
    filters: Sequence[Filter] | None,
    partition_fields: list[str],
    schema: pa.Schema,
    hive_style: bool,
    url_encoded: bool,
) -> list[str]:
    """Partitions whose values can satisfy the filters on partition fields.

    Partition paths are read as Apache Hudi writes them for simple and complex key generators:
    one segment per field, `field=value` when hive style. A path that does not parse that way
    (timestamp-based partitions, say) is kept, so pruning never drops data wrongly.
    """
    if not all(name in schema.names for name in partition_fields):
        return partitions  # e.g. timestamp-based paths: no column holds the path's values
    relevant = [f for f in filters or [] if f[0] in partition_fields]
    if not relevant or not partitions:
        return partitions
    parsed = {
        path: _partition_values(path, partition_fields, hive_style, url_encoded)
        for path in partitions
    }
    unparsed = [p for p, values in parsed.items() if values is None]
    rows = [(p, values) for p, values in parsed.items() if values is not None]
    columns = {"__partition": pa.array([p for p, _ in rows], pa.string())}
    for index, name in enumerate(partition_fields):
        raw = pa.array([values[index] for _, values in rows], pa.string())
        try:
            columns[name] = raw.cast(schema.field(name).type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return partitions  # values do not read as the column's type: keep everything
    fields_schema = pa.schema([schema.field(name) for name in partition_fields])
    kept = pa.table(columns).filter(to_expression(relevant, fields_schema))
    kept_paths = set(kept.column("__partition").to_pylist())
    return [p for p in partitions if p in kept_paths or p in unparsed]


def _partition_values(
    path: str, fields: list[str], hive_style: bool, url_encoded: bool
) -> list[str | None] | None:
    segments = path.split("/") if path else []
    if len(segments) != len(fields):
        return None
    values: list[str | None] = []
    for segment, name in zip(segments, fields, strict=True):
        if hive_style:
            prefix = f"{name}="
            if not segment.startswith(prefix):
                return None
            segment = segment[len(prefix) :]
        if url_encoded:
            segment = unquote(segment)
        values.append(None if segment == DEFAULT_PARTITION else segment)
    return values
