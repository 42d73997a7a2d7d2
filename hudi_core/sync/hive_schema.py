"""The table's schema as Hive columns, and which changes of it Hive can follow.

Types follow Apache Hudi's Avro-to-Hive mapping: long is bigint, bytes and fixed are binary,
timestamps are bigint unless support_timestamp (Hive's parquet reader sees int64), enums are
strings, nested records are structs, a union of several types is a struct of its non-null
branches (member0, member1, ...). The _hoodie_* meta columns come first, as strings.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.types as t

from hudi_core.errors import SyncError
from hudi_core.schema.meta_fields import META_FIELDS
from hudi_core.sync.identifiers import checked_name
from hudi_core.sync.metastore import Column
from hudi_core.sync.type_names import hive_name

# Widenings Hive can apply to existing data files: (old type, new type).
_ALLOWED_PROMOTIONS = {("int", "bigint"), ("float", "double")}


def hive_type(dtype: pa.DataType, support_timestamp: bool = False) -> str:
    """The Hive type string of an Arrow type of a table column."""
    simple = _simple_type(dtype, support_timestamp)
    if simple is not None:
        return simple
    if t.is_list(dtype) or t.is_large_list(dtype):
        return f"array<{hive_type(dtype.value_type, support_timestamp)}>"
    if t.is_map(dtype):
        key = hive_type(dtype.key_type, support_timestamp)
        return f"map<{key},{hive_type(dtype.item_type, support_timestamp)}>"
    if t.is_struct(dtype):
        fields = [
            f"{checked_name(f.name, 'column')}:{hive_type(f.type, support_timestamp)}"
            for f in dtype
        ]
        return f"struct<{','.join(fields)}>"
    if t.is_union(dtype):  # a union of several types: a struct of its non-null branches
        fields = [
            f"member{i}:{hive_type(f.type, support_timestamp)}"
            for i, f in enumerate(union_members(dtype))
        ]
        return f"struct<{','.join(fields)}>"
    raise SyncError(f"no Hive type for the Arrow type {dtype}")


def union_members(dtype: pa.UnionType) -> list[pa.Field]:
    """The branches of a union but null, as Apache Hudi writes such a union to Parquet
    (parquet-avro): a group of optional fields member0, member1, ..."""
    return [f for f in dtype if not t.is_null(f.type)]


def _simple_type(dtype: pa.DataType, support_timestamp: bool) -> str | None:
    if t.is_timestamp(dtype):
        return "timestamp" if support_timestamp else "bigint"
    if t.is_decimal(dtype):
        return f"decimal({dtype.precision},{dtype.scale})"
    return hive_name(dtype)


def hive_columns(
    schema: pa.Schema, partition_keys: list[str], support_timestamp: bool = False
) -> tuple[tuple[Column, ...], tuple[Column, ...]]:
    """(data columns with the meta columns first, partition key columns).

    A partition key that is also a data field takes that field's type and leaves the data
    columns (Hive cannot hold a name twice); any other partition key is a string.
    """
    by_name: dict[str, pa.Field] = {}
    for f in schema:
        name = checked_name(f.name, "column")
        if name in by_name:
            raise SyncError(
                f"columns {by_name[name].name!r} and {f.name!r} differ only in case; Hive "
                "column names are case-insensitive, so it cannot hold both"
            )
        by_name[name] = f
    keys = [checked_name(k, "partition column") for k in partition_keys]
    meta = [Column(name, "string") for name in META_FIELDS]
    data = [
        Column(name, hive_type(field.type, support_timestamp))
        for name, field in by_name.items()
        if name not in keys and name not in META_FIELDS
    ]
    partition_columns = [
        Column(k, hive_type(by_name[k].type, support_timestamp) if k in by_name else "string")
        for k in keys
    ]
    return tuple(meta + data), tuple(partition_columns)


def evolved_columns(
    table: str, current: tuple[Column, ...], wanted: tuple[Column, ...]
) -> tuple[Column, ...] | None:
    """The columns the Hive table should have now, or None when it already has them.

    New columns are appended; a column whose type changed in a way Hive cannot read old files
    with fails the sync; columns gone from the table schema stay (old files still hold them).
    """
    have = {c.name: c for c in current}
    changed = []
    for column in wanted:
        old = have.get(column.name)
        if old is None or old.type == column.type:
            continue
        both_structs = old.type.startswith("struct<") and column.type.startswith("struct<")
        if (old.type, column.type) not in _ALLOWED_PROMOTIONS and not both_structs:
            changed.append(f"{column.name} {old.type} -> {column.type}")
    if changed:
        raise SyncError(
            f"cannot sync the schema of {table}: Hive cannot change the type of "
            f"{'; '.join(changed)}; the Hive table is left as it was"
        )
    wanted_by_name = {c.name: c for c in wanted}
    merged = tuple(wanted_by_name.get(c.name, c) for c in current)
    added = tuple(c for c in wanted if c.name not in have)
    result = merged + added
    return None if result == current else result
