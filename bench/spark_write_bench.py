"""The Spark writer against Spark's own parquet writer, on the same DataFrame, same session:

  Hudi upsert of N rows (default 3M trips rows, partitioned by city) into a new table
  / df.write.partitionBy("city").parquet(...) of the same DataFrame   (target <= 2.0)

The DataFrame is spark.read.parquet of source files pyarrow wrote from cow_write_bench's
trips() rows. Both writes run on local[2] in one session whose driver heap is
--driver-memory (default 1g, what spark-submit gives): a write that needs more than Spark's
own writer does fails here with the JVM's OutOfMemoryError (a --rows 10000000 run at 1g must
pass). Each write is timed best of --repeat, in wall seconds and in CPU seconds of the whole
process tree (driver, JVM, Python workers): on a shared machine the CPU ratio is the steadier.

Both sides write at --codec (default snappy, Spark's parquet default); --codec default
leaves each side at its own default codec (Spark's snappy, hoodie.parquet.compression.codec's
default for Hudi).

Usage: python bench/spark_write_bench.py [--rows N] [--files F] [--repeat R]
    [--driver-memory 1g] [--codec snappy|gzip|zstd|default] [--conf KEY=VALUE ...]
    [--hoodie-conf KEY=VALUE ...] [--jobs] (--conf: the session's Spark conf; --jobs: the
    seconds of each Spark job and stage of the Hudi writes)
(a smoke run: --rows 2000 --files 2 --repeat 1
    --hoodie-conf hoodie.spark.local.threshold.bytes=0)
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cow_write_bench import trips  # noqa: E402

TARGET = 2.0
LOCAL_THRESHOLD = "hoodie.spark.local.threshold.bytes"


def write_source(folder: Path, rows: int, files: int) -> None:
    """`rows` trips rows in `files` parquet files, written by pyarrow a slice at a time (the
    rows of a 10M-row source are never all in memory at once)."""
    folder.mkdir(parents=True, exist_ok=True)
    per_file = -(-rows // files)
    for index in range(files):
        count = min(per_file, rows - index * per_file)
        if count <= 0:
            break
        data = trips(count, seed=index + 1)
        ids = data.column("uuid")  # unique over the whole source: prefix the file's index
        data = data.set_column(0, "uuid", pc.binary_join_element_wise(f"f{index}-", ids, ""))
        pq.write_table(data, folder / f"part-{index}.parquet")


def session(driver_memory: str, conf: list[str]):
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", driver_memory)
        .config("spark.ui.showConsoleProgress", "false")
        .config(map=dict(pair.split("=", 1) for pair in conf))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def spark_parquet(df, target: Path, codec: str | None) -> None:
    writer = df.write.mode("overwrite").partitionBy("city")
    if codec is not None:
        writer = writer.option("compression", codec)
    writer.parquet(str(target))


def hudi_upsert(df, target: Path, codec: str | None, conf: dict[str, str]) -> None:
    import spark_jobs

    options = {
        "hoodie.table.name": "trips",
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        **({"hoodie.parquet.compression.codec": codec} if codec is not None else {}),
        **conf,
    }
    shutil.rmtree(target, ignore_errors=True)
    instant = spark_jobs.write(df, str(target), "upsert", options, mode="overwrite")
    assert instant is not None, "the upsert wrote nothing"


def job_count(spark) -> int:
    return spark.sparkContext._jsc.sc().statusStore().jobsList(None).size()


def print_jobs(spark, skip: int) -> None:
    """The seconds of each Spark job of the session after the first `skip` (the status store
    lists the newest first), with where it was called."""
    jobs = spark.sparkContext._jsc.sc().statusStore().jobsList(None)
    for index in reversed(range(jobs.size() - skip)):
        job = jobs.apply(index)
        started, ended = job.submissionTime(), job.completionTime()
        if started.isEmpty() or ended.isEmpty():
            continue
        seconds = (ended.get().getTime() - started.get().getTime()) / 1000
        print(f"    job {job.jobId()}: {seconds:6.2f} s  {job.name()[:90]}")
        store = spark.sparkContext._jsc.sc().statusStore()
        stage_ids = job.stageIds()
        for position in range(stage_ids.size()):
            stage = store.lastStageAttempt(stage_ids.apply(position))
            if stage.submissionTime().isEmpty() or stage.completionTime().isEmpty():
                continue  # skipped
            took = stage.completionTime().get().getTime() - stage.submissionTime().get().getTime()
            print(
                f"      stage {stage.stageId()}: {took / 1000:6.2f} s, {stage.numTasks()} tasks,"
                f" {stage.executorRunTime() / 1000:6.2f} task s"
            )


def timed(fn) -> tuple[float, float]:
    """Wall seconds of `fn` and CPU seconds this process tree (the driver, its JVM and the
    JVM's Python workers) spent on it: on a shared machine the CPU seconds are the steadier
    figure."""
    started, cpu = time.perf_counter(), tree_cpu_seconds()
    fn()
    return time.perf_counter() - started, tree_cpu_seconds() - cpu


def tree_cpu_seconds() -> float:
    """CPU seconds of this process and its descendants, live ones with the children they
    reaped (Linux /proc)."""
    parent_of, ticks = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:  # gone since listed
            continue
        parent_of[int(entry)] = int(fields[1])
        ticks[int(entry)] = sum(int(value) for value in fields[11:15])  # u, s, cu, cs time
    total, pending = 0, [os.getpid()]
    children: dict[int, list[int]] = {}
    for pid, parent in parent_of.items():
        children.setdefault(parent, []).append(pid)
    while pending:
        pid = pending.pop()
        total += ticks.get(pid, 0)
        pending.extend(children.get(pid, []))
    return total / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=3_000_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--driver-memory", default="1g")
    parser.add_argument("--codec", default="snappy")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="Spark's")
    parser.add_argument("--hoodie-conf", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--hudi-only", action="store_true", help="skip Spark's parquet write")
    parser.add_argument("--jobs", action="store_true", help="print each Spark job's seconds")
    args = parser.parse_args()
    codec = None if args.codec == "default" else args.codec
    conf = dict(pair.split("=", 1) for pair in args.hoodie_conf)
    work = Path(tempfile.mkdtemp(prefix="hudi-spark-write-bench-"))
    spark = session(args.driver_memory, args.conf)
    try:
        # A warm-up of both writers on a small source: JVM code and Python workers are warm
        # before anything is timed, as in a long-running session.
        write_source(work / "warm-up", min(args.rows, 20_000), 2)
        warm_up = spark.read.parquet(str(work / "warm-up"))
        spark_parquet(warm_up, work / "parquet", codec)
        hudi_upsert(warm_up, work / "hudi", codec, {**conf, LOCAL_THRESHOLD: "0"})
        write_source(work / "source", args.rows, args.files)
        df = spark.read.parquet(str(work / "source"))
        spark_runs, hudi_runs = [], []  # (wall, cpu) seconds
        for _ in range(args.repeat):  # interleaved: both sides see the same machine load
            if not args.hudi_only:
                spark_runs.append(timed(lambda: spark_parquet(df, work / "parquet", codec)))
                print("  spark parquet: {:.2f} s, {:.2f} CPU s".format(*spark_runs[-1]), flush=True)
            jobs_before = job_count(spark)
            hudi_runs.append(timed(lambda: hudi_upsert(df, work / "hudi", codec, conf)))
            print("  hudi upsert:   {:.2f} s, {:.2f} CPU s".format(*hudi_runs[-1]), flush=True)
            if args.jobs:
                print_jobs(spark, jobs_before)
        print(f"rows: {args.rows:,} in {args.files} parquet files, local[2]", end=", ")
        print(f"driver memory {args.driver_memory}, codec {args.codec}")
        print(f"options: {' '.join(args.hoodie_conf) or 'defaults'}")
        hudi_s, hudi_cpu = min(w for w, _ in hudi_runs), min(c for _, c in hudi_runs)
        print(f"hudi upsert into a new table:       {hudi_s:7.2f} s {hudi_cpu:7.2f} CPU s")
        if spark_runs:
            spark_s, spark_cpu = min(w for w, _ in spark_runs), min(c for _, c in spark_runs)
            print(f"spark df.write.partitionBy.parquet: {spark_s:7.2f} s {spark_cpu:7.2f} CPU s")
            print(f"hudi upsert / spark parquet: ratio {hudi_s / spark_s:.2f} (target <= {TARGET})")
            print(f"  in CPU seconds (steadier on a shared machine): {hudi_cpu / spark_cpu:.2f}")
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
