"""An Avro record schema compiled for columnar coding: a tree of nodes, each with its Arrow type.

The Arrow types come from `avro_to_arrow`, walked in step with the Avro schema, so decoding
builds exactly the arrays a reader of the table expects (field metadata included) and encoding
knows the layout of the buffers it reads. Named types are resolved the way `avro_to_arrow`
resolves them: a name is defined where it first appears and may be referenced afterwards.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from hudi_core.errors import SchemaError
from hudi_core.schema.to_arrow import avro_to_arrow, parse_avro_schema

_NAMED = ("record", "error", "enum", "fixed")
_PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")


@dataclass(frozen=True)
class Node:
    """One Avro type; `arrow` is the type its values have as an Arrow array."""

    arrow: pa.DataType


@dataclass(frozen=True)
class Null(Node):
    """`null`: no bytes at all."""


@dataclass(frozen=True)
class Boolean(Node):
    """One byte, 0 or 1."""


@dataclass(frozen=True)
class Integer(Node):
    """`int` or `long` (dates, times and timestamps included): a zigzag varint."""

    width: int  # bytes of the Arrow value: 4 for int-based types, 8 for long-based ones


@dataclass(frozen=True)
class Floating(Node):
    """`float` or `double`: little-endian IEEE 754."""

    width: int


@dataclass(frozen=True)
class Binary(Node):
    """`bytes` or `string`: a varint length, then the bytes."""


@dataclass(frozen=True)
class Fixed(Node):
    """`fixed`: exactly `size` bytes."""

    size: int


@dataclass(frozen=True)
class Enum(Node):
    """`enum`: the varint index of a symbol; an Arrow string."""

    symbols: tuple[str, ...]


@dataclass(frozen=True)
class Decimal(Node):
    """The decimal logical type: big-endian two's complement of the unscaled value.

    On `fixed` it fills `size` bytes; on `bytes` (`size` None) it is a varint length and the
    shortest form, as Java's BigInteger.toByteArray writes it.
    """

    size: int | None


@dataclass(frozen=True)
class Record(Node):
    """A record: its fields one after another."""

    names: tuple[str, ...]
    fields: tuple[Node, ...]


@dataclass(frozen=True)
class Array(Node):
    """An array: blocks of (count, items), ended by a zero count."""

    item: Node


@dataclass(frozen=True)
class Map(Node):
    """A map: blocked like an array, each entry a record of a string key and a value."""

    entry: Record


@dataclass(frozen=True)
class Nullable(Node):
    """A union of null and one other type: the branch index, then the value if not null."""

    value: Node
    null_index: int


LEAVES = (Boolean, Integer, Floating, Binary, Fixed, Enum, Decimal)


def compile_schema(avro_schema: dict[str, Any] | str) -> tuple[Record, pa.Schema]:
    """The root record node of an Avro record schema, and the Arrow schema it decodes to."""
    if isinstance(avro_schema, str):  # every block and task of a write has the same one
        return _compile_text(avro_schema)
    return _compile(avro_schema)


@functools.lru_cache(maxsize=32)
def _compile_text(avro_schema: str) -> tuple[Record, pa.Schema]:
    """Compiled once per schema text: nodes and Arrow schemas are immutable."""
    return _compile(avro_schema)


def _compile(avro_schema: dict[str, Any] | str) -> tuple[Record, pa.Schema]:
    record = parse_avro_schema(avro_schema)
    arrow_schema = avro_to_arrow(record)
    root = _Compiler().node(record, pa.struct(list(arrow_schema)), "")
    assert isinstance(root, Record)
    return root, arrow_schema


class _Compiler:
    """One compilation: remembers named types so later references to them resolve."""

    def __init__(self) -> None:
        self._named: dict[str, tuple[dict[str, Any], str]] = {}

    def node(self, schema: Any, arrow: pa.DataType, namespace: str) -> Node:
        if isinstance(schema, list):
            return self._union(schema, arrow, namespace)
        if isinstance(schema, str):
            if schema in _PRIMITIVES:
                return _primitive(schema, arrow)
            named, own_namespace = self._resolve(schema, namespace)
            return self._named_type(named, arrow, own_namespace)
        if not isinstance(schema, dict):
            raise SchemaError(f"not an Avro schema: {schema!r}")
        kind = schema.get("type")
        if kind in _NAMED:
            return self._named_type(schema, arrow, self._define(schema, namespace))
        if kind == "array":
            return Array(arrow, self.node(schema["items"], arrow.value_type, namespace))
        if kind == "map":
            return Map(arrow, self._map_entry(schema["values"], arrow, namespace))
        if isinstance(kind, dict | list):
            return self.node(kind, arrow, namespace)
        if kind in _PRIMITIVES:
            return _primitive(kind, arrow)
        raise SchemaError(f"unsupported Avro type {kind!r}")

    def _named_type(self, schema: dict[str, Any], arrow: pa.DataType, namespace: str) -> Node:
        kind = schema["type"]
        if kind == "enum":
            symbols = schema.get("symbols")
            if not isinstance(symbols, list) or not all(isinstance(s, str) for s in symbols):
                raise SchemaError(f"Avro enum {schema.get('name')!r} has no list of symbols")
            return Enum(arrow, tuple(symbols))
        if kind == "fixed":
            if pa.types.is_decimal(arrow):
                return Decimal(arrow, schema["size"])
            if pa.types.is_fixed_size_binary(arrow):
                return Fixed(arrow, arrow.byte_width)
            raise SchemaError(
                f"Avro fixed {schema.get('name')!r} with logical type "
                f"{schema.get('logicalType')!r} is not supported by the columnar codec"
            )
        fields = schema["fields"]
        nodes = tuple(
            self.node(field["type"], arrow.field(i).type, namespace)
            for i, field in enumerate(fields)
        )
        return Record(arrow, tuple(field["name"] for field in fields), nodes)

    def _map_entry(self, values: Any, arrow: pa.MapType, namespace: str) -> Record:
        entry_type = pa.struct([arrow.key_field, arrow.item_field])
        value = self.node(values, arrow.item_type, namespace)
        return Record(entry_type, ("key", "value"), (Binary(pa.string()), value))

    def _union(self, branches: list[Any], arrow: pa.DataType, namespace: str) -> Node:
        nulls = [i for i, branch in enumerate(branches) if _is_null(branch)]
        if len(branches) != 2 or len(nulls) != 1:
            raise SchemaError(
                f"Avro union {branches!r} is not supported by the columnar codec: only a union "
                "of null and one other type is"
            )
        null_index = nulls[0]
        return Nullable(arrow, self.node(branches[1 - null_index], arrow, namespace), null_index)

    def _define(self, schema: dict[str, Any], enclosing: str) -> str:
        """Registers a named type; returns the namespace its own nested names default to."""
        name = schema.get("name")
        if not isinstance(name, str) or not name:
            raise SchemaError(f"Avro {schema.get('type')} schema without a name")
        if "." in name:
            namespace, full_name = name.rpartition(".")[0], name
        else:
            namespace = schema.get("namespace", enclosing) or ""
            full_name = f"{namespace}.{name}" if namespace else name
        self._named[full_name] = (schema, namespace)
        return namespace

    def _resolve(self, name: str, namespace: str) -> tuple[dict[str, Any], str]:
        for candidate in [name] if "." in name else [f"{namespace}.{name}", name]:
            if candidate in self._named:
                return self._named[candidate]
        raise SchemaError(f"unknown Avro type {name!r}")


def _primitive(kind: str, arrow: pa.DataType) -> Node:
    """A primitive, its logical type (if any) already reflected in `arrow`."""
    if kind == "null":
        return Null(arrow)
    if kind == "boolean":
        return Boolean(arrow)
    if kind in ("int", "long"):
        return Integer(arrow, arrow.bit_width // 8)
    if kind in ("float", "double"):
        return Floating(arrow, arrow.bit_width // 8)
    if pa.types.is_decimal(arrow):
        return Decimal(arrow, None)
    return Binary(arrow)


def _is_null(schema: Any) -> bool:
    return schema == "null" or (isinstance(schema, dict) and schema.get("type") == "null")
