"""Contents of log blocks: Avro and Parquet data blocks, delete blocks, rollback blocks.

- Avro data block: int32 version 3, int32 record count, then per record an int32 length and
  the schemaless Avro datum in the header's SCHEMA (meta fields included).
- Parquet data block: the bytes of a whole parquet file.
- Delete block: int32 version 3, int32 length, then one Avro datum of Hudi's
  HoodieDeleteRecordList: per deleted key its record key, partition path and ordering value
  (a union over typed wrapper records; IntWrapper(0) is the natural order of a plain delete).
- Rollback (command) block: no content; the header names the instant it cancels.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

import fastavro
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_core.errors import CorruptFileError
from hudi_core.io.avro_columnar import decode_datums, encode_datums
from hudi_core.io.log_format import ROLLBACK_COMMAND, BlockType, HeaderKey, LogBlock
from hudi_core.schema.to_arrow import avro_to_arrow, parse_avro_schema

CONTENT_VERSION = 3
_INT = struct.Struct(">i")
_HEADER = struct.Struct(">ii")

# ---- data blocks


def avro_data_block(rows: pa.Table, schema_json: str, instant_time: str) -> LogBlock:
    """A data block of `rows` (already shaped as the schema, meta columns included)."""
    framed, _ = encode_datums(rows, schema_json, length_prefixed=True)
    return avro_data_block_of_framed(framed, rows.num_rows, schema_json, instant_time)


def avro_data_block_of_framed(
    framed: np.ndarray, count: int, schema_json: str, instant_time: str
) -> LogBlock:
    """A data block of `count` records already encoded and framed, each after its length
    (see encode_datums with length_prefixed)."""
    content = _HEADER.pack(CONTENT_VERSION, count) + framed.tobytes()
    header = {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: schema_json}
    return LogBlock(BlockType.AVRO_DATA, header, content)


def parquet_data_block(rows: pa.Table, schema_json: str, instant_time: str, codec: str) -> LogBlock:
    sink = pa.BufferOutputStream()
    pq.write_table(rows, sink, compression=codec, store_schema=False)
    header = {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: schema_json}
    return LogBlock(BlockType.PARQUET_DATA, header, sink.getvalue().to_pybytes())


def data_block_records(block: LogBlock) -> pa.Table:
    """The records of an Avro or Parquet data block, typed by the block's own schema."""
    return pa.concat_tables(data_block_batches(block))


def data_block_batches(block: LogBlock, max_rows: int = 1 << 16) -> Iterator[pa.Table]:
    """The records of a data block, `max_rows` at a time, so that big blocks decode in
    bounded memory."""
    if block.block_type is BlockType.PARQUET_DATA:
        parquet = pq.ParquetFile(pa.BufferReader(block.content))
        empty = True
        for batch in parquet.iter_batches(batch_size=max_rows):
            empty = False
            yield pa.Table.from_batches([batch])
        if empty:
            yield parquet.schema_arrow.empty_table()
        return
    schema = block.header.get(HeaderKey.SCHEMA)
    if not schema:
        raise CorruptFileError("an Avro data block has no SCHEMA header")
    content = block.content
    if len(content) < _HEADER.size:
        raise CorruptFileError("an Avro data block is shorter than its header")
    version, count = _HEADER.unpack_from(content, 0)
    if version != CONTENT_VERSION:
        raise CorruptFileError(f"Avro data block version {version} is not supported (only 3)")
    starts = _record_starts(content, count)
    for first in range(0, max(count, 1), max_rows):
        yield decode_datums(content, starts[first : first + max_rows], schema)


def _record_starts(content: bytes, count: int) -> np.ndarray:
    """Where each datum of an Avro data block starts.

    The framing is a chain (each length says where the next record is), so this one walk is
    sequential; it touches 4 bytes per record, the decoding itself is columnar.
    """
    starts = np.empty(count, dtype=np.int64)
    unpack = _INT.unpack_from
    position = _HEADER.size
    try:
        for index in range(count):
            (length,) = unpack(content, position)
            starts[index] = position + 4
            position += 4 + length
    except struct.error as exc:
        raise CorruptFileError("an Avro data block ends inside a record") from exc
    if position != len(content):
        raise CorruptFileError("an Avro data block's records do not fill it")
    return starts


# ---- delete blocks

_NATURAL_BRANCH = 2  # IntWrapper
_DECIMAL_30_15 = {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}
_WRAPPERS = (  # union branch, wrapper name, its value's Avro type
    (1, "BooleanWrapper", "boolean"),
    (2, "IntWrapper", "int"),
    (3, "LongWrapper", "long"),
    (4, "FloatWrapper", "float"),
    (5, "DoubleWrapper", "double"),
    (6, "BytesWrapper", "bytes"),
    (7, "StringWrapper", "string"),
    (8, "DateWrapper", "int"),
    (
        9,
        "DecimalWrapper",
        {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15},
    ),
    (10, "TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}),
    (11, "TimestampMicrosWrapper", "long"),
)


def _delete_list_schema(with_branch: bool) -> dict[str, Any]:
    """HoodieDeleteRecordList; `with_branch` adds a defaulted field to each wrapper so that a
    reader learns which union branch every ordering value came from."""
    wrappers = []
    for branch, name, value_type in _WRAPPERS:
        fields: list[dict[str, Any]] = [{"name": "value", "type": value_type}]
        if with_branch:
            fields.append({"name": "branch", "type": "int", "default": branch})
        wrappers.append({"type": "record", "name": name, "fields": fields})
    record = {
        "type": "record",
        "name": "HoodieDeleteRecord",
        "fields": [
            {"name": "recordKey", "type": ["null", "string"], "default": None},
            {"name": "partitionPath", "type": ["null", "string"], "default": None},
            {"name": "orderingVal", "type": ["null", *wrappers], "default": None},
        ],
    }
    return {
        "type": "record",
        "name": "HoodieDeleteRecordList",
        "namespace": "org.apache.hudi.avro.model",
        "fields": [{"name": "deleteRecordList", "type": {"type": "array", "items": record}}],
    }


_READ_SCHEMA = fastavro.parse_schema(_delete_list_schema(with_branch=True))
_WRITE_SCHEMA = fastavro.parse_schema(_delete_list_schema(with_branch=False))


@dataclass
class DeletedKeys:
    keys: pa.Array
    partitions: pa.Array
    ordering: pa.Array  # null where the delete is natural-order
    natural: np.ndarray


def delete_block(
    keys: pa.Array,
    partitions: pa.Array,
    ordering: pa.Array | None,
    instant_time: str,
    schema_json: str,
) -> LogBlock:
    """A delete block; `ordering` None (or null values) means natural-order deletes."""
    branch, values = _ordering_branch(keys, ordering)
    records = pa.table(
        {
            "recordKey": keys,
            "partitionPath": partitions,
            "branch": pa.array(np.full(len(keys), branch, np.int32)),
            "value": values,
        }
    )
    value_type = dict((b, t) for b, _, t in _WRAPPERS)[branch]
    # The union branch index is a zigzag long, encoded exactly like an int field of that value.
    record_schema = {
        "type": "record",
        "name": "DeleteRecordDatum",
        "fields": [
            {"name": "recordKey", "type": ["null", "string"]},
            {"name": "partitionPath", "type": ["null", "string"]},
            {"name": "branch", "type": "int"},
            {"name": "value", "type": value_type},
        ],
    }
    data, _ = encode_datums(records, record_schema)
    array = _zigzag_varint(len(keys)) + data.tobytes() + b"\x00" if len(keys) else b"\x00"
    content = _HEADER.pack(CONTENT_VERSION, len(array)) + array
    header = {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: schema_json}
    return LogBlock(BlockType.DELETE, header, content)


def _ordering_branch(keys: pa.Array, ordering: pa.Array | None) -> tuple[int, pa.Array]:
    if ordering is None or ordering.null_count == len(ordering):
        return _NATURAL_BRANCH, pa.array(np.zeros(len(keys), np.int32))
    if ordering.null_count:
        raise CorruptFileError("a delete block cannot mix natural-order and typed deletes")
    kind = ordering.type
    if pa.types.is_boolean(kind):
        return 1, ordering
    if pa.types.is_integer(kind):
        return (
            (2, ordering.cast(pa.int32()))
            if kind.bit_width <= 32
            else (3, ordering.cast(pa.int64()))
        )
    if pa.types.is_float32(kind):
        return 4, ordering
    if pa.types.is_floating(kind):
        return 5, ordering.cast(pa.float64())
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return 7, ordering.cast(pa.string())
    if pa.types.is_date(kind):
        return 8, ordering.cast(pa.date32()).cast(pa.int32())
    if pa.types.is_timestamp(kind):
        return 11, ordering.cast(pa.timestamp("us", tz=kind.tz)).cast(pa.int64())
    if pa.types.is_decimal(kind):
        return 9, ordering.cast(pa.decimal128(30, 15))
    if pa.types.is_binary(kind):
        return 6, ordering
    raise CorruptFileError(f"ordering values of type {kind} cannot go into a delete block")


def deleted_keys(block: LogBlock) -> DeletedKeys:
    """The keys a delete block deletes, with their ordering values."""
    content = block.content
    if len(content) < _HEADER.size:
        raise CorruptFileError("a delete block is shorter than its header")
    version, length = _HEADER.unpack_from(content, 0)
    if version != CONTENT_VERSION:
        raise CorruptFileError(f"delete block version {version} is not supported (only 3)")
    datum = io.BytesIO(content[_HEADER.size : _HEADER.size + length])
    try:  # one datum: fastavro walks the whole list in C
        # The reader schema is our HoodieDeleteRecordList record: the datum reads as a dict.
        record = cast(
            dict[str, Any], fastavro.schemaless_reader(datum, _WRITE_SCHEMA, _READ_SCHEMA)
        )
        table = pa.Table.from_pylist(record["deleteRecordList"])
    except (EOFError, ValueError, pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise CorruptFileError(f"delete block cannot be read: {exc}") from exc
    if table.num_rows == 0:
        empty = pa.array([], pa.string())
        return DeletedKeys(empty, empty, pa.array([], pa.null()), np.zeros(0, bool))
    ordering = table.column("orderingVal").combine_chunks()
    if pa.types.is_null(ordering.type):
        value, branch = pa.nulls(table.num_rows), pa.nulls(table.num_rows, pa.int64())
    else:
        value, branch = ordering.field("value"), ordering.field("branch")
    natural = pc.fill_null(pc.equal(branch, _NATURAL_BRANCH), True).to_numpy(zero_copy_only=False)
    natural |= pc.is_null(ordering).to_numpy(zero_copy_only=False)
    return DeletedKeys(
        table.column("recordKey").combine_chunks(),
        table.column("partitionPath").combine_chunks(),
        value,
        natural,
    )


def _zigzag_varint(value: int) -> bytes:
    zigzag = (value << 1) ^ (value >> 63)
    out = bytearray()
    while True:
        byte = zigzag & 0x7F
        zigzag >>= 7
        if zigzag:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


# ---- command blocks


def rollback_block(rollback_instant: str, target_instant: str) -> LogBlock:
    header = {
        HeaderKey.INSTANT_TIME: rollback_instant,
        HeaderKey.TARGET_INSTANT_TIME: target_instant,
        HeaderKey.COMMAND_BLOCK_TYPE: ROLLBACK_COMMAND,
    }
    return LogBlock(BlockType.COMMAND, header)


def block_arrow_schema(block: LogBlock) -> pa.Schema | None:
    schema = block.header.get(HeaderKey.SCHEMA)
    return avro_to_arrow(parse_avro_schema(schema)) if schema else None
