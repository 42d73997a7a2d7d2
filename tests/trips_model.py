"""The trips table as a test expects it after each write (key -> record), checked against our
reader and hudi-rs; and a trips table on a chosen index, small files off so each write makes
its own file groups."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from tests import datagen, oracle
from tests.tables import create_trips_table

INDEXES = ["SIMPLE", "BLOOM", "GLOBAL_SIMPLE", "GLOBAL_BLOOM", "BUCKET"]
DATA = datagen.SCHEMA.names


class TripsModel:
    """key -> record, as the table must hold after each write."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}

    def upsert(self, batch: pa.Table) -> None:
        for record in batch.to_pylist():
            self.rows[record["uuid"]] = {name: record[name] for name in DATA}

    def delete(self, batch: pa.Table) -> None:
        for key in batch["uuid"].to_pylist():
            self.rows.pop(key, None)

    def check(self, table: Any, context: str, oracle_too: bool = True) -> None:
        ours = table.read()
        keys = ours["uuid"].to_pylist()
        assert len(keys) == len(set(keys)), f"{context}: a key is read twice: {sorted(keys)}"
        got = {row["uuid"]: {name: row[name] for name in DATA} for row in ours.to_pylist()}
        assert got == self.rows, context
        if oracle_too:
            oracle.assert_same_table(ours, oracle.snapshot(table.storage.base_path), context)


def trips_table_on_index(folder: Path, table_type: str, index: str, **options: str) -> Any:
    settings = {"hoodie.index.type": index, "hoodie.parquet.small.file.limit": "0"}
    if index == "BUCKET":
        settings["hoodie.bucket.index.num.buckets"] = "2"
    _, table = create_trips_table(folder, table_type, {**settings, **options})
    return table
