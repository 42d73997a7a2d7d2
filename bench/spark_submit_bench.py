"""A small drop ingested by a real spark-submit, as an Airflow task runs it: wall time of

  1. `spark-submit spark_jobs/ingest.py` of a 250-row JSON drop creating a merge-on-read table
     (target <= 15 s on local[2], two cores)
  2. a second run ingesting another 250-row drop into that table (same target)

Wall time is everything a task waits for: the JVM's and the session's start, the job's checks,
the write and the exit. The table is checked after (250, then 500 rows), and the job's result
line (--result-file) is printed.

Compare settings with --conf (spark-submit's) and --hoodie-conf (the job's), repeatable:
    python bench/spark_submit_bench.py --hoodie-conf hoodie.parquet.small.file.limit=0

Usage: python bench/spark_submit_bench.py [--rows N] [--repeat R] [--master M]
    [--conf KEY=VALUE ...] [--hoodie-conf KEY=VALUE ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hudi_core import HudiTable

ROOT = Path(__file__).resolve().parents[1]
CITIES = ("san_francisco", "sao_paulo", "chennai")
TARGET_SECONDS = 15


def spark_submit() -> str:
    """The spark-submit of this interpreter's pyspark (found without importing pyspark)."""
    beside = Path(sys.executable).parent / "spark-submit"
    if beside.exists():
        return str(beside)
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("pyspark is not installed here: pip install -e '.[spark]'")
    return str(Path(next(iter(spec.submodule_search_locations))) / "bin" / "spark-submit")


def land(folder: Path, first_key: int, rows: int, ts: int) -> None:
    """A JSON-lines drop of trip records with keys first_key .. first_key + rows - 1."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"drop-{first_key}.json", "w") as out:
        for key in range(first_key, first_key + rows):
            record = {
                "uuid": f"trip-{key:06d}",
                "city": CITIES[key % len(CITIES)],
                "ts": ts,
                "fare": round(10 + key * 0.5, 2),
                "rider": f"rider-{key % 11}",
            }
            out.write(json.dumps(record) + "\n")


def ingest(args, table: Path, landing: Path, result: Path) -> tuple[float, dict]:
    """Wall seconds of one spark-submit of the ingest job, and its result line."""
    command = [
        spark_submit(),
        *("--master", args.master, "--conf", "spark.ui.enabled=false"),
        *(part for pair in args.conf for part in ("--conf", pair)),
        str(ROOT / "spark_jobs" / "ingest.py"),
        *("--base-path", str(table), "--table-name", "trips"),
        *("--source-path", str(landing), "--source-format", "json", "--op", "upsert"),
        *("--table-type", "MERGE_ON_READ", "--record-key-field", "uuid"),
        *("--partition-path-field", "city", "--precombine-field", "ts"),
        *("--result-file", str(result)),
        *(part for pair in args.hoodie_conf for part in ("--hoodie-conf", pair)),
    ]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(
            f"spark-submit failed ({done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    return elapsed, json.loads(result.read_text())


def row_count(table: Path) -> int:
    return HudiTable.open(str(table)).read(columns=["uuid"]).num_rows


def one_round(args, work: Path) -> tuple[tuple[float, dict], tuple[float, dict]]:
    """A fresh table: the first drop creates it, the second is ingested into it."""
    shutil.rmtree(work, ignore_errors=True)
    table, landing = work / "lake" / "trips", work / "landing"
    land(landing, 0, args.rows, ts=1)
    first = ingest(args, table, landing, work / "first.json")
    assert row_count(table) == args.rows, "the first ingest did not write its drop"
    land(landing, args.rows, args.rows, ts=2)  # new keys, in a file newer than the checkpoint
    second = ingest(args, table, landing, work / "second.json")
    assert row_count(table) == 2 * args.rows, "the second ingest did not write its drop"
    return first, second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=250, help="rows of each drop")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many (fresh tables)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--hoodie-conf", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hudi-spark-submit-bench-"))
    try:
        rounds = [one_round(args, work / str(n)) for n in range(args.repeat)]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    settings = " ".join([*args.conf, *args.hoodie_conf]) or "defaults"
    print(f"spark-submit --master {args.master} ({settings}), best of {args.repeat}:")
    for index, what in enumerate(("new table", "existing table")):
        runs = [r[index] for r in rounds]
        seconds, result = min(runs, key=lambda run: run[0])
        all_runs = ", ".join(f"{s:.1f}" for s, _ in runs)
        print(
            f"spark-submit ingest, {args.rows} rows, {what}: {seconds:.1f} s "
            f"(target <= {TARGET_SECONDS} s; runs: {all_runs} s)"
        )
        print(f"  result: {json.dumps(result, sort_keys=True)}")


if __name__ == "__main__":
    main()
