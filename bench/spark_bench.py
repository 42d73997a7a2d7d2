"""Spark ingest figures, each against a reference measured in the same process:

  1. ingest of N rows (default 5M, from parquet source files, upserted into a new table) on
     local[2] / the same on local[1] (target <= 0.65: two cores, nearly half the time)
  2. that ingest on local[2] / hudi_core's local engine writing the same rows (target <= 1.5:
     Spark's share is scheduling, shuffles and moving blobs between the JVM and Python)

It also prints how many Spark jobs one ingest ran on local[2] (each job is a round of
scheduling, so fewer is faster on small drops).

The ingest runs as the job does: its arguments go through spark_jobs/ingest.py's own parser
and checks, then its main (on this session), so a job that grows arguments cannot leave the
bench behind.

Next to each Spark time it prints how many cores were busy on average (from /proc/stat, the
machine otherwise idle): local[1] is not one core's work, as the JVM's task thread, the Python
worker it feeds and Spark's shuffle and GC threads run side by side.

Each Spark run gets a fresh session whose Python workers are warmed up first by ingesting a
small drop into a scratch table through the executors (a long-running ingest pays that once);
the warm-up's own time is printed too, as what a one-shot spark-submit adds.

--hoodie-conf KEY=VALUE (repeatable) goes to the measured ingests: a drop of at most
hoodie.spark.local.threshold.bytes is written on the driver without Spark jobs, so a small
run through the executors takes --hoodie-conf hoodie.spark.local.threshold.bytes=0.

Usage: python bench/spark_bench.py [--rows N] [--files F] [--repeat R] [--hoodie-conf K=V ...]
(a smoke run: --rows 2000 --files 2 --repeat 1 --hoodie-conf hoodie.spark.local.threshold.bytes=0)
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.dataset as ds
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cow_write_bench import trips  # noqa: E402

from hudi_core import HudiTable  # noqa: E402

OPTIONS = {"hoodie.parquet.compression.codec": "snappy"}
# The warm-up goes through the executors whatever its size: it is there to start Python workers.
THROUGH_EXECUTORS = ["hoodie.spark.local.threshold.bytes=0"]


def write_source(folder: Path, rows: int, files: int) -> None:
    data = trips(rows, seed=1)
    per_file = -(-rows // files)
    for index in range(files):
        pq.write_table(data.slice(index * per_file, per_file), folder / f"part-{index}.parquet")


def spark_ingest(
    master: str, source: Path, target: Path, conf: list[str]
) -> tuple[float, float, int]:
    """Seconds of one ingest run on a fresh session of `master`, after a warm-up ingest of
    a small drop (session start not counted), seconds of that warm-up, and how many Spark
    jobs the measured ingest ran."""
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
        ingest(spark, source.parent / "warm-up", target.parent / "scratch", THROUGH_EXECUTORS)
        warm_up = time.perf_counter() - warm_up
        group = f"measured-ingest-{time.monotonic_ns()}"
        spark.sparkContext.setJobGroup(group, "the measured ingest")
        started, busy = time.perf_counter(), busy_seconds()
        outcome = ingest(spark, source, target, conf)
        elapsed = time.perf_counter() - started
        cores = (busy_seconds() - busy) / elapsed
        assert outcome["status"] == "SUCCEEDED", outcome
        assert outcome["counts"]["rows_written"] > 0, outcome
        jobs = jobs_of(spark, group)
        print(f"{master}: {elapsed:.2f} s, {cores:.2f} cores busy, {jobs} Spark jobs")
        return elapsed, warm_up, jobs
    finally:
        spark.stop()


def jobs_of(spark, group: str) -> int:
    """How many Spark jobs ran in `group` (the status tracker hears of a job from the listener
    bus, a moment after it ran: read until two reads agree)."""
    tracker = spark.sparkContext.statusTracker()
    seen = -1
    for _ in range(20):
        count = len(tracker.getJobIdsForGroup(group))
        if count == seen:
            return count
        seen = count
        time.sleep(0.1)
    return seen


def busy_seconds() -> float:
    """CPU seconds the whole machine spent busy since boot (Linux /proc/stat)."""
    with open("/proc/stat") as stat:
        user, nice, system, _idle, _iowait, irq, softirq, steal = map(
            int, stat.readline().split()[1:9]
        )
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def ingest(spark, source: Path, target: Path, conf: list[str]) -> dict:
    """The ingest job's main on this session, into a new table at `target`: its arguments
    parsed and checked by the job itself, as spark-submit would run it."""
    from spark_jobs import ingest as job

    new_table(target)
    return job.main(ingest_argv(source, target, conf))


def ingest_argv(source: Path, target: Path, conf: list[str]) -> list[str]:
    """What spark-submit would pass spark_jobs/ingest.py: upsert the parquet files of
    `source` into the table at `target`, with `conf` (KEY=VALUE) as --hoodie-conf."""
    pairs = [f"{key}={value}" for key, value in OPTIONS.items()] + conf
    return [
        *("--base-path", str(target), "--table-name", "trips"),
        *("--source-path", str(source), "--source-format", "parquet", "--op", "upsert"),
        *(part for pair in pairs for part in ("--hoodie-conf", pair)),
    ]


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
    parser.add_argument("--hoodie-conf", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    warm_rows = min(10_000, args.rows)
    work = Path(tempfile.mkdtemp(prefix="hudi-spark-bench-"))
    try:
        source = work / "source"
        source.mkdir()
        write_source(source, args.rows, args.files)
        (work / "warm-up").mkdir()
        write_source(work / "warm-up", warm_rows, 2)
        target = work / "table"
        conf = args.hoodie_conf
        two = [spark_ingest("local[2]", source, target, conf) for _ in range(args.repeat)]
        one = [spark_ingest("local[1]", source, target, conf) for _ in range(args.repeat)]
        local = best([local_ingest(source, target) for _ in range(args.repeat)])
        print()
        two_s, one_s = best([t for t, _, _ in two]), best([t for t, _, _ in one])
        print(f"rows: {args.rows:,} in {args.files} parquet files, upsert into a new table")
        print(f"options: {' '.join(conf) or 'defaults'}")
        print(f"Spark ingest local[1]:       {one_s:7.2f} s")
        ratio = two_s / one_s
        print(f"Spark ingest local[2]:       {two_s:7.2f} s   ratio {ratio:.2f} (target <= 0.65)")
        print(f"hudi_core local engine:      {local:7.2f} s")
        gap = two_s / local
        print(f"Spark local[2] / local engine: ratio {gap:.2f} (target <= 1.5)")
        print(f"jobs per write (Spark jobs of one ingest on local[2]): {min(j for *_, j in two)}")
        print(
            f"warm-up (first ingest of a session, {warm_rows:,} rows): local[2] "
            f"{best([w for _, w, _ in two]):.2f} s, local[1] {best([w for _, w, _ in one]):.2f} s"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
