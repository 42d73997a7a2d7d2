"""A stream into a Hudi table through spark_jobs.streaming.hudi_sink, run in a process of its
own (a SparkSession of its own) that SIGKILLs itself while one batch's write is committing;
and the stream the tests run, shared by that process and the test process.

    python -m tests.streaming_sink_child <table path> <source dir> <checkpoint> <kill batch>
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# A merge-on-read trips table, created by the stream's first batch.
TABLE_OPTIONS = {
    "hoodie.table.name": "trips",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
}


def run_stream(spark, source: str, checkpoint: str, sink: Callable) -> str:
    """Streams the parquet files of datagen.trips under `source`, one file a micro-batch,
    into `sink` until none is left; returns the query's id."""
    from pyspark.sql.pandas.types import from_arrow_schema

    from tests.datagen import SCHEMA

    query = (
        spark.readStream.schema(from_arrow_schema(SCHEMA))
        .option("maxFilesPerTrigger", 1)
        .parquet(source)
        .writeStream.foreachBatch(sink)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    try:
        assert query.awaitTermination(120), "the stream did not finish in 120 s"
    finally:
        query.stop()
    return str(query.id)


def kill_while_committing(path: str, source: str, checkpoint: str, kill_batch: int) -> None:
    """Runs this module in a child process that dies as batch `kill_batch`'s deltacommit is
    about to complete (its files written, its instant inflight); returns once the child and
    its JVM are gone (the JVM holds the output pipes until it exits)."""
    command = [sys.executable, "-m", "tests.streaming_sink_child"]
    command += [path, source, checkpoint, str(kill_batch)]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, timeout=180)
    assert result.returncode == -signal.SIGKILL, result.stderr.decode()[-4000:]


def _die_completing(kill_batch: int, current: Mapping[str, int]) -> None:
    """Makes this process SIGKILL itself when batch `kill_batch`'s deltacommit completes."""
    from hudi_core.timeline import ActiveTimeline, State

    original = ActiveTimeline.transition

    def transition(self, instant, state, content=b""):
        dying = current.get("batch") == kill_batch and instant.action == "deltacommit"
        if dying and state is State.COMPLETED:
            os.kill(os.getpid(), signal.SIGKILL)
        return original(self, instant, state, content)

    ActiveTimeline.transition = transition


def main(argv: list[str]) -> None:
    from pyspark.sql import SparkSession

    from spark_jobs.streaming import hudi_sink

    path, source, checkpoint, kill_batch = argv
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("streaming-sink-child")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    current: dict[str, int] = {}
    _die_completing(int(kill_batch), current)
    sink = hudi_sink(path, {**TABLE_OPTIONS, "hoodie.datasource.write.operation": "insert"})

    def tracked(df, batch_id: int) -> None:
        current["batch"] = batch_id
        sink(df, batch_id)

    run_stream(spark, source, checkpoint, tracked)


if __name__ == "__main__":
    main(sys.argv[1:])
