"""The jobs on a real Spark standalone cluster (a master and two one-core workers on
127.0.0.1, started from the installed pyspark): shipped as the README says, with
`python -m spark_jobs.package` and `spark-submit --py-files`, ingestion and compaction run
their tasks on both workers and leave the same table as the same drops ingested on local[2].

The executors' Python is this venv's interpreter with site-packages' .pth files off (a shim
running `python -S`): the project's editable install is invisible to it, so hudi_core and
spark_jobs can only come from the zip; a job that succeeds proves the zip is what ships.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import time
import zipfile
from collections.abc import Iterator
from contextlib import redirect_stdout
from io import StringIO
from pathlib import Path

import pytest

from hudi_core import HudiTable
from hudi_core.schema.meta_fields import is_meta_field
from spark_jobs import cli, ingest, package
from tests import oracle
from tests.spark.cluster import LEAN_JVM_OPTIONS, StandaloneCluster, standalone_cluster

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
CITIES = ["amsterdam", "berlin", "chennai", "denver"]  # one partition each: 4+ file groups
EPOCH = 1_700_000_000  # source files' mtimes, so each ingest takes exactly one drop
SUBMIT_TIMEOUT = 120
TABLE_FLAGS = [
    "--table-name",
    "trips",
    "--source-format",
    "json",
    "--source-limit",
    "1",  # bytes: one drop (one modification time) per run
    "--table-type",
    "MERGE_ON_READ",
    "--record-key-field",
    "uuid",
    "--partition-path-field",
    "city",
    "--precombine-field",
    "ts",
    "--hoodie-conf",
    "hoodie.parquet.small.file.limit=0",  # updates of drop 2 go to log files
    "--hoodie-conf",
    "hoodie.spark.local.threshold.bytes=0",  # small drops, yet written by the workers
]
COMPACT_FLAGS = [
    "--table-name",
    "trips",
    "--mode",
    "scheduleAndExecute",
    "--hoodie-conf",
    "hoodie.compact.inline.max.delta.commits=1",
]


# ---- source drops and the rows they should leave


def drop_rows(keys: range, ts: int, seed: int) -> list[dict]:
    """Trips with a few types (nested, lists, nulls); values depend on (key, seed)."""
    return [
        {
            "uuid": f"key-{k:06d}",
            "city": CITIES[k % len(CITIES)],
            "ts": ts,
            "fare": round(10 + (k * 7 + seed) % 90 + 0.25, 2),
            "rider": None if (k + seed) % 9 == 0 else f"rider-{(k * seed) % 50}",
            "passengers": 1 + (k + seed) % 4,
            "tags": [f"t{(k + seed) % 3}", f"t{k % 5}"],
            "location": {"lat": 50.0 + k / 1000, "lon": 4.0 - seed / 100},
        }
        for k in keys
    ]


DROPS = [
    drop_rows(range(0, 240), ts=1, seed=1),  # inserts: every city
    drop_rows(range(0, 120), ts=2, seed=2) + drop_rows(range(240, 280), ts=2, seed=2),
]


def place_drops(folder: Path) -> None:
    """Drop n is a JSON-lines file modified at EPOCH + n seconds."""
    folder.mkdir(parents=True)
    for n, rows in enumerate(DROPS, start=1):
        path = folder / f"drop-{n}.json"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        os.utime(path, ns=((EPOCH + n) * 10**9,) * 2)


def expected_latest() -> dict[str, tuple[int, float]]:
    """uuid -> (ts, fare) of the latest version of every key."""
    latest: dict[str, tuple[int, float]] = {}
    for rows in DROPS:
        latest.update({row["uuid"]: (row["ts"], row["fare"]) for row in rows})
    return latest


# ---- the interpreter the cluster runs: the venv's, blind to the editable install


def blind_python(folder: Path) -> str:
    """A shim for the venv's python with `-S` (no .pth files: no editable hudi_core) and
    site-packages appended to PYTHONPATH (pyarrow, fastavro, pyspark ... still import). It
    logs each start (working directory, arguments) to python.log beside it."""
    shim, log = folder / "python", folder / "python.log"
    site = sysconfig.get_paths()["purelib"]
    shim.write_text(
        "#!/bin/sh\n"
        f'echo "$PWD $*" >> "{log}"\n'
        f'PYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{site}"\n'
        "export PYTHONPATH\n"
        f'exec "{sys.executable}" -S "$@"\n'
    )
    shim.chmod(0o755)
    return str(shim)


def imported_from(python: str, zip_path: Path | None, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if zip_path:
        env["PYTHONPATH"] = str(zip_path)
    code = "import hudi_core, spark_jobs.ingest; print(hudi_core.__file__)"
    return subprocess.run(
        [python, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


# ---- running on the cluster


def submit(
    cluster: StandaloneCluster, zip_path: Path, events: Path, script: str, *argv: str
) -> dict:
    """spark-submit of spark_jobs/<script> from a directory outside the repository, with no
    PYTHONPATH; the job's result line. Each application logs its events under `events`."""
    events.mkdir(parents=True)
    conf = {
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": events.as_uri(),
        "spark.eventLog.compress": "false",
        "spark.executor.cores": "1",
        "spark.executor.memory": "512m",
        "spark.driver.memory": "512m",
        "spark.driver.extraJavaOptions": LEAN_JVM_OPTIONS,
        "spark.executor.extraJavaOptions": LEAN_JVM_OPTIONS,
        "spark.ui.enabled": "false",
        "spark.pyspark.python": cluster.python,
        "spark.sql.shuffle.partitions": "4",
        "spark.sql.session.timeZone": "UTC",
        # Start the job once both executors registered, so both can get tasks.
        "spark.scheduler.minRegisteredResourcesRatio": "1.0",
        "spark.scheduler.maxRegisteredResourcesWaitingTime": "60s",
    }
    command = [cluster.spark_submit, "--master", cluster.master_url, "--py-files", str(zip_path)]
    for key, value in conf.items():
        command += ["--conf", f"{key}={value}"]
    command += [str(ROOT / "spark_jobs" / script), *argv]
    env = {k: v for k, v in cluster.env().items() if k != "PYTHONPATH"}
    started = time.monotonic()
    try:
        done = subprocess.run(
            command,
            cwd=events,
            env=env,
            capture_output=True,
            text=True,
            timeout=SUBMIT_TIMEOUT,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{script} timed out: {exc.stderr}\n{cluster.diagnostics()}")
    print(f"{script} {' '.join(argv[:1])}: {time.monotonic() - started:.1f}s")
    result = last_json_line(done.stdout)
    if done.returncode != 0 or result.get("status") != "SUCCEEDED":
        pytest.fail(
            f"{script} failed ({done.returncode}): {result}\n"
            f"== driver stdout (Python's stderr merged in) ==\n{done.stdout[-5000:]}\n"
            f"== spark-submit stderr ==\n{done.stderr[-3000:]}\n{cluster.diagnostics(30)}"
        )
    return result


def last_json_line(stdout: str) -> dict:
    """The job's result line: the last line that is a JSON object. (Under spark-submit the
    driver's stderr is merged into stdout, and py4j logs a line after it at exit.)"""
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {}


def run_local(module, argv: list[str]) -> dict:
    """A job in-process on the local[2] session (getOrCreate finds it); its result line."""
    out = StringIO()
    with redirect_stdout(out):
        code = cli.run(module.JOB, module.main, argv)
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert code == 0 and result["status"] == "SUCCEEDED", result
    return result


# ---- what the event log says


def read_event_log(events: Path) -> Iterator[dict]:
    """The events of the one application logged under `events`: a plain file, or (Spark 4's
    default, rolling) a folder eventlog_v2_<app>/ of events_<n>_<app> files."""
    [log] = [p for p in events.iterdir() if not p.name.startswith(".")]
    parts = (
        [log]
        if log.is_file()
        else sorted(log.glob("events_*"), key=lambda p: int(p.name.split("_")[1]))
    )
    assert parts, f"no event log under {events}"
    for part in parts:
        for line in part.read_text().splitlines():
            yield json.loads(line)


def task_counts_by_worker(events: Path) -> tuple[str, dict[str, int], dict[int, int]]:
    """The application's name, its successful tasks per executor id, and per worker (by the
    worker web UI port its executor's log URLs point to)."""
    name, executor_worker = "", {}
    per_executor: dict[str, int] = {}
    for event in read_event_log(events):
        kind = event["Event"]
        if kind == "SparkListenerApplicationStart":
            name = event["App Name"]
        elif kind == "SparkListenerExecutorAdded":
            stdout_url = event["Executor Info"]["Log Urls"]["stdout"]
            executor_worker[event["Executor ID"]] = int(stdout_url.split("/")[2].split(":")[1])
        elif kind == "SparkListenerTaskEnd" and event["Task End Reason"]["Reason"] == "Success":
            executor = event["Task Info"]["Executor ID"]
            per_executor[executor] = per_executor.get(executor, 0) + 1
    per_worker: dict[int, int] = {}
    for executor, count in per_executor.items():
        worker = executor_worker[executor]  # KeyError: a task ran outside the executors
        per_worker[worker] = per_worker.get(worker, 0) + count
    return name, per_executor, per_worker


def data_rows(path: str) -> list[dict]:
    """The table's rows without the meta columns that differ between two writers and between
    compacted and uncompacted tables (commit times, sequence numbers, file names); record key
    and partition path stay."""
    table = HudiTable.open(path).read()
    keep = [c for c in table.column_names if not is_meta_field(c)]
    keep += ["_hoodie_record_key", "_hoodie_partition_path"]
    return oracle.sorted_rows(table.select(keep))


# ---- the cluster run, shared by the tests


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """The zip, built the documented way from a directory outside the repository."""
    folder = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [sys.executable, "-m", "spark_jobs.package", "--output", str(folder / "hudi_jobs.zip")],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert built.returncode == 0, built.stderr
    return Path(built.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def cluster_run(tmp_path_factory, shipped):
    """Two ingests and a compaction submitted to a fresh cluster; their results and the
    event logs of each application."""
    base = tmp_path_factory.mktemp("cluster")
    source, table = base / "source", str(base / "trips")
    place_drops(source)
    started = time.monotonic()
    with standalone_cluster(base, python=blind_python(base)) as cluster:
        print(f"cluster up: {time.monotonic() - started:.1f}s")
        flags = ["--base-path", table, "--source-path", str(source), *TABLE_FLAGS]
        results = {
            name: submit(cluster, shipped, base / "events" / name, script, *argv)
            for name, script, argv in [
                ("ingest-1", "ingest.py", flags),
                ("ingest-2", "ingest.py", flags),
                ("compact", "compact.py", ["--base-path", table, *COMPACT_FLAGS]),
            ]
        }
        apps = cluster.state()["completedapps"]
        run = {
            "table": table,
            "source": source,
            "results": results,
            "events": base / "events",
            "worker_ports": set(cluster.worker_ui_ports),
            "work_dir": cluster.work_dir,
            "python_log": base / "python.log",
            "apps": apps,
        }
    print(f"cluster run: {time.monotonic() - started:.1f}s")
    return run


# ---- the tests


def test_package_zips_both_packages_for_py_files(shipped):
    with zipfile.ZipFile(shipped) as archive:
        names = archive.namelist()
    for module in ["hudi_core/__init__.py", "hudi_core/table.py", "spark_jobs/__init__.py"]:
        assert module in names
    jobs = {n.split("/")[1] for n in names if n.startswith("spark_jobs/") and n.endswith(".py")}
    assert {"ingest.py", "compact.py", "cli.py", "writer.py", "engine.py"} <= jobs
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_package_is_reproducible(shipped, tmp_path):
    again = package.build(tmp_path / "again.zip")
    assert again.read_bytes() == shipped.read_bytes()


def test_cluster_python_imports_the_packages_only_from_the_zip(shipped, tmp_path):
    python = blind_python(tmp_path)
    without = imported_from(python, None, tmp_path)
    assert without.returncode != 0 and "No module named 'hudi_core'" in without.stderr
    with_zip = imported_from(python, shipped, tmp_path)
    assert with_zip.returncode == 0, with_zip.stderr
    assert with_zip.stdout.strip() == f"{shipped}/hudi_core/__init__.py"


def test_jobs_run_on_the_cluster_and_report_what_they_did(cluster_run):
    first, second, compaction = (
        cluster_run["results"][n] for n in ["ingest-1", "ingest-2", "compact"]
    )
    assert (first["action"], first["counts"]["inserts"]) == ("deltacommit", 240)
    assert first["counts"]["file_groups"] == len(CITIES)
    assert (second["action"], second["counts"]["updates"]) == ("deltacommit", 120)
    assert second["counts"]["inserts"] == 40
    assert (compaction["action"], compaction["state"]) == ("commit", "COMPLETED")
    assert compaction["counts"]["file_groups"] == len(CITIES)  # each took updates in logs
    assert compaction["counts"]["log_records"] == 120
    finished = {app["name"] for app in cluster_run["apps"] if app["state"] == "FINISHED"}
    assert finished == {"hudi-ingest", "hudi-compact"}, cluster_run["apps"]


@pytest.mark.parametrize("app", ["ingest-1", "ingest-2", "compact"])
def test_tasks_ran_on_both_workers(cluster_run, app):
    name, per_executor, per_worker = task_counts_by_worker(cluster_run["events"] / app)
    print(f"{app} ({name}): tasks per executor {per_executor}, per worker UI port {per_worker}")
    assert name == f"hudi-{app.split('-')[0]}"
    assert len(per_executor) == 2 and "driver" not in per_executor
    assert set(per_worker) == cluster_run["worker_ports"]
    assert all(count > 0 for count in per_worker.values())


def test_every_executor_got_the_zip_and_ran_the_blind_python(cluster_run):
    """Each executor fetched hudi_jobs.zip into its work directory and started its Python
    workers through the shim, which cannot import hudi_core but from the zip; the driver too."""
    work = cluster_run["work_dir"]
    executors = sorted(p.parent for p in work.glob("worker-*/app-*/*/stderr"))
    assert len(executors) == 2 * len(cluster_run["results"])  # one per worker and application
    assert sorted(p.parent for p in work.glob("worker-*/app-*/*/hudi_jobs.zip")) == executors
    starts = cluster_run["python_log"].read_text().splitlines()
    daemons = {Path(line.split()[0]) for line in starts if "-m pyspark.daemon" in line}
    assert {d for d in daemons if d.is_relative_to(work)} == set(executors)
    drivers = [line for line in starts if "/spark_jobs/" in line.split()[1]]
    assert len(drivers) == len(cluster_run["results"])


def test_cluster_ingest_equals_the_same_drops_ingested_on_local(cluster_run, spark, tmp_path):
    local = str(tmp_path / "trips")
    flags = ["--base-path", local, "--source-path", str(cluster_run["source"]), *TABLE_FLAGS]
    for n in range(1, len(DROPS) + 1):
        on_local = run_local(ingest, flags)
        on_cluster = cluster_run["results"][f"ingest-{n}"]
        assert on_local["counts"] == on_cluster["counts"], f"drop {n}"
    # The cluster's table is compacted since: its snapshot still holds the same rows.
    assert data_rows(cluster_run["table"]) == data_rows(local)


def test_cluster_table_reads_the_same_in_hudi_rs_and_holds_the_latest_rows(cluster_run):
    table = cluster_run["table"]
    oracle.assert_same_table(HudiTable.open(table).read(), oracle.snapshot(table), "cluster")
    ours = HudiTable.open(table).read(columns=["uuid", "ts", "fare"]).to_pylist()
    assert {r["uuid"]: (r["ts"], r["fare"]) for r in ours} == expected_latest()


def test_compaction_on_the_cluster_merged_every_log_into_base_files(cluster_run):
    table = HudiTable.open(cluster_run["table"])
    base_only = oracle.sorted_rows(table.read(query_type="read_optimized"))
    assert base_only == oracle.sorted_rows(table.read())
