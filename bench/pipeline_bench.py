"""Wall time of the demo pipeline (examples/pipeline.py, the README's main job: `./run.sh demo`):
three ingest DAG runs each followed by a Hive sync, compaction (plan, execute, Hive sync) and
maintenance (clean, archive), through Airflow on SQLite and local Spark, in a fresh work
folder (target < 60 s on two cores). Each DAG run's own time, as the demo prints it, too.

Usage: python bench/pipeline_bench.py [--repeat R] [--spark-master M]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 60
# The demo's line per DAG run: "  trips_ingest       success  {...}  (12 s)"
DAG_RUN = re.compile(r"^  (\S+)\s+(\S+)\s+.*\((\d+) s\)$")


def run_pipeline(spark_master: str) -> tuple[float, list[tuple[str, int]]]:
    """Wall seconds of one demo run in a fresh work folder, and its DAG runs' seconds."""
    workdir = Path(tempfile.mkdtemp(prefix="hudi-pipeline-bench-"))
    command = [sys.executable, str(ROOT / "examples" / "pipeline.py"), "--workdir", str(workdir)]
    command += ["--spark-master", spark_master]
    try:
        started = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - started
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if done.returncode != 0:
        sys.exit(
            f"the demo failed ({done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    steps = [(m[1], int(m[3])) for m in map(DAG_RUN.match, done.stdout.splitlines()) if m]
    return elapsed, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="best of this many demo runs")
    parser.add_argument("--spark-master", default="local[2]")
    args = parser.parse_args()
    runs = [run_pipeline(args.spark_master) for _ in range(args.repeat)]
    seconds, steps = min(runs)
    for dag_id, step_seconds in steps:
        print(f"  {dag_id:<18} {step_seconds:4d} s")
    every = ", ".join(f"{s:.0f}" for s, _ in runs)
    print(
        f"demo pipeline (3 ingests, compaction, maintenance, Hive sync): {seconds:.0f} s "
        f"(target < {TARGET_SECONDS} s; Spark {args.spark_master}; runs: {every} s)"
    )


if __name__ == "__main__":
    main()
