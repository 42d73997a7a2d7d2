"""The main job: a merge-on-read table fed and maintained by Airflow DAGs on this machine.

    ./run.sh demo [--workdir DIR] [--spark-master local[2]] [--verbose]

Embedded defaults: a SQLite Airflow metadata database under DIR/airflow, Spark in local
mode, the table, its landing folder and the Hive metastore (Spark's embedded Derby one)
under DIR (default: ./data in the repo). It generates three drops of trip records (inserts;
updates and inserts; updates and deletes), and after each runs the `trips_ingest` DAG
through Airflow (`dag.test()`: ingest, then Hive sync); then `trips_compaction` (plan,
execute the same instant, Hive sync) and `trips_maintenance` (clean, then archive). It ends
by printing the Hive tables the syncs left in the metastore, the timeline (archived
instants too), and a sample of rows as Apache Hudi's reader (the `hudi` package) returns them,
checked against the expected rows, and with how to open the Airflow UI on these runs
(`./run.sh ui`, examples/ui.py).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from hudi_airflow import local_run

REPO = Path(__file__).resolve().parents[1]

CITIES = ["san_francisco", "sao_paulo", "chennai"]
TABLE = "trips"


def drop(ids: range, ts: int, deleted: bool = False) -> pa.Table:
    """Trip records: values depend on the key and the drop's ts, so updates show."""
    keys = list(ids)
    return pa.table(
        {
            "uuid": [f"trip-{i:04d}" for i in keys],
            "city": [CITIES[i % 3] for i in keys],
            "rider": [f"rider-{i % 11}" for i in keys],
            "fare": [round(10 + i * 0.5 + ts % 7, 2) for i in keys],
            "ts": [ts] * len(keys),
            "_hoodie_is_deleted": [deleted] * len(keys),
        }
    )


DROPS = [
    [drop(range(0, 600), ts=1)],
    [drop(range(300, 600), ts=2), drop(range(600, 800), ts=2)],
    [drop(range(100, 200), ts=3), drop(range(0, 50), ts=3, deleted=True)],
]


def expected_rows() -> dict[str, dict]:
    """Per key the latest record of all drops; deleted keys gone."""
    rows: dict[str, dict] = {}
    for tables in DROPS:
        for table in tables:
            for row in table.to_pylist():
                if row.pop("_hoodie_is_deleted"):
                    rows.pop(row["uuid"], None)
                else:
                    rows[row["uuid"]] = row
    return rows


def tables_file(workdir: Path) -> Path:
    """The repo's tables file, with the trips table moved under `workdir`."""
    document = yaml.safe_load((REPO / "dags" / "tables.yaml").read_text())
    entry = next(t for t in document["tables"] if t["name"] == TABLE)
    entry["base_path"] = str(workdir / "lake" / TABLE)
    entry["source_path"] = str(workdir / "landing" / TABLE)
    entry["metastore_dir"] = str(workdir / "metastore")
    entry["retry_delay_seconds"] = 5
    path = workdir / "tables.yaml"
    path.write_text(yaml.safe_dump({"tables": [entry]}, sort_keys=False))
    return path


def land(workdir: Path, number: int) -> None:
    folder = workdir / "landing" / TABLE
    folder.mkdir(parents=True, exist_ok=True)
    time.sleep(0.01)  # a later drop has a later modification time, so a new checkpoint
    for part, table in enumerate(DROPS[number]):
        pq.write_table(table, folder / f"drop-{number + 1}-part-{part}.parquet")


def run(dag_id: str, conf: dict | None = None):
    started = time.monotonic()
    dag_run = local_run.run_dag(dag_id, conf)
    states = local_run.task_states(dag_run)
    print(f"  {dag_id:<18} {dag_run.state}  {states}  ({time.monotonic() - started:.0f} s)")
    if str(dag_run.state) != "success":
        raise SystemExit(f"{dag_id} did not succeed: {states}")
    return dag_run


def pipeline(workdir: Path) -> dict:
    """Runs the DAGs in order; returns the runs by name."""
    runs = {}
    for number in range(len(DROPS)):
        land(workdir, number)
        runs[f"ingest_{number + 1}"] = run(f"{TABLE}_ingest")
    runs["compaction"] = run(f"{TABLE}_compaction")
    runs["maintenance"] = run(f"{TABLE}_maintenance")
    return runs


def hive_syncs(runs: dict) -> list[dict]:
    """The results of the runs' hive_sync tasks, in run order."""
    results = (local_run.task_xcom(dag_run, "hive_sync") for dag_run in runs.values())
    return [result for result in results if result]


def metastore_tables(results: list[dict]) -> dict[str, set[str]]:
    """What the syncs left in the (new) metastore: each synced Hive table's partitions (their
    locations), from the tables created and the partitions added and dropped, sync after
    sync (a result line's counts hold the sync's outcome)."""
    tables: dict[str, set[str]] = {}
    for result in results:
        hive = (result.get("counts", {}).get("outcome") or {}).get("hive") or {}
        for name in hive.get("created", []):
            tables.setdefault(name, set())
        for name, partitions in hive.get("partitions_added", {}).items():
            tables.setdefault(name, set()).update(partitions)
        for name, partitions in hive.get("partitions_dropped", {}).items():
            tables.setdefault(name, set()).difference_update(partitions)
    return tables


def report_metastore(runs: dict, metastore_dir: Path) -> None:
    results = hive_syncs(runs)
    if not results:
        return
    print(f"\nHive metastore ({metastore_dir}), synced to {results[-1]['instant_time']}:")
    for name, partitions in sorted(metastore_tables(results).items()):
        print(f"  {name:<18} {len(partitions)} partitions")


def report(base_path: str) -> bool:
    """Prints the timeline and sample rows; True if Apache Hudi's reader returns exactly the
    expected rows."""
    from hudi import HudiReadOptions, HudiTableBuilder

    from hudi_core import HudiTable

    table = HudiTable.open(base_path)
    active = set(table.timeline())
    print(f"\nTimeline of {TABLE} ({table.table_type}, {base_path}):")
    for instant in table.timeline(archived=True):
        where = "active" if instant in active else "archived"
        print(f"  {instant.timestamp}  {instant.action:<13} {instant.state.value:<10} {where}")
    batches = HudiTableBuilder.from_base_uri(base_path).build().read(HudiReadOptions())
    theirs = pa.Table.from_batches(batches).sort_by("uuid")
    expected = expected_rows()
    print(f"\n{theirs.num_rows} rows (expected {len(expected)}); a sample, as hudi-rs reads them:")
    for row in theirs.select(["uuid", "city", "rider", "fare", "ts"]).slice(0, 5).to_pylist():
        print(f"  {row}")
    got = {
        r["uuid"]: {k: r[k] for k in ("uuid", "city", "rider", "fare", "ts")}
        for r in theirs.to_pylist()
    }
    matches = got == expected
    print(f"\nApache Hudi's reader returns the expected rows: {matches}")
    return matches


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", default=str(REPO / "data"), help="where everything goes")
    parser.add_argument("--spark-master", default="local[2]")
    parser.add_argument(
        "--verbose", action="store_true", help="show Airflow's task logs (Spark's output too)"
    )
    args = parser.parse_args()
    workdir = Path(args.workdir).resolve()
    for stale in ("lake", "landing", "airflow", "metastore"):
        shutil.rmtree(workdir / stale, ignore_errors=True)
    workdir.mkdir(parents=True, exist_ok=True)
    # Task logs go to their files in the Airflow home (the UI shows them); warnings and
    # failures show on the console too, and everything with --verbose.
    console_level = "INFO" if args.verbose else "WARNING"
    local_run.configure(
        workdir / "airflow", tables_file(workdir), args.spark_master, console_level=console_level
    )
    local_run.migrate_database()
    print(f"Airflow home {workdir / 'airflow'} (SQLite), Spark {args.spark_master}; DAG runs:")
    runs = pipeline(workdir)
    report_metastore(runs, workdir / "metastore")
    matches = report(str(workdir / "lake" / TABLE))
    print(ui_hint(workdir))
    return 0 if matches else 1


def ui_hint(workdir: Path) -> str:
    """How to see these runs, their task logs and the Hudi view in the Airflow UI."""
    option = "" if workdir == REPO / "data" else f" --workdir {workdir}"
    return f"\nThe DAG runs and their task logs in the Airflow UI: ./run.sh ui{option}"


if __name__ == "__main__":
    sys.exit(main())
