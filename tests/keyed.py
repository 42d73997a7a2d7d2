"""A small keyed test table: `key` records, partitioned by `part`, ordered by `ts`; for tests
that spell out each row of a sequence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from hudi_core import HudiTable
from tests import oracle


def keyed_rows(keys: list[str], part: str, ts: int) -> pa.Table:
    n = len(keys)
    return pa.table({"key": keys, "part": [part] * n, "ts": pa.array([ts] * n, pa.int64())})


def keyed_table(
    folder: Path, table_type: str, options: dict[str, Any] | None = None
) -> tuple[str, HudiTable]:
    path = str(folder / "t")
    table = HudiTable.create(
        path,
        "t",
        table_type=table_type,
        record_key_fields=["key"],
        partition_fields=["part"],
        precombine_field="ts",
        options=options,
    )
    return path, table


def read_both(table: HudiTable, as_of: str | None = None) -> dict[str, int]:
    """key -> ts as our reader reads the table, asserting hudi-rs reads the same."""
    ours = table.read(as_of=as_of) if as_of else table.read()
    theirs = oracle.snapshot(table.storage.base_path, as_of=as_of)
    read = {r["key"]: r["ts"] for r in ours.select(["key", "ts"]).to_pylist()}
    assert read == {r["key"]: r["ts"] for r in theirs.select(["key", "ts"]).to_pylist()}
    return read
