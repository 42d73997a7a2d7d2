"""Spark ingest figures, each against a reference measured in the same process:

  1. ingest of N rows (default 5M, from parquet source files, upserted into a new table) on
     local[2] / the same on local[1] (target <= 0.65: two cores, nearly half the time)
  2. that ingest on local[2] / hudi_core's local engine writing the same rows (reported:
     Spark's share is scheduling, shuffles and moving blobs between the JVM and Python)

Next to each Spark time it prints how many cores were busy on average (from /proc/stat, the
machine otherwise idle): local[1] is not one core's work, as the JVM's task thread, the Python
worker it feeds and Spark's shuffle and GC threads run side by side.

Each Spark run gets a fresh session whose Python workers are warmed up first by ingesting a
small drop into a scratch table (a long-running ingest pays that once); the warm-up's own
time is printed too, as what a one-shot spark-submit adds.

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


def spark_ingest(master: str, source: Path, target: Path) -> tuple[float, float]:
    """Seconds of one ingest run on a fresh session of `master`, after a warm-up ingest of
    a small drop (session start not counted), and seconds of that warm-up."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master(master)
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "4g")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        warm_up = time.perf_counter()
        ingest(spark, source.parent / "warm-up", target.parent / "scratch")
        warm_up = time.perf_counter() - warm_up
        started, busy = time.perf_counter(), busy_seconds()
        outcome = ingest(spark, source, target)
        elapsed = time.perf_counter() - started
        assert outcome["counts"]["rows_written"] > 0, outcome
        print(f"{master}: {elapsed:.2f} s, {(busy_seconds() - busy) / elapsed:.2f} cores busy")
        return elapsed, warm_up
    finally:
        spark.stop()


def busy_seconds() -> float:
    """CPU seconds the whole machine spent busy since boot (Linux /proc/stat)."""
    with open("/proc/stat") as stat:
        user, nice, system, _idle, _iowait, irq, softirq, steal = map(
            int, stat.readline().split()[1:9]
        )
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def ingest(spark, source: Path, target: Path) -> dict:
    from spark_jobs.ingest import ingest_once

    table = new_table(target)
    args = Namespace(
        base_path=str(target),
        source_path=str(source),
        source_format="parquet",
        source_limit=None,
        op="upsert",
    )
    return ingest_once(spark, table, args)


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
        (work / "warm-up").mkdir()
        write_source(work / "warm-up", 10_000, 2)
        target = work / "table"
        two = [spark_ingest("local[2]", source, target) for _ in range(args.repeat)]
        one = [spark_ingest("local[1]", source, target) for _ in range(args.repeat)]
        local = best([local_ingest(source, target) for _ in range(args.repeat)])
        print()
        two_s, one_s = best([t for t, _ in two]), best([t for t, _ in one])
        print(f"rows: {args.rows:,} in {args.files} parquet files, upsert into a new table")
        print(f"Spark ingest local[1]:       {one_s:7.2f} s")
        ratio = two_s / one_s
        print(f"Spark ingest local[2]:       {two_s:7.2f} s   ratio {ratio:.2f} (target <= 0.65)")
        gap = two_s / local
        print(f"hudi_core local engine:      {local:7.2f} s   Spark local[2] / it: {gap:.2f}")
        print(
            f"warm-up (first ingest of a session, 10K rows): local[2] "
            f"{best([w for _, w in two]):.2f} s, local[1] {best([w for _, w in one]):.2f} s"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
