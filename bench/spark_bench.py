"""Spark ingest figures, each against a reference measured in the same process:

  1. ingest of N rows (default 5M, from parquet source files, upserted into a new table) on
     local[2] / the same on local[1] (target <= 0.65: two cores, nearly half the time)
  2. that ingest on local[2] / hudi_core's local engine writing the same rows (reported:
     Spark's share is what moving rows between the JVM and Python workers costs)

Usage: python bench/spark_bench.py [--rows N] [--files F] [--repeat R]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from argparse import Namespace
from pathlib import Path

import pyarrow.dataset as ds
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cow_write_bench import trips  # noqa: E402

from hudi_core import HudiTable  # noqa: E402

OPTIONS = {"hoodie.parquet.compression.codec": "snappy"}


def write_source(folder: Path, rows: int, files: int) -> None:
    data = trips(rows, seed=1)
    per_file = -(-rows // files)
    for index in range(files):
        pq.write_table(data.slice(index * per_file, per_file), folder / f"part-{index}.parquet")


def spark_ingest(master: str, source: Path, target: Path) -> float:
    """Seconds of one ingest run on a fresh session of `master` (session start not counted)."""
    from pyspark.sql import SparkSession

    from spark_jobs.ingest import ingest_once

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master(master)
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        table = new_table(target)
        args = Namespace(
            base_path=str(target),
            source_path=str(source),
            source_format="parquet",
            source_limit=None,
            op="upsert",
        )
        started = time.perf_counter()
        outcome = ingest_once(spark, table, args)
        elapsed = time.perf_counter() - started
        assert outcome["counts"]["rows_written"] > 0, outcome
        return elapsed
    finally:
        spark.stop()


def local_ingest(source: Path, target: Path) -> float:
    table = new_table(target)
    started = time.perf_counter()
    rows = ds.dataset(source, format="parquet").to_table()
    table.write(rows, operation="upsert")
    return time.perf_counter() - started


def new_table(path: Path) -> HudiTable:
    shutil.rmtree(path, ignore_errors=True)
    return HudiTable.create(
        str(path), "trips", "COPY_ON_WRITE", ["uuid"], ["city"], "ts", options=OPTIONS
    )


def best(runs: list[float]) -> float:
    return min(runs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hudi-spark-bench-"))
    try:
        source = work / "source"
        source.mkdir()
        write_source(source, args.rows, args.files)
        target = work / "table"
        two = best([spark_ingest("local[2]", source, target) for _ in range(args.repeat)])
        one = best([spark_ingest("local[1]", source, target) for _ in range(args.repeat)])
        local = best([local_ingest(source, target) for _ in range(args.repeat)])
        print(f"rows: {args.rows:,} in {args.files} parquet files, upsert into a new table")
        print(f"Spark ingest local[1]:       {one:7.2f} s")
        print(f"Spark ingest local[2]:       {two:7.2f} s   ratio {two / one:.2f} (target <= 0.65)")
        print(
            f"hudi_core local engine:      {local:7.2f} s   Spark local[2] / it: {two / local:.2f}"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
