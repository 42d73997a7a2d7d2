"""Rows shuffled as Arrow IPC blobs: Spark moves a few large binary values, not every row.

Each row that crosses between the JVM and a Python worker costs a conversion (Spark's
UnsafeRow <-> Arrow), and for hudi_core's work (prepare, pre-combine, index, route) that
conversion costs more than the work itself. So after the input's one crossing, rows travel
as blobs: one Spark row holds a `slot` (what the shuffle hashes), a `kind`, and an Arrow IPC
stream of many data rows, plus `counts` (rows per partition path, file id or bucket, and
delete flag) the driver sums without reading the data.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from hudi_core.distributed import (
    DELETE_COLUMN,
    PARTITION_PATH_FIELD,
    RECORD_KEY_FIELD,
    hash_keys,
    run_boundaries,
)

ROWS = 0  # a blob of data rows
KEYS = 1  # a blob of the record keys stored in one file slice (its index in `part`)
FILE_ID = "__hudi_file_id"  # the file group a row's key lives in (null: a new key)
BUCKET = "__hudi_bucket"  # the bucket index: the bucket a row's key hashes to
MAX_BLOB_BYTES = 32 << 20  # far below Arrow's and Spark's 2 GB limits on one binary value

COUNT_TYPE = pa.struct(
    [
        ("partition", pa.string()),
        ("file_id", pa.string()),
        ("bucket", pa.int32()),
        ("is_delete", pa.bool_()),
        ("rows", pa.int64()),
        ("bytes", pa.int64()),  # the rows' share of their table's Arrow size
    ]
)
ARROW_SCHEMA = pa.schema(
    [
        ("slot", pa.int64()),
        ("kind", pa.int32()),
        ("part", pa.int64()),
        ("payload", pa.binary()),
        ("counts", pa.list_(COUNT_TYPE)),
    ]
)
SPARK_SCHEMA = from_arrow_schema(ARROW_SCHEMA)


def encode(rows: pa.Table) -> pa.Buffer:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, rows.schema) as stream:
        stream.write_table(rows)
    return sink.getvalue()


def decode(blobs: pa.Table, kind: int = ROWS) -> list[tuple[int, pa.Table]]:
    """(part, rows) of every blob of `kind`, read without copying the payloads."""
    wanted = blobs.filter(pc.equal(blobs.column("kind"), kind))
    parts = wanted.column("part").to_pylist()
    payloads = wanted.column("payload")
    return [
        (part, pa.ipc.open_stream(payloads[i].as_buffer()).read_all())
        for i, part in enumerate(parts)
    ]


def decode_rows(blobs: pa.Table, schema: pa.Schema) -> pa.Table:
    """All data rows of `blobs` as one table (empty with `schema` when there are none)."""
    tables = [rows for _, rows in decode(blobs, ROWS)]
    return pa.concat_tables(tables) if tables else schema.empty_table()


def batches_of(
    rows: pa.Table, slot: int, kind: int = ROWS, part: int = -1, counted: bool = False
) -> Iterator[pa.RecordBatch]:
    """`rows` as blob rows of at most MAX_BLOB_BYTES each (a record batch per blob, so no
    Arrow batch of blobs nears 2 GB); `counted`: with their counts."""
    if rows.num_rows == 0:
        return
    per_blob = max(1, int(rows.num_rows * MAX_BLOB_BYTES / max(1, rows.nbytes)))
    for start in range(0, rows.num_rows, per_blob):
        chunk = rows.slice(start, per_blob)
        counts = row_counts(chunk) if counted else []
        yield _blob(slot, kind, part, encode(chunk), counts)


def counts_only(rows: pa.Table) -> pa.RecordBatch:
    """A blob row of `rows`' counts alone (no payload): what counting needs of them."""
    return _blob(-1, ROWS, -1, pa.py_buffer(b""), row_counts(rows))


def _blob(
    slot: int, kind: int, part: int, payload: pa.Buffer, counts: list[dict]
) -> pa.RecordBatch:
    """One blob row. Its payload array is built around the IPC buffer itself: a blob is tens
    of megabytes, which a Python bytes object and a new Arrow array would each copy."""
    offsets = pa.py_buffer(np.array([0, payload.size], dtype=np.int32))
    payloads = pa.Array.from_buffers(pa.binary(), 1, [None, offsets, payload])
    columns = [
        pa.array([slot], pa.int64()),
        pa.array([kind], pa.int32()),
        pa.array([part], pa.int64()),
        payloads,
        pa.array([counts], ARROW_SCHEMA.field("counts").type),
    ]
    return pa.RecordBatch.from_arrays(columns, schema=ARROW_SCHEMA)


def row_counts(rows: pa.Table) -> list[dict]:
    """Rows per (partition path, file id, bucket, delete flag), as blob counts, with their
    share of the table's Arrow size."""

    def column(name: str, type_: pa.DataType) -> pa.ChunkedArray | pa.Array:
        return rows.column(name) if name in rows.column_names else pa.nulls(rows.num_rows, type_)

    keys = pa.table(
        {
            "partition": rows.column(PARTITION_PATH_FIELD),
            "file_id": column(FILE_ID, pa.string()),
            "bucket": column(BUCKET, pa.int32()),
            "is_delete": rows.column(DELETE_COLUMN),
        }
    )
    grouped = keys.group_by(["partition", "file_id", "bucket", "is_delete"], use_threads=False)
    counted = grouped.aggregate([([], "count_all")]).rename_columns({"count_all": "rows"})
    per_row = rows.nbytes / max(1, rows.num_rows)
    shares = pc.cast(pc.round(pc.multiply(counted.column("rows"), per_row)), pa.int64())
    counted = counted.append_column("bytes", shares)
    return counted.select(COUNT_TYPE.names).to_pylist()


def by_key_slot(rows: pa.Table, slots: int) -> Iterator[tuple[int, pa.Table]]:
    """`rows` split by the hash of their record key modulo `slots`: the rows of one key (and
    the stored copies of that key) always fall in the same slot."""
    slot_of_row = hash_keys(rows.column(RECORD_KEY_FIELD)).view(np.uint32) % np.uint32(slots)
    return split_by(rows, slot_of_row.astype(np.int64))


def split_by(rows: pa.Table, targets: np.ndarray) -> Iterator[tuple[int, pa.Table]]:
    """`rows` split by each row's target: one gather in target order, then a slice per
    target (a gather per target would touch every row each time)."""
    if len(targets) and targets.min() == targets.max():  # one target: no gather at all
        yield int(targets[0]), rows
        return
    order = np.argsort(targets, kind="stable")
    ordered = targets[order]
    rows = rows.take(pa.array(order))
    for start, end in run_boundaries(pa.array(ordered)):
        yield int(ordered[start]), rows.slice(start, end - start)


def summed_counts(blobs: DataFrame, by: str = "file_id") -> tuple[list[tuple[Any, ...]], int]:
    """The counts of every blob of rows, summed: (partition path, file id, is delete, rows),
    or with `by`="bucket" (partition path, bucket, is delete, rows); and the Arrow size of
    all those rows."""
    exploded = blobs.where(F.col("kind") == ROWS).select(F.explode("counts").alias("c"))
    summed = exploded.groupBy("c.partition", f"c.{by}", "c.is_delete").agg(
        F.sum("c.rows").alias("rows"), F.sum("c.bytes").alias("bytes")
    )
    found = summed.collect()
    return [tuple(row)[:4] for row in found], sum(int(row.bytes) for row in found)
