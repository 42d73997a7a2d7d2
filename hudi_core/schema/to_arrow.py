"""Avro schema -> the Arrow schema a reader of a Hudi table returns.

Matches what the `hudi` package (hudi-rs) reports for a table: a union of null and one type is
that type, nullable; lists hold an `element` field; maps have non-null string keys and nullable
values; (local-)timestamp-millis/micros carry `tz="UTC"`; enums read as strings; larger unions
become dense unions. Field docs of nested records travel as `avro::doc` field metadata.

Where hudi-rs panics or guesses, Spark's reading wins: local timestamps are zone-less
timestamps, named-type references resolve, a `uuid` string stays a string, and a `null`-typed
field is nullable.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from hudi_core.errors import SchemaError
from hudi_core.schema.meta_fields import strip_meta_fields

AVRO_DOC_KEY = b"avro::doc"
AVRO_ALIASES_KEY = b"avro::aliases"

_PRIMITIVES: dict[str, pa.DataType] = {
    "null": pa.null(),
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "bytes": pa.binary(),
    "string": pa.string(),
}
_NAMED = ("record", "error", "enum", "fixed")
_LOGICAL_ON_INT = {"date": pa.date32(), "time-millis": pa.time32("ms")}
_LOGICAL_ON_LONG = {
    "time-micros": pa.time64("us"),
    "timestamp-millis": pa.timestamp("ms", tz="UTC"),
    "timestamp-micros": pa.timestamp("us", tz="UTC"),
    "timestamp-nanos": pa.timestamp("ns", tz="UTC"),
    "local-timestamp-millis": pa.timestamp("ms"),
    "local-timestamp-micros": pa.timestamp("us"),
    "local-timestamp-nanos": pa.timestamp("ns"),
}


def parse_avro_schema(avro_schema: dict[str, Any] | str) -> dict[str, Any]:
    """The record schema as a dict, from a dict or JSON (properties-file `\\:` escapes allowed)."""
    parsed: Any = avro_schema
    if isinstance(avro_schema, str):
        text = avro_schema.strip()
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            try:
                parsed = json.loads(text.replace("\\:", ":"))
            except json.JSONDecodeError as exc:
                raise SchemaError(f"the table schema is not valid Avro JSON: {exc}") from exc
    if not isinstance(parsed, dict) or parsed.get("type") != "record":
        raise SchemaError("a Hudi table schema must be an Avro record schema")
    return parsed


def avro_to_arrow(avro_schema: dict[str, Any] | str) -> pa.Schema:
    """The Arrow schema of a table whose Avro record schema is `avro_schema`."""
    return _AvroToArrow().schema(parse_avro_schema(avro_schema))


def table_schema_from_commit(avro_json: str) -> pa.Schema:
    """The data schema (no meta columns) of a commit's `extraMetadata.schema`."""
    return strip_meta_fields(avro_to_arrow(avro_json))


class _AvroToArrow:
    """One conversion: remembers named types so later references to them resolve."""

    def __init__(self) -> None:
        self._named: dict[str, tuple[dict[str, Any], str]] = {}
        self._open_records: set[str] = set()

    def schema(self, record: dict[str, Any]) -> pa.Schema:
        full_name, namespace = self._define(record, "")
        self._open_records.add(full_name)
        fields = [self._top_field(field, namespace) for field in _fields_of(record)]
        return pa.schema(fields)

    def _top_field(self, field: dict[str, Any], namespace: str) -> pa.Field:
        # hudi-rs keeps only the props of a named type declared right at a top-level field
        dtype, nullable = self._type(field["type"], namespace)
        metadata = _named_type_props(field["type"], namespace)
        return pa.field(field["name"], dtype, nullable=nullable, metadata=metadata or None)

    def _nested_field(self, field: dict[str, Any], namespace: str) -> pa.Field:
        dtype, nullable = self._type(field["type"], namespace)
        doc = field.get("doc")
        metadata = {AVRO_DOC_KEY: doc.encode()} if isinstance(doc, str) else None
        return pa.field(field["name"], dtype, nullable=nullable, metadata=metadata)

    def _type(self, schema: Any, namespace: str) -> tuple[pa.DataType, bool]:
        """(Arrow type, nullable) of an Avro schema appearing as a field, item or value type."""
        if isinstance(schema, list):
            return self._union(schema, namespace)
        if isinstance(schema, str):
            if schema in _PRIMITIVES:
                return _PRIMITIVES[schema], schema == "null"
            return self._reference(schema, namespace)
        if not isinstance(schema, dict):
            raise SchemaError(f"not an Avro schema: {schema!r}")
        return self._complex(schema, namespace), schema.get("type") == "null"

    def _complex(self, schema: dict[str, Any], namespace: str) -> pa.DataType:
        kind = schema.get("type")
        if kind in _NAMED:
            full_name, own_namespace = self._define(schema, namespace)
            return self._named_type(schema, full_name, own_namespace)
        if kind == "array":
            item_type, item_nullable = self._type(schema["items"], namespace)
            return pa.list_(pa.field("element", item_type, nullable=item_nullable))
        if kind == "map":
            value_type, _ = self._type(schema["values"], namespace)
            # hudi-rs reports map values as nullable whatever the Avro says
            return pa.map_(pa.string(), pa.field("value", value_type, nullable=True))
        if isinstance(kind, str) and kind in _PRIMITIVES:
            return _logical(schema, kind)
        if isinstance(kind, dict | list):
            return self._type(kind, namespace)[0]
        raise SchemaError(f"unsupported Avro type {kind!r}")

    def _named_type(self, schema: dict[str, Any], full_name: str, namespace: str) -> pa.DataType:
        kind = schema["type"]
        if kind == "enum":
            return pa.string()
        if kind == "fixed":
            return _fixed(schema)
        if full_name in self._open_records:
            raise SchemaError(f"record {full_name} refers to itself; Arrow cannot hold that")
        self._open_records.add(full_name)
        try:
            return pa.struct([self._nested_field(f, namespace) for f in _fields_of(schema)])
        finally:
            self._open_records.discard(full_name)

    def _reference(self, name: str, namespace: str) -> tuple[pa.DataType, bool]:
        candidates = [name] if "." in name else [f"{namespace}.{name}", name]
        for candidate in candidates:
            if candidate in self._named:
                schema, own_namespace = self._named[candidate]
                return self._named_type(schema, candidate, own_namespace), False
        raise SchemaError(f"unknown Avro type {name!r}")

    def _union(self, branches: list[Any], namespace: str) -> tuple[pa.DataType, bool]:
        has_null = any(_is_null(branch) for branch in branches)
        others = [branch for branch in branches if not _is_null(branch)]
        if has_null and len(branches) == 2 and len(others) == 1:
            return self._type(others[0], namespace)[0], True
        if not others:
            raise SchemaError(f"union {branches!r} holds nothing but null")
        fields = [self._type(branch, namespace)[0] for branch in branches]
        children = [pa.field(_union_child_name(t), t, nullable=has_null) for t in fields]
        return pa.dense_union(children, type_codes=list(range(len(children)))), has_null

    def _define(self, schema: dict[str, Any], enclosing_namespace: str) -> tuple[str, str]:
        name = schema.get("name")
        if not isinstance(name, str) or not name:
            raise SchemaError(f"Avro {schema.get('type')} schema without a name")
        if "." in name:
            namespace, _, _ = name.rpartition(".")
            full_name = name
        else:
            namespace = schema.get("namespace", enclosing_namespace) or ""
            full_name = f"{namespace}.{name}" if namespace else name
        self._named[full_name] = (schema, namespace)
        return full_name, namespace


def _fields_of(record: dict[str, Any]) -> list[dict[str, Any]]:
    fields = record.get("fields")
    if not isinstance(fields, list):
        raise SchemaError(f"Avro record {record.get('name')!r} has no fields list")
    return fields


def _is_null(schema: Any) -> bool:
    return schema == "null" or (isinstance(schema, dict) and schema.get("type") == "null")


def _logical(schema: dict[str, Any], kind: str) -> pa.DataType:
    """A primitive written as an object, with its logical type where it fits the base type."""
    logical = schema.get("logicalType")
    if kind == "int" and logical in _LOGICAL_ON_INT:
        return _LOGICAL_ON_INT[logical]
    if kind == "long" and logical in _LOGICAL_ON_LONG:
        return _LOGICAL_ON_LONG[logical]
    if kind == "bytes" and logical == "decimal":
        return _decimal(schema) or pa.binary()
    if kind == "bytes" and logical == "big-decimal":
        return pa.large_binary()
    return _PRIMITIVES[kind]


def _fixed(schema: dict[str, Any]) -> pa.DataType:
    logical = schema.get("logicalType")
    if logical == "decimal":
        decimal = _decimal(schema)
        if decimal is not None:
            return decimal
    if logical == "duration":
        return pa.duration("ms")
    size = schema.get("size")
    if not isinstance(size, int) or size < 0:
        raise SchemaError(f"Avro fixed {schema.get('name')!r} has no valid size")
    return pa.binary(size)


def _decimal(schema: dict[str, Any]) -> pa.DataType | None:
    precision, scale = schema.get("precision"), schema.get("scale", 0)
    if not isinstance(precision, int) or not isinstance(scale, int):
        return None
    if precision < 1 or not 0 <= scale <= precision:
        return None  # an invalid logical type is ignored, per the Avro spec
    return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)


def _named_type_props(schema: Any, namespace: str) -> dict[bytes, bytes]:
    if not isinstance(schema, dict) or schema.get("type") not in _NAMED:
        return {}
    props: dict[bytes, bytes] = {}
    if isinstance(schema.get("doc"), str):
        props[AVRO_DOC_KEY] = schema["doc"].encode()
    aliases = schema.get("aliases")
    if isinstance(aliases, list) and aliases:
        name = schema.get("name", "")
        own_ns = name.rpartition(".")[0] if "." in name else schema.get("namespace", namespace)
        qualified = [a if "." in a or not own_ns else f"{own_ns}.{a}" for a in aliases]
        props[AVRO_ALIASES_KEY] = f"[{','.join(qualified)}]".encode()
    return props


def _union_child_name(dtype: pa.DataType) -> str:
    """hudi-rs names union members after their Arrow type, like Arrow's Java vectors."""
    t = pa.types
    if t.is_timestamp(dtype):
        unit = {"s": "sec", "ms": "milli", "us": "micro", "ns": "nano"}[dtype.unit]
        return f"timestamp{unit}{'tz' if dtype.tz else ''}"
    for check, name in _UNION_CHILD_NAMES:
        if check(dtype):
            return name
    return str(dtype)


_UNION_CHILD_NAMES = (
    (pa.types.is_null, "null"),
    (pa.types.is_boolean, "bit"),
    (pa.types.is_int32, "int"),
    (pa.types.is_int64, "bigint"),
    (pa.types.is_float32, "float4"),
    (pa.types.is_float64, "float8"),
    (pa.types.is_date32, "dateday"),
    (pa.types.is_time32, "timemilli"),
    (pa.types.is_time64, "timemicro"),
    (pa.types.is_duration, "duration"),
    (pa.types.is_fixed_size_binary, "fixedsizebinary"),
    (pa.types.is_large_binary, "largevarbinary"),
    (pa.types.is_binary, "varbinary"),
    (pa.types.is_string, "varchar"),
    (pa.types.is_list, "list"),
    (pa.types.is_struct, "struct"),
    (pa.types.is_map, "map"),
    (pa.types.is_decimal, "decimal"),
    (pa.types.is_union, "union"),
)
