"""Bucket index upserts against the SIMPLE index and against deltalake, on one 2M-row table.

Prints three ratios (lower is better for us), every side run in this process on the same data:
  MOR upsert of 10% rows, BUCKET / SIMPLE    target: under 0.5x
  COW upsert of 10% rows, BUCKET / SIMPLE    (reported)
  COW upsert of 10% rows, BUCKET / deltalake MERGE   target: <= 0.8x

The SIMPLE index reads the stored keys of every partition the batch touches and joins them;
the bucket index reads none: it hashes each key to its bucket's file group. Buckets are sized
as a table's would be: a partition here is 250k rows (~25 MB of parquet), so 4 buckets make
~6 MB file groups, already far below the 120 MB hoodie.parquet.max.file.size; more buckets
make smaller files, whose fixed per-file costs (a log file and marker each, a parquet footer)
the SIMPLE side, writing one file group per partition, does not pay (try --buckets 8).
Usage: python bench/bucket_index_bench.py [--rows N] [--repeat R] [--buckets B]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cow_write_bench import best_of, deltalake_merge_seconds, trips, updates_of  # noqa: E402
from mor_bench import new_table  # noqa: E402

from hudi_core import HudiTable  # noqa: E402


def upsert_seconds(
    path: Path, table_type: str, options: dict, data: pa.Table, updates: pa.Table, repeat: int
) -> float:
    """Best time of upserting `updates` into a fresh table bulk-inserted with `data`."""
    holder: dict[str, HudiTable] = {}

    def setup() -> None:
        holder["t"] = new_table(path, table_type, options)
        holder["t"].write(data, operation="bulk_insert")

    seconds = best_of(repeat, setup, lambda: holder["t"].write(updates))
    assert holder["t"].read(columns=["uuid"]).num_rows == data.num_rows, "rows were lost"
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--buckets", type=int, default=4, help="buckets per partition")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hudi-bench-"))
    data = trips(args.rows, seed=1)
    updates = updates_of(data, 0.10, seed=2)
    codec = {"hoodie.parquet.compression.codec": "snappy"}
    bucket = {
        **codec,
        "hoodie.index.type": "BUCKET",
        "hoodie.bucket.index.num.buckets": args.buckets,
    }
    print(f"rows={data.num_rows:,} updates={updates.num_rows:,} buckets/partition={args.buckets}")

    seconds = {}
    for table_type in ("MERGE_ON_READ", "COPY_ON_WRITE"):
        for index, options in (("SIMPLE", codec), ("BUCKET", bucket)):
            path = work / f"{table_type}-{index}"
            seconds[table_type, index] = upsert_seconds(
                path, table_type, options, data, updates, args.repeat
            )
            print(f"{table_type:14} {index:6} upsert (10%): {seconds[table_type, index]:7.2f} s")
    delta = deltalake_merge_seconds(work, data, updates, "snappy", args.repeat)
    print(f"deltalake MERGE (10%):             {delta:7.2f} s")

    mor = seconds["MERGE_ON_READ", "BUCKET"] / seconds["MERGE_ON_READ", "SIMPLE"]
    cow = seconds["COPY_ON_WRITE", "BUCKET"] / seconds["COPY_ON_WRITE", "SIMPLE"]
    versus_delta = seconds["COPY_ON_WRITE", "BUCKET"] / delta
    print(f"MOR bucket / MOR simple upsert:   {mor:.2f}x (target < 0.5x)")
    print(f"COW bucket / COW simple upsert:   {cow:.2f}x")
    print(f"COW bucket upsert / deltalake:    {versus_delta:.2f}x (target <= 0.8x)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
