"""The table's schema as Spark's JSON (a StructType), for the spark.sql.sources.* table
properties that let Spark read a synced table as a hudi data source table."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pyarrow.types as t

from hudi_core.errors import SyncError
from hudi_core.schema.meta_fields import META_FIELDS
from hudi_core.sync.hive_schema import union_members
from hudi_core.sync.type_names import spark_name


def spark_type(dtype: pa.DataType) -> Any:
    if t.is_decimal(dtype):
        return f"decimal({dtype.precision},{dtype.scale})"
    simple = "timestamp" if t.is_timestamp(dtype) else spark_name(dtype)
    if simple is not None:
        return simple
    if t.is_list(dtype) or t.is_large_list(dtype):
        element = dtype.value_field
        return {"type": "array", "elementType": spark_type(element.type), "containsNull": True}
    if t.is_map(dtype):
        return {
            "type": "map",
            "keyType": spark_type(dtype.key_type),
            "valueType": spark_type(dtype.item_type),
            "valueContainsNull": True,
        }
    if t.is_struct(dtype):
        return struct_json(list(dtype))
    if t.is_union(dtype):  # as Parquet holds it: a struct of optional member0, member1, ...
        members = union_members(dtype)
        return struct_json([pa.field(f"member{i}", f.type) for i, f in enumerate(members)])
    raise SyncError(f"no Spark type for the Arrow type {dtype}")


def struct_json(fields: list[pa.Field]) -> dict[str, Any]:
    return {
        "type": "struct",
        "fields": [
            {"name": f.name, "type": spark_type(f.type), "nullable": f.nullable, "metadata": {}}
            for f in fields
        ],
    }


def spark_schema_json(schema: pa.Schema, partition_keys: list[str]) -> str:
    """Meta columns, data columns, then partition columns last (as Spark lays them out)."""
    meta = [pa.field(name, pa.string()) for name in META_FIELDS]
    by_name = {f.name.lower(): f for f in schema}
    keys = [k.lower() for k in partition_keys]
    data = [f for f in schema if f.name.lower() not in keys and f.name not in META_FIELDS]
    # a partition field the data does not hold is a required string, as Apache Hudi has it,
    # named as the partCol.N property names it (Spark matches the two case-sensitively)
    partitions = [
        by_name.get(k.lower(), pa.field(k, pa.string(), nullable=False)) for k in partition_keys
    ]
    return json.dumps(struct_json(meta + data + partitions), separators=(",", ":"))
