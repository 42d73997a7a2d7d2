"""Every bench script runs: each at a tiny size (seconds), in its own interpreter, and prints
the figures it exists for. A bench that no longer runs (a job grew an argument, an API moved)
fails here, not on the day someone wants its numbers. The figures themselves are not checked:
performance lives in bench/ scripts that print ratios, never in timed tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
# A tiny drop is written on the driver unless told otherwise; the smoke run takes the executors.
THROUGH_EXECUTORS = ["--hoodie-conf", "hoodie.spark.local.threshold.bytes=0"]

# Script -> (tiny arguments, lines its output must hold). Every bench/*.py has an entry.
LOCAL_BENCHES = {
    "cow_write_bench.py": (
        ["--rows", "2000", "--repeat", "1"],
        [
            "hudi bulk_insert / delta-rs:",
            "hudi upsert (10%) / delta-rs MERGE:",
            "hudi bulk_insert / pyarrow:",
            "ratio",
        ],
    ),
    "bloom_bench.py": (
        ["--keys", "20000", "--repeat", "1"],
        ["compiled path start-up", "numpy / compiled per hash: ratio", "break-even"],
    ),
    "mor_bench.py": (
        ["--rows", "2000", "--repeat", "1"],
        ["MOR upsert (10%):", "our snapshot:", "peak RSS of compacting that file group:"],
    ),
    "services_bench.py": (
        ["--rows", "2000", "--commits", "30", "--repeat", "1"],
        ["compaction (10% in logs):", "(target <= 1.4", "timeline load"],
    ),
    "bucket_index_bench.py": (
        ["--rows", "2000", "--repeat", "1"],
        ["MOR bucket / MOR simple upsert:", "COW bucket upsert / deltalake:"],
    ),
    "clustering_bench.py": (
        ["--rows", "4000", "--commits", "8", "--repeat", "1"],
        [
            "pyarrow read+sort+write:",
            "(target <= 1.5",
            "speedup after z-order:",
            "peak RSS of clustering",
        ],
    ),
    "bootstrap_bench.py": (
        ["--rows", "4000", "--files", "8", "--repeat", "1"],
        ["METADATA_ONLY bootstrap:", "(target <= 3)", "data-column query:", "FULL_RECORD"],
    ),
}
SPARK_BENCHES = {
    "spark_write_bench.py": (
        ["--rows", "2000", "--files", "2", "--repeat", "1", *THROUGH_EXECUTORS],
        ["hudi upsert into a new table:", "hudi upsert / spark parquet: ratio"],
    ),
    "spark_bench.py": (
        ["--rows", "2000", "--files", "2", "--repeat", "1", *THROUGH_EXECUTORS],
        ["Spark ingest local[2]:", "Spark local[2] / local engine: ratio", "jobs per write"],
    ),
    "streaming_bench.py": (
        ["--rows", "4000", "--commits", "2", "--repeat", "1"],
        ["batch incremental read:", "streaming / batch: ratio", "a micro-batch per commit"],
    ),
    "spark_submit_bench.py": (
        ["--repeat", "1"],
        ["spark-submit ingest, 250 rows, new table:", "250 rows, existing table:"],
    ),
    # The demo at its only size: three ingests, compaction and maintenance through Airflow.
    "pipeline_bench.py": (
        ["--repeat", "1"],
        ["demo pipeline (3 ingests, compaction, maintenance, Hive sync):"],
    ),
}


def run_bench(script: str, args: list[str], expected: list[str], timeout: int = 600) -> None:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{script} failed:\n{output[-4000:]}"
    missing = [line for line in [*expected, "target"] if line not in done.stdout]
    assert not missing, f"{script} printed no {missing}:\n{done.stdout[-4000:]}"


def test_every_bench_script_has_a_smoke_run():
    scripts = {path.name for path in BENCH.glob("*.py")}
    assert scripts == set(LOCAL_BENCHES) | set(SPARK_BENCHES)


@pytest.mark.parametrize("script", sorted(LOCAL_BENCHES))
def test_bench_runs_at_a_tiny_size(script):
    run_bench(script, *LOCAL_BENCHES[script])


@pytest.mark.spark
@pytest.mark.jvm
@pytest.mark.slow
@pytest.mark.parametrize(
    "script",
    [
        pytest.param(name, marks=[pytest.mark.airflow] if name == "pipeline_bench.py" else [])
        for name in sorted(SPARK_BENCHES)
    ],
)
def test_spark_bench_runs_at_a_tiny_size(script):
    run_bench(script, *SPARK_BENCHES[script], timeout=900)
