"""Schema evolution on write: the schema a new commit gets, and batches conformed to it.

Follows Apache Hudi 0.14's default write path (reconciliation off, canonicalization on):

- a column of the batch keeps the table's type when the batch's type promotes into it (Hudi's
  SchemaChangeUtils: int -> long/float/double/string/decimal, long -> float/double/string/
  decimal, float -> double/string/decimal, double -> string/decimal, date -> string,
  string -> date/decimal/bytes, bytes -> string, decimal -> a wider decimal or string);
- otherwise the table's type widens to the batch's when Avro can read the old data with the new
  type (int -> long/float/double, long -> float/double, float -> double, and a decimal gaining
  precision at the same scale and fixed size); any other change fails the write;
- a column is nullable if either side says so; new columns are added (after the table's own, in
  batch order) and must be nullable unless hoodie.datasource.write.new.columns.nullable is set;
- a table column the batch lacks fails the write, unless hoodie.write.set.null.for.missing.columns
  (or hoodie.datasource.write.reconcile.schema) keeps it (filled with nulls) or
  ...allow.auto.evolution.column.drop drops it;
- structs, list elements and map values are reconciled field by field, recursively.

Timestamps differing only in unit or zone keep the table's unit (values truncate like Spark's).
Logical types otherwise never change silently (date vs int, timestamp vs long conflict), where
Avro's own check, blind to logical types, would let them through.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.config.option import Options
from hudi_core.config.schema_options import (
    MAKE_NEW_COLUMNS_NULLABLE,
    RECONCILE_SCHEMA,
    SCHEMA_ALLOW_AUTO_EVOLUTION_COLUMN_DROP,
    SET_NULL_FOR_MISSING_COLUMNS,
)
from hudi_core.errors import SchemaError
from hudi_core.schema.arrow_types import is_list_like, storage_type
from hudi_core.schema.meta_fields import is_meta_field, strip_meta_fields
from hudi_core.schema.to_arrow import avro_to_arrow
from hudi_core.schema.to_avro import arrow_to_avro, decimal_fixed_size


def normalize_schema(schema: pa.Schema) -> pa.Schema:
    """The schema a table reports for data of `schema`, once through Hudi's Avro form.

    Meta columns are dropped; e.g. int8 becomes int32, large_string string, a list item is named
    `element`, a timestamp gets `tz="UTC"`.
    """
    return avro_to_arrow(arrow_to_avro(schema, "normalized", with_meta_fields=False))


def normalize_type(dtype: pa.DataType) -> pa.DataType:
    """`normalize_schema` for one type."""
    return normalize_schema(pa.schema([pa.field("f", dtype)])).field(0).type


def _normalize_field(table_field: pa.Field) -> pa.Field:
    """A table column in its as-read form, top-level metadata kept; as is if Avro cannot hold it."""
    try:
        normalized = normalize_schema(pa.schema([table_field])).field(0)
    except SchemaError:
        return table_field
    return normalized.with_metadata(table_field.metadata)


@dataclass(frozen=True)
class EvolutionPolicy:
    """What a write may do to the table schema beyond adding nullable columns and promotions."""

    allow_missing_columns: bool = False
    allow_column_drop: bool = False
    make_new_columns_nullable: bool = False

    @classmethod
    def from_options(cls, options: Options | Mapping[str, Any] | None) -> EvolutionPolicy:
        opts = options if isinstance(options, Options) else Options(options)
        return cls(
            # legacy reconciliation also keeps the table's columns a batch lacks
            allow_missing_columns=opts.get_option(SET_NULL_FOR_MISSING_COLUMNS)
            or opts.get_option(RECONCILE_SCHEMA),
            allow_column_drop=opts.get_option(SCHEMA_ALLOW_AUTO_EVOLUTION_COLUMN_DROP),
            make_new_columns_nullable=opts.get_option(MAKE_NEW_COLUMNS_NULLABLE),
        )


def reconcile_write_schema(
    table_schema: pa.Schema,
    batch_schema: pa.Schema,
    allow_missing_columns: bool = False,
    *,
    allow_column_drop: bool = False,
    make_new_columns_nullable: bool = False,
) -> pa.Schema:
    """The data schema (no meta columns) of a commit writing `batch_schema` into the table.

    Raises SchemaError naming every conflicting column with its table and incoming types, every
    missing column and every new non-nullable column. A column drop wins over filling with nulls,
    as in Hudi.
    """
    policy = EvolutionPolicy(allow_missing_columns, allow_column_drop, make_new_columns_nullable)
    reconciler = _Reconciler(policy)
    table_fields = [_normalize_field(f) for f in strip_meta_fields(table_schema)]
    batch_fields = list(strip_meta_fields(batch_schema))
    fields = reconciler.merge_fields(table_fields, batch_fields, prefix="")
    reconciler.raise_problems()
    return pa.schema(fields, metadata=table_schema.metadata)


def deduce_writer_schema(
    table_schema: pa.Schema | None,
    batch_schema: pa.Schema,
    options: Options | Mapping[str, Any] | None = None,
) -> pa.Schema:
    """The commit's data schema from hoodie.* options; a table's first commit takes the batch's."""
    if table_schema is None:
        return normalize_schema(batch_schema)
    policy = EvolutionPolicy.from_options(options)
    return reconcile_write_schema(
        table_schema,
        batch_schema,
        policy.allow_missing_columns,
        allow_column_drop=policy.allow_column_drop,
        make_new_columns_nullable=policy.make_new_columns_nullable,
    )


@dataclass
class _Reconciler:
    policy: EvolutionPolicy
    conflicts: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    not_nullable: list[str] = field(default_factory=list)

    def merge_fields(
        self, table_fields: list[pa.Field], batch_fields: list[pa.Field], prefix: str
    ) -> list[pa.Field]:
        batch_by_name = _unique_by_name(batch_fields, prefix)
        merged = []
        for table_field in table_fields:
            batch_field = batch_by_name.get(table_field.name)
            if batch_field is not None:
                merged.append(self._merge_field(table_field, batch_field, prefix))
            elif not self.policy.allow_column_drop:
                if not self.policy.allow_missing_columns:
                    self.missing.append(prefix + table_field.name)
                merged.append(table_field.with_nullable(True))
        table_names = {f.name for f in table_fields}
        for batch_field in batch_fields:
            if batch_field.name not in table_names:
                merged.append(self._new_field(batch_field, prefix))
        return merged

    def _new_field(self, batch_field: pa.Field, prefix: str) -> pa.Field:
        new_field = normalize_schema(pa.schema([batch_field])).field(0)
        new_field = new_field.with_metadata(batch_field.metadata)
        if not new_field.nullable:
            if not self.policy.make_new_columns_nullable:
                self.not_nullable.append(prefix + batch_field.name)
            new_field = new_field.with_nullable(True)
        return new_field

    def _merge_field(self, table_field: pa.Field, batch_field: pa.Field, prefix: str) -> pa.Field:
        path = prefix + table_field.name
        dtype = self._merge_type(table_field.type, batch_field.type, path)
        nullable = table_field.nullable or batch_field.nullable
        return pa.field(table_field.name, dtype, nullable=nullable, metadata=table_field.metadata)

    def _merge_type(
        self, table_type: pa.DataType, batch_type: pa.DataType, path: str
    ) -> pa.DataType:
        raw = storage_type(batch_type)
        if pa.types.is_struct(table_type) and pa.types.is_struct(raw):
            return pa.struct(self.merge_fields(list(table_type), list(raw), path + "."))
        if pa.types.is_list(table_type) and is_list_like(raw):
            item = self._merge_field(table_type.value_field, raw.value_field, path + ".")
            return pa.list_(item.with_name("element"))
        if pa.types.is_map(table_type) and pa.types.is_map(raw):
            item = self._merge_field(table_type.item_field, raw.item_field, path + ".")
            return pa.map_(table_type.key_field, item.with_nullable(True))
        try:
            incoming = normalize_type(batch_type)
        except SchemaError:
            incoming = batch_type
        if incoming == table_type or _promotes_into(incoming, table_type):
            return table_type
        if _widens_to(table_type, incoming):
            return incoming
        self.conflicts.append(
            f"column '{path}' has type {table_type} in the table but {batch_type} in the batch"
        )
        return table_type

    def raise_problems(self) -> None:
        problems = list(self.conflicts)
        if self.missing:
            problems.append(
                f"the batch lacks table columns {_quoted(self.missing)} (set "
                f"{SET_NULL_FOR_MISSING_COLUMNS.key}=true to write them as nulls, or "
                f"{SCHEMA_ALLOW_AUTO_EVOLUTION_COLUMN_DROP.key}=true to drop them)"
            )
        if self.not_nullable:
            problems.append(
                f"new columns {_quoted(self.not_nullable)} are not nullable, but existing rows "
                f"have no value for them (set {MAKE_NEW_COLUMNS_NULLABLE.key}=true to add them "
                "as nullable)"
            )
        if problems:
            raise SchemaError(
                "the batch's schema is not compatible with the table's: " + "; ".join(problems)
            )


def _unique_by_name(fields: list[pa.Field], prefix: str) -> dict[str, pa.Field]:
    by_name: dict[str, pa.Field] = {}
    for f in fields:
        if f.name in by_name:
            raise SchemaError(f"the batch has column '{prefix}{f.name}' more than once")
        by_name[f.name] = f
    return by_name


def _quoted(paths: list[str]) -> str:
    return ", ".join(f"'{p}'" for p in paths)


# Hudi's SchemaChangeUtils promotions (incoming type -> table type kept), by Avro-level kind.
_PROMOTIONS = {
    "int": {"long", "float", "double", "string", "decimal"},
    "long": {"float", "double", "string", "decimal"},
    "float": {"double", "string", "decimal"},
    "double": {"string", "decimal"},
    "date": {"string"},
    "decimal": {"string"},
    "string": {"date", "decimal", "bytes"},
    "bytes": {"string"},
    "timestamp": {"timestamp"},  # another unit or zone: cast into the table's
    "time": {"time"},
}
# Avro's reader/writer promotions (table type -> incoming type taken).
_WIDENINGS = {"int": {"long", "float", "double"}, "long": {"float", "double"}, "float": {"double"}}


def _kind(dtype: pa.DataType) -> str:
    t = pa.types
    for check, kind in (
        (t.is_null, "null"),
        (t.is_int32, "int"),
        (t.is_int64, "long"),
        (t.is_float32, "float"),
        (t.is_float64, "double"),
        (t.is_string, "string"),
        (t.is_binary, "bytes"),
        (t.is_date32, "date"),
        (t.is_decimal, "decimal"),
        (t.is_timestamp, "timestamp"),
        (t.is_time, "time"),
    ):
        if check(dtype):
            return kind
    return str(dtype)


def _promotes_into(incoming: pa.DataType, table: pa.DataType) -> bool:
    source, target = _kind(incoming), _kind(table)
    if source == "null":
        return True  # an all-null column fits any type
    if source == target == "decimal":
        return bool(
            table.scale >= incoming.scale
            and table.precision - table.scale >= incoming.precision - incoming.scale
        )
    return target in _PROMOTIONS.get(source, ())


def _widens_to(table: pa.DataType, incoming: pa.DataType) -> bool:
    source, target = _kind(table), _kind(incoming)
    if source == "null":
        return True  # the table only ever held nulls here
    if source == target == "decimal":
        # old files hold fixed(n) unscaled values: only more digits at the same scale and size
        return (
            incoming.scale == table.scale
            and incoming.precision > table.precision
            and decimal_fixed_size(incoming.precision) == decimal_fixed_size(table.precision)
        )
    return target in _WIDENINGS.get(source, ())


def cast_batch_to_schema(batch: pa.Table | pa.RecordBatch, schema: pa.Schema) -> pa.Table:
    """`batch` in `schema`: its columns in the schema's order and types, missing ones as nulls.

    Nested structs gain their missing fields as nulls too. Meta columns the schema lacks are
    dropped; any other column the schema lacks is an error (reconcile the schema first).
    """
    table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
    names = table.column_names
    _unique_by_name([pa.field(n, pa.null()) for n in names], "")
    extra = [n for n in names if n not in schema.names and not is_meta_field(n)]
    if extra:
        raise SchemaError(f"batch columns {_quoted(extra)} are not in the target schema")
    columns = []
    for target in schema:
        if target.name in names:
            columns.append(_conform_column(table.column(target.name), target, target.name))
        elif target.nullable:
            columns.append(pa.nulls(table.num_rows, target.type))
        else:
            raise SchemaError(f"the batch lacks non-nullable column '{target.name}'")
    return pa.Table.from_arrays(columns, schema=schema)


def _conform_column(column: pa.ChunkedArray, target: pa.Field, path: str) -> pa.ChunkedArray:
    chunks = [_conform(chunk, target.type, path) for chunk in column.chunks]
    conformed = pa.chunked_array(chunks, type=target.type)
    if not target.nullable and conformed.null_count:
        raise SchemaError(f"column '{path}' is not nullable but has {conformed.null_count} nulls")
    return conformed


def _conform(array: pa.Array, target: pa.DataType, path: str) -> pa.Array:
    if array.type == target and str(array.type) == str(target):
        return array
    if pa.types.is_dictionary(array.type):
        return _conform(array.dictionary_decode(), target, path)
    if isinstance(array.type, pa.ExtensionType):
        return _conform(array.storage, target, path)
    if pa.types.is_null(array.type):
        return pa.nulls(len(array), target)
    if pa.types.is_struct(target) and pa.types.is_struct(array.type):
        return _conform_struct(array, target, path)
    if pa.types.is_list(target) and is_list_like(array.type):
        return _conform_list(array, target, path)
    if pa.types.is_map(target) and pa.types.is_map(array.type):
        return _conform_map(array, target, path)
    return _cast(array, target, path)


def _conform_struct(array: pa.StructArray, target: pa.StructType, path: str) -> pa.Array:
    present = {array.type.field(i).name: i for i in range(array.type.num_fields)}
    extra = [name for name in present if target.get_field_index(name) < 0]
    if extra:
        raise SchemaError(f"struct '{path}' has fields {extra} the target schema lacks")
    children = []
    for child in target:
        child_path = f"{path}.{child.name}"
        if child.name in present:
            values = _conform(array.field(present[child.name]), child.type, child_path)
        else:
            values = pa.nulls(len(array), child.type)
        children.append(values)
    return pa.StructArray.from_arrays(children, fields=list(target), mask=_null_mask(array))


def _conform_list(array: pa.Array, target: pa.ListType, path: str) -> pa.Array:
    if not pa.types.is_list(array.type):
        array = pc.cast(array, pa.list_(array.type.value_field))
    offsets, (values,) = _rebased(array, array.values)
    values = _conform(values, target.value_type, path + ".element")
    return pa.ListArray.from_arrays(offsets, values, type=target, mask=_null_mask(array))


def _conform_map(array: pa.MapArray, target: pa.MapType, path: str) -> pa.Array:
    offsets, (keys, items) = _rebased(array, array.keys, array.items)
    keys = _conform(keys, target.key_type, path + ".key")
    items = _conform(items, target.item_type, path + ".value")
    return pa.MapArray.from_arrays(offsets, keys, items, type=target, mask=_null_mask(array))


def _rebased(array: pa.Array, *children: pa.Array) -> tuple[pa.Array, list[pa.Array]]:
    """Offsets starting at 0 and the children's slice they cover (a sliced list's offsets don't,
    and Arrow cannot rebuild a list from such offsets plus a null mask)."""
    offsets = array.offsets
    if len(offsets) == 0:
        return pa.array([0], pa.int32()), [child.slice(0, 0) for child in children]
    start, end = offsets[0].as_py(), offsets[-1].as_py()
    if start:
        offsets = pc.subtract(offsets, pa.scalar(start, offsets.type))
    return offsets, [child.slice(start, end - start) for child in children]


def _null_mask(array: pa.Array) -> pa.Array | None:
    return array.is_null() if array.null_count else None


def _cast(array: pa.Array, target: pa.DataType, path: str) -> pa.Array:
    try:
        return pc.cast(array, target, safe=not _may_lose_precision(array.type, target))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        message = f"column '{path}': cannot convert {array.type} to {target}: {exc}"
        raise SchemaError(message) from exc


def _may_lose_precision(source: pa.DataType, target: pa.DataType) -> bool:
    """Casts Hudi (Java) makes without complaint though they round: long -> float/double, and
    timestamps or times to a coarser unit (Spark truncates). Everything else must be exact."""
    t = pa.types
    return bool(
        (t.is_integer(source) and t.is_floating(target))
        or (t.is_timestamp(source) and t.is_timestamp(target))
        or (t.is_time(source) and t.is_time(target))
    )
