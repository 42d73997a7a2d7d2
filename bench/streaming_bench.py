"""Streaming source figures, against a batch incremental read measured in the same process:

  1. `spark.readStream.format("hudi")` (Trigger.AvailableNow, one micro-batch) over a range of
     commits / `spark_jobs.read` of the same range as an incremental query
     (target <= 1.3: the stream adds its offset planning and micro-batch bookkeeping);
  2. the same stream in one micro-batch per commit
     (hoodie.datasource.streaming.max.instants.per.trigger=1) / that batch read, for scale.

The table (merge-on-read, N rows, default 2M) is a bulk insert of half the rows followed by
--commits upserts that each insert a share of the other half and update 5% of the stored
rows (log files); the range is every commit after the bulk insert. Both sides write to Spark's
noop sink, so each reads every row and column. Rows per second are printed beside each time.

Usage: python bench/streaming_bench.py [--rows N] [--commits C] [--repeat R]
(a smoke run: --rows 4000 --commits 2 --repeat 1)
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cow_write_bench import trips  # noqa: E402

from hudi_core import HudiTable  # noqa: E402

INCREMENTAL = "hoodie.datasource.query.type"
TARGET = 1.3


def build_table(path: str, rows: int, commits: int) -> tuple[str, int]:
    """The table; returns the instant before the range and the rows the range changed."""
    table = HudiTable.create(
        path, "trips", "MERGE_ON_READ", ["uuid"], ["city"], "ts",
        options={"hoodie.parquet.compression.codec": "snappy"},
    )  # fmt: skip
    everything = trips(rows, seed=1)
    stored = rows // 2
    before = table.write(everything.slice(0, stored), operation="bulk_insert")
    assert before is not None
    rng = np.random.default_rng(7)
    share = -(-(rows - stored) // commits)
    changed = 0
    for number in range(commits):
        new = everything.slice(stored + number * share, share)
        updated = everything.take(rng.choice(stored, max(1, stored // 20), replace=False))
        updated = updated.set_column(2, "ts", pa.array(np.full(len(updated), number + 2)))
        table.write(pa.concat_tables([new, updated]), operation="upsert")
        changed += len(new) + len(updated)
    return before, changed


def incremental(spark, path: str, begin: str):
    import spark_jobs

    options = {INCREMENTAL: "incremental", "hoodie.datasource.read.begin.instanttime": begin}
    return spark_jobs.read(spark, path, options)


def batch_read(spark, path: str, begin: str) -> None:
    incremental(spark, path, begin).write.format("noop").mode("overwrite").save()


def stream_read(spark, path: str, begin: str, checkpoint: str, per_commit: bool) -> float:
    """Runs the query; returns the seconds its micro-batches took (Spark's triggerExecution
    of each: the query's start, the Python worker that plans for the source included, is
    not a cost per batch)."""
    options = {"hoodie.datasource.streaming.startOffset": str(int(begin) + 1)}
    if per_commit:
        options["hoodie.datasource.streaming.max.instants.per.trigger"] = "1"
    shutil.rmtree(checkpoint, ignore_errors=True)
    query = (
        spark.readStream.format("hudi")
        .options(**options)
        .load(path)
        .writeStream.format("noop")
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return sum(p["durationMs"].get("triggerExecution", 0) for p in query.recentProgress) / 1000


def best(repeat: int, run) -> tuple[float, float]:
    """The shortest wall time of `repeat` runs, and what `run` returned on that one."""
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        returned = run()
        runs.append((time.perf_counter() - started, returned))
    return min(runs, key=lambda run: run[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--commits", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import spark_jobs

    work = Path(tempfile.mkdtemp(prefix="streaming-bench-"))
    try:
        path = str(work / "trips")
        started = time.perf_counter()
        begin, changed = build_table(path, args.rows, args.commits)
        built = time.perf_counter() - started
        print(f"table: {args.rows} rows, {args.commits} commits in range ({changed} rows changed)")
        print(f"built in {built:.1f}s")
        spark = (
            SparkSession.builder.master("local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "4")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        spark_jobs.register(spark)
        emitted = incremental(spark, path, begin).count()  # also warms the Python workers up
        checkpoint = str(work / "checkpoint")
        batch, _ = best(args.repeat, lambda: batch_read(spark, path, begin))
        wall, stream = best(args.repeat, lambda: stream_read(spark, path, begin, checkpoint, False))
        per_commit_wall, per_commit = best(
            args.repeat, lambda: stream_read(spark, path, begin, checkpoint, True)
        )
        print(f"rows in range: {emitted}")
        print(f"batch incremental read: {batch:.2f}s ({emitted / batch:,.0f} rows/s)")
        print(
            f"streaming source, one micro-batch: {stream:.2f}s in the batch "
            f"({emitted / stream:,.0f} rows/s), {wall:.2f}s with the query's start"
        )
        print(f"streaming / batch: ratio {stream / batch:.2f} (target <= {TARGET})")
        print(f"  with the query's start: ratio {wall / batch:.2f}")
        print(
            f"streaming source, a micro-batch per commit: {per_commit:.2f}s in batches "
            f"({emitted / per_commit:,.0f} rows/s), {per_commit_wall:.2f}s with the start; "
            f"ratio {per_commit / batch:.2f} to the batch read"
        )
        spark.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
