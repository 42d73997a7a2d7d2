"""A small parquet dataset to bootstrap, as the Spark, Airflow, Hive and UI tests of bootstrap
use it: two hive-style partitions (`city=<name>/`) of two files each, written with pyarrow,
the files without the partition column (as Spark writes a partitioned dataset)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

CITIES = ("chennai", "san_francisco")
FILES_PER_PARTITION = 2
ROWS_PER_FILE = 3
# The partitions' paths in the table, and the selector options of a bootstrap that references
# the first partition (metadata only) and rewrites the second (full record).
PARTITIONS = tuple(f"city={city}" for city in CITIES)
MIXED_MODES = {
    "hoodie.bootstrap.mode.selector": (
        "org.apache.hudi.client.bootstrap.selector.BootstrapRegexModeSelector"
    ),
    "hoodie.bootstrap.mode.selector.regex": PARTITIONS[0],
    "hoodie.bootstrap.mode.selector.regex.mode": "METADATA_ONLY",
}


def write_source(folder: Path) -> pa.Table:
    """Writes the dataset under `folder`; returns its rows as a reader of a hive-style dataset
    sees them (the partition column last, a string)."""
    parts = []
    for city in CITIES:
        partition = folder / f"city={city}"
        partition.mkdir(parents=True)
        for n in range(FILES_PER_PARTITION):
            keys = [f"{city}-{n}-{k}" for k in range(ROWS_PER_FILE)]
            rows = pa.table(
                {
                    "uuid": keys,
                    "ts": pa.array([n * 10 + k for k in range(ROWS_PER_FILE)], pa.int64()),
                    "fare": [float(len(city) + n + k) for k in range(ROWS_PER_FILE)],
                }
            )
            pq.write_table(rows, partition / f"part-{n:05d}.parquet")
            parts.append(rows.append_column("city", pa.array([city] * rows.num_rows)))
    (folder / "_SUCCESS").write_bytes(b"")  # what Spark leaves beside the data: not data
    return pa.concat_tables(parts)


def data_rows(table: pa.Table) -> list[dict[str, Any]]:
    """A table's rows without the meta columns, by record key."""
    data = table.select([name for name in table.column_names if not name.startswith("_hoodie")])
    return sorted(data.to_pylist(), key=lambda row: row["uuid"])


def source_files() -> int:
    return len(CITIES) * FILES_PER_PARTITION
