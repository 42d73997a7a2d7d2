"""The sync scenario every mode goes through: a copy-on-write and a merge-on-read table, each
synced after every step:

1. `initial`: rows in partitions sf and nyc (the tables are created);
2. `new_partition`: rows in a new partition, chennai;
3. `no_change`: nothing written (the sync must change nothing);
4. `new_column`: rows with a new column, tip;
5. `overwrite`: insert_overwrite_table with rows of sf and nyc only, leaving chennai empty.

`run_scenario` takes the sync (a function of base path and options) and a `view` function
returning what the metastore holds; it returns, per step, the sync results, the view and the
commit each table was at.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

from hudi_core import HudiTable
from hudi_core.timeline import ActiveTimeline

DATABASE = "lake"
TABLES = {"COPY_ON_WRITE": "trips_cow", "MERGE_ON_READ": "trips_mor"}
STEPS = ("initial", "new_partition", "no_change", "new_column", "overwrite")


def rows(ids: range, city: str, ts: int, tip: bool = False) -> pa.Table:
    columns = {
        "id": [f"{city}-{i}" for i in ids],
        "city": [city] * len(ids),
        "ts": pa.array([ts] * len(ids), pa.int64()),
        "fare": [float(i) * 1.5 for i in ids],
        "passengers": pa.array([i % 4 + 1 for i in ids], pa.int32()),
    }
    if tip:
        columns["tip"] = [float(i) / 10 for i in ids]
    return pa.table(columns)


def _writes(step: str) -> list[tuple[str, pa.Table]]:
    if step == "initial":
        return [("upsert", pa.concat_tables([rows(range(5), "sf", 1), rows(range(5), "nyc", 1)]))]
    if step == "new_partition":
        return [("upsert", rows(range(3), "chennai", 2))]
    if step == "new_column":
        return [("upsert", rows(range(2), "sf", 3, tip=True))]
    if step == "overwrite":
        both = pa.concat_tables([rows(range(4), "sf", 4, tip=True), rows(range(4), "nyc", 4, True)])
        return [("insert_overwrite_table", both)]
    return []


def create_tables(folder: Path) -> dict[str, str]:
    """Base path per table type."""
    paths = {}
    for table_type in TABLES:
        path = str(folder / table_type.lower())
        HudiTable.create(
            path,
            "trips",
            table_type=table_type,
            record_key_fields=["id"],
            partition_fields=["city"],
            precombine_field="ts",
        )
        paths[table_type] = path
    return paths


def sync_options(table_type: str, mode_options: dict[str, str]) -> dict[str, str]:
    return {
        "hoodie.datasource.hive_sync.enable": "true",
        "hoodie.datasource.hive_sync.database": DATABASE,
        "hoodie.datasource.hive_sync.table": TABLES[table_type],
        **mode_options,
    }


def latest_commit(path: str) -> str:
    table = HudiTable.open(path)
    return ActiveTimeline.load(table.storage).last_completed_write().timestamp


def run_scenario(
    folder: Path,
    mode_options: dict[str, str],
    sync: Callable[[str, dict[str, str]], Any],
    view: Callable[[], dict],
) -> dict[str, dict]:
    paths = create_tables(folder)
    outcome: dict[str, dict] = {"paths": paths}
    for step in STEPS:
        results, commits = {}, {}
        for table_type, path in paths.items():
            table = HudiTable.open(path)
            for operation, batch in _writes(step):
                table.write(batch, operation=operation)
            results[table_type] = sync(path, sync_options(table_type, mode_options))
            commits[table_type] = latest_commit(path)
        outcome[step] = {"results": results, "commits": commits, "view": view()}
    return outcome
