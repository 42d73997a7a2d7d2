"""Arrow schema -> the Avro schema Apache Hudi's Spark writer records for a table.

Hudi (0.14/0.15) converts Spark's schema with Spark's SchemaConverters and then moves `null` first
in every nullable union, giving nullable fields `"default": null`. That form lands in the commit
metadata (`extraMetadata.schema`), in base file footers (`parquet.avro.schema`, with the meta
fields) and in log block headers. Spark SQL's catalog instead stores `hoodie.table.create.schema`
straight from SchemaConverters: `[T, "null"]` unions and no defaults.

Naming follows Spark: the root record is `<table>_record` in namespace `hoodie.<table>`; a struct
field's record is named after the field, in the namespace of its parent record's full name; a
decimal is a `fixed` named `fixed` in namespace `<parent full name>.<field>`, sized for its
precision.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pyarrow as pa

from hudi_core.errors import SchemaError
from hudi_core.schema.arrow_types import is_list_like, storage_type
from hudi_core.schema.meta_fields import meta_field_names, strip_meta_fields

AvroSchema = dict[str, Any] | list[Any] | str

# Arrow field metadata keys carried over as the Avro field's doc (Spark uses a column "comment").
_DOC_KEYS = (b"comment", b"avro::doc")
_AVRO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MAX_DECIMAL_PRECISION = 38  # Spark's DecimalType limit


def sanitize_avro_name(name: str) -> str:
    """Hudi's sanitizeName: an invalid first character, then every invalid one, becomes `__`."""
    if not name:
        raise SchemaError("a table name is needed to name the Avro record")
    if not re.match(r"[A-Za-z_]", name[0]):
        name = "__" + name[1:]
    return re.sub(r"[^A-Za-z0-9_]", "__", name)


def avro_record_name(table_name: str) -> tuple[str, str]:
    """(record name, namespace) Hudi gives a table's schema: `<t>_record`, `hoodie.<t>`."""
    sanitized = sanitize_avro_name(table_name)
    return f"{sanitized}_record", f"hoodie.{sanitized}"


def decimal_fixed_size(precision: int) -> int:
    """Bytes of the smallest two's-complement integer holding every `precision`-digit value."""
    size = 1
    while 2 ** (8 * size - 1) < 10**precision:
        size += 1
    return size


def meta_avro_fields(with_operation_field: bool = False) -> list[dict[str, Any]]:
    """The meta fields as Hudi declares them: optional strings with an empty doc."""
    return [
        {"name": name, "type": ["null", "string"], "doc": "", "default": None}
        for name in meta_field_names(with_operation_field)
    ]


def arrow_to_avro(
    schema: pa.Schema,
    table_name: str,
    with_meta_fields: bool,
    *,
    with_operation_field: bool = False,
) -> dict[str, Any]:
    """The Avro schema (as a JSON-ready dict) Hudi records for a table of this Arrow schema.

    Meta columns in `schema` are ignored; with `with_meta_fields` the standard ones lead, as in
    base file footers and log block headers (`with_operation_field` adds `_hoodie_operation`).
    """
    name, namespace = avro_record_name(table_name)
    fields = meta_avro_fields(with_operation_field) if with_meta_fields else []
    converter = _ArrowToAvro(defaults=True)
    fields += converter.record_fields(strip_meta_fields(schema), f"{namespace}.{name}")
    return {"type": "record", "name": name, "namespace": namespace, "fields": fields}


def arrow_to_create_schema(schema: pa.Schema, table_name: str) -> dict[str, Any]:
    """The schema Spark SQL stores as `hoodie.table.create.schema`: `[T, "null"]`, no defaults."""
    name, namespace = avro_record_name(table_name)
    converter = _ArrowToAvro(defaults=False)
    fields = converter.record_fields(strip_meta_fields(schema), f"{namespace}.{name}")
    return {"type": "record", "name": name, "namespace": namespace, "fields": fields}


def avro_schema_json(avro_schema: dict[str, Any]) -> str:
    """Compact JSON, as Avro's Java Schema.toString() writes it."""
    return json.dumps(avro_schema, separators=(",", ":"), ensure_ascii=False)


def arrow_to_avro_json(
    schema: pa.Schema,
    table_name: str,
    with_meta_fields: bool,
    *,
    with_operation_field: bool = False,
) -> str:
    """`arrow_to_avro` serialized as Hudi stores it."""
    return avro_schema_json(
        arrow_to_avro(
            schema, table_name, with_meta_fields, with_operation_field=with_operation_field
        )
    )


class _ArrowToAvro:
    """Spark's toAvroType, on Arrow types; `defaults` selects Hudi's null-first form."""

    def __init__(self, defaults: bool) -> None:
        self._defaults = defaults

    def record_fields(
        self, fields: pa.Schema | pa.StructType, full_name: str
    ) -> list[dict[str, Any]]:
        names = [field.name for field in fields]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise SchemaError(f"column names {duplicates} appear more than once")
        return [self._field(field, full_name) for field in fields]

    def _field(self, field: pa.Field, namespace: str) -> dict[str, Any]:
        if not _AVRO_NAME.fullmatch(field.name):
            raise SchemaError(
                f"column name {field.name!r} is not a valid Avro name: use letters, digits and "
                "'_', not starting with a digit"
            )
        avro_type = self._type(field.type, field.nullable, field.name, namespace)
        out: dict[str, Any] = {"name": field.name, "type": avro_type}
        doc = _field_doc(field)
        if doc is not None:
            out["doc"] = doc
        if self._defaults and isinstance(avro_type, list) and "null" in avro_type:
            out["default"] = None
        return out

    def _type(self, dtype: pa.DataType, nullable: bool, name: str, namespace: str) -> AvroSchema:
        base = self._non_null(dtype, name, namespace)
        if not nullable or base == "null":
            return base
        return ["null", base] if self._defaults else [base, "null"]

    def _non_null(self, dtype: pa.DataType, name: str, namespace: str) -> AvroSchema:
        dtype = storage_type(dtype)
        primitive = _primitive(dtype)
        if primitive is not None:
            return primitive
        if pa.types.is_decimal(dtype):
            return _decimal(dtype, name, namespace)
        if is_list_like(dtype):
            item = dtype.value_field
            return {"type": "array", "items": self._type(item.type, item.nullable, name, namespace)}
        if pa.types.is_map(dtype):
            return self._map(dtype, name, namespace)
        if pa.types.is_struct(dtype):
            fields = self.record_fields(dtype, f"{namespace}.{name}")
            return {"type": "record", "name": name, "namespace": namespace, "fields": fields}
        raise SchemaError(f"column {name!r} has type {dtype}, which Hudi tables cannot store")

    def _map(self, dtype: pa.MapType, name: str, namespace: str) -> dict[str, Any]:
        key_type = storage_type(dtype.key_type)
        if not (pa.types.is_string(key_type) or pa.types.is_large_string(key_type)):
            raise SchemaError(
                f"map column {name!r} has {dtype.key_type} keys; Hudi maps need string keys"
            )
        item = dtype.item_field
        return {"type": "map", "values": self._type(item.type, item.nullable, name, namespace)}


def _field_doc(field: pa.Field) -> str | None:
    metadata = field.metadata or {}
    for key in _DOC_KEYS:
        if key in metadata:
            return str(metadata[key].decode())
    return None


_INT_TYPES = (pa.int8(), pa.int16(), pa.int32(), pa.uint8(), pa.uint16())
_LONG_TYPES = (pa.int64(), pa.uint32())


def _primitive(dtype: pa.DataType) -> AvroSchema | None:
    """Avro for the non-nested, non-decimal types; None for anything else."""
    t = pa.types
    if t.is_null(dtype):
        return "null"
    if t.is_boolean(dtype):
        return "boolean"
    if dtype in _INT_TYPES:
        return "int"
    if dtype in _LONG_TYPES:
        return "long"
    if t.is_float16(dtype) or t.is_float32(dtype):
        return "float"
    if t.is_float64(dtype):
        return "double"
    if t.is_string(dtype) or t.is_large_string(dtype) or t.is_string_view(dtype):
        return "string"
    if t.is_binary(dtype) or t.is_large_binary(dtype) or t.is_binary_view(dtype):
        return "bytes"
    if t.is_fixed_size_binary(dtype):
        return "bytes"  # Spark has no fixed-size binary: it writes BinaryType as bytes
    return _temporal(dtype)


def _temporal(dtype: pa.DataType) -> AvroSchema | None:
    t = pa.types
    if t.is_date(dtype):
        return {"type": "int", "logicalType": "date"}
    if t.is_timestamp(dtype):
        # Every timestamp is an instant in Hudi 0.x: Spark's TimestampType is timestamp-micros
        # and Hudi 0.14/0.15 cannot write Spark's TimestampNTZ, so a zone-less Arrow timestamp is
        # stored as UTC. Avro (1.11) has no nanos: ns truncates to micros.
        logical = "timestamp-millis" if dtype.unit in ("s", "ms") else "timestamp-micros"
        return {"type": "long", "logicalType": logical}
    if t.is_time32(dtype):
        return {"type": "int", "logicalType": "time-millis"}
    if t.is_time64(dtype):
        return {"type": "long", "logicalType": "time-micros"}
    return None


def _decimal(dtype: pa.DataType, name: str, namespace: str) -> dict[str, Any]:
    if dtype.precision > _MAX_DECIMAL_PRECISION or dtype.scale < 0:
        raise SchemaError(
            f"column {name!r} has type {dtype}; Hudi (Spark) decimals hold at most "
            f"{_MAX_DECIMAL_PRECISION} digits and a scale of zero or more"
        )
    return {
        "type": "fixed",
        "name": "fixed",
        "namespace": f"{namespace}.{name}",
        "size": decimal_fixed_size(dtype.precision),
        "logicalType": "decimal",
        "precision": dtype.precision,
        "scale": dtype.scale,
    }
