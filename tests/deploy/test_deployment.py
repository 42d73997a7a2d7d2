"""A real Airflow 3 deployment, set up as docs/deploy.md says: PostgreSQL (a cluster of the
test's own), `airflow db migrate`, the scheduler, dag-processor, triggerer and api-server as
separate processes with LocalExecutor, the doc's settings word by word, no lock configured.

What a user does with it, checked from outside (the REST API, the tables' files, hudi-rs):
a drop ingested on the DAG's schedule; a table fed by it whose deferred sensor the triggerer
resumes; compaction and maintenance runs; a native backfill of six intervals whose runs
ingest the files dated inside them exactly once, with no failed task try and the checkpoint
left alone; and in a browser, the Hudi view's task link opening its task instance from inside
Airflow's UI. Only the processes the test started are stopped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlparse

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from hudi_airflow.local_airflow import COMPONENTS, AirflowComponents
from tests import oracle
from tests.airflow.ui_server import (
    ApiServer,
    in_the_hudi_view_frame,
    logged_in_browser,
    open_the_hudi_view_from_the_browse_menu,
    path_of,
    wait,
)
from tests.deploy.deployment import (
    USERNAME,
    Deployment,
    base_environment,
    doc_settings,
    doc_start_commands,
    placeholder_values,
    wait_until,
    write_passwords,
)
from tests.deploy.postgres import postgres_cluster, server_binaries
from tests.processes import processes_of_airflow_home

pytestmark = [pytest.mark.deploy, pytest.mark.browser, pytest.mark.slow]

# Six days of a backfill (six runs at once, more than the DAG's max_active_runs), and files
# dated inside and outside them.
BACKFILL_DAYS = [f"2026-11-0{day}" for day in range(1, 7)]
OUTSIDE_DAYS = ["2026-10-20", "2026-11-08"]


def tables(root: Path) -> list[dict]:
    common = {"record_key_field": "uuid", "precombine_field": "ts", "retries": 1}
    return [
        {  # ingested every minute: the scheduled runs
            "name": "trips",
            "base_path": str(root / "lake" / "trips"),
            "table_type": "MERGE_ON_READ",
            "partition_path_field": "city",
            "source_path": str(root / "landing" / "trips"),
            "source_format": "parquet",
            "schedule": "* * * * *",
            "compaction_schedule": None,
            "maintenance_schedule": None,
            "options": {
                "hoodie.compact.inline.max.delta.commits": 1,
                "hoodie.cleaner.commits.retained": 1,
                # No small files: updates go to log files (a small base file would be merged,
                # as Apache Hudi does), so there is a compaction to run.
                "hoodie.parquet.small.file.limit": 0,
            },
            **common,
        },
        {  # fed by trips' commits: a deferrable sensor waits for them
            "name": "trips_copy",
            "base_path": str(root / "lake" / "trips_copy"),
            "table_type": "COPY_ON_WRITE",
            "partition_path_field": "city",
            "upstream_table": "trips",
            "schedule": None,
            "compaction_schedule": None,
            "maintenance_schedule": None,
            **common,
        },
        {  # daily, for the backfill
            "name": "events",
            "base_path": str(root / "lake" / "events"),
            "table_type": "COPY_ON_WRITE",
            "partition_path_field": "city",
            "source_path": str(root / "landing" / "events"),
            "source_format": "parquet",
            "schedule": "@daily",
            "compaction_schedule": None,
            "maintenance_schedule": None,
            **common,
        },
    ]


@pytest.fixture(scope="module")
def deployment(tmp_path_factory) -> Iterator[Deployment]:
    if server_binaries() is None:
        pytest.skip(
            "no PostgreSQL server binaries (Debian's postgresql package; run.sh installs it)"
        )
    root = tmp_path_factory.mktemp("deployment")
    home = root / "airflow"
    home.mkdir()
    tables_file = root / "tables.yaml"
    tables_file.write_text(yaml.safe_dump({"tables": tables(root)}, sort_keys=False))
    with postgres_cluster(["airflow"]) as postgres:
        api_port = _free_port()
        values = placeholder_values(home, postgres.port, postgres.password, api_port, tables_file)
        settings = doc_settings(values)
        env = {**base_environment(), **settings}
        password = write_passwords(home, settings)
        commands = doc_start_commands(values)
        assert commands[0] == ["airflow", "db", "migrate"]
        started = [command[1] for command in commands[1:]]
        assert started == list(COMPONENTS), "docs/deploy.md starts other components"
        assert commands[-1][2:] == ["--host", "127.0.0.1", "--port", str(api_port)]
        deployment = Deployment(f"http://127.0.0.1:{api_port}", env, password, home)
        deployment.airflow("db", "migrate", timeout=300)
        with AirflowComponents(home, env, api_port) as components:
            components.wait_until_healthy()
            yield deployment
        left = processes_of_airflow_home(home)
        assert not left, f"processes of the deployment still run: {left}"


def test_a_deployment_ingests_compacts_backfills_and_resumes_deferred_sensors(deployment):
    root = deployment.home.parent
    assert "HUDI_LOCK_DB_URL" not in deployment.env  # no lock configured anywhere

    # events' first scheduled run (the latest day) finds nothing; then old files land.
    wait_until(lambda: _succeeded_runs(deployment, "events_ingest"), 240, "events' first run")
    events = _drop_dated_events(root / "landing" / "events")
    deployment.airflow(
        "backfill", "create", "--dag-id", "events_ingest",
        "--from-date", BACKFILL_DAYS[0], "--to-date", BACKFILL_DAYS[-1],
    )  # fmt: skip

    # trips_copy waits, deferred in the triggerer, for trips' first commit.
    copy_run = deployment.trigger("trips_copy_ingest")
    wait_until(
        lambda: (
            _state(deployment, "trips_copy_ingest", copy_run, "wait_for_upstream") == "deferred"
        ),
        180,
        "trips_copy's sensor deferred",
    )
    first = _trips(range(0, 40), ts=1)
    _drop(root / "landing" / "trips" / "drop-1.parquet", first)
    trips_path = str(root / "lake" / "trips")
    wait_until(lambda: _row_count(trips_path) == 40, 240, "the scheduled ingest of drop 1")
    deployment.wait_for_run("trips_copy_ingest", copy_run, 240)
    assert _sorted(oracle.snapshot(str(root / "lake" / "trips_copy"))) == _sorted(first)

    second = _trips(range(20, 50), ts=2)  # 20 updates, 10 inserts
    _drop(root / "landing" / "trips" / "drop-2.parquet", second)
    expected = {row["uuid"]: row for row in first.to_pylist() + second.to_pylist()}
    wait_until(
        lambda: _sorted(oracle.snapshot(trips_path)) == sorted(expected.values(), key=_key),
        240,
        "the scheduled ingest of drop 2",
    )
    compaction = deployment.trigger("trips_compaction")
    deployment.wait_for_run("trips_compaction", compaction, 300)
    assert _state(deployment, "trips_compaction", compaction, "execute_compaction") == "success"
    maintenance = deployment.trigger("trips_maintenance")
    deployment.wait_for_run("trips_maintenance", maintenance, 300)
    assert _sorted(oracle.snapshot(trips_path)) == sorted(expected.values(), key=_key)
    assert any(p.name.endswith(".commit") for p in (Path(trips_path) / ".hoodie").iterdir())

    _assert_backfilled(deployment, root, events)
    _assert_the_embedded_task_link_opens_its_task(deployment)


def _assert_the_embedded_task_link_opens_its_task(deployment: Deployment) -> None:
    """In a browser, as a user: Browse > Hudi tables, an instant's task link clicked inside
    the view's iframe opens that task instance in Airflow's UI."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    log = deployment.home / "api-server.log"
    server = ApiServer(deployment.url, USERNAME, deployment.password, log)
    with logged_in_browser(server) as driver:
        open_the_hudi_view_from_the_browse_menu(driver, server)
        with in_the_hudi_view_frame(driver):
            selector = (By.CSS_SELECTOR, "#instants-trips tr.instant a.airflow-task")
            link = wait(driver).until(ec.element_to_be_clickable(selector))
            target = urlparse(link.get_attribute("href")).path
            link.click()
        wait(driver).until(lambda d: path_of(d) == target, f"no page at {target}")
        header = wait(driver).until(
            lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid='header-card']")
        )
        task_id = target.rsplit("/", 1)[-1]
        wait(driver).until(lambda _: header.text.splitlines()[:1] == [task_id])


def _assert_backfilled(deployment: Deployment, root: Path, events: dict[str, pa.Table]) -> None:
    """A run per day, each ingesting its day's file: the rows of those days, once each, none
    of the days outside; no task try failed; no checkpoint recorded."""
    runs = wait_until(lambda: _backfill_runs(deployment), 300, "the backfill's runs")
    assert sorted(run["logical_date"][:10] for run in runs) == BACKFILL_DAYS
    for run in runs:
        deployment.wait_for_run("events_ingest", run["dag_run_id"], 300)
        (ingest,) = deployment.task_instances("events_ingest", run["dag_run_id"])
        assert (ingest["state"], ingest["try_number"]) == ("success", 1), ingest
    inside = pa.concat_tables([events[day] for day in BACKFILL_DAYS])
    path = str(root / "lake" / "events")
    assert _sorted(oracle.snapshot(path)) == _sorted(inside)
    from hudi_core import HudiTable
    from spark_jobs.ingest import last_checkpoint

    assert last_checkpoint(HudiTable.open(path)) is None  # the backfill left it alone


def _backfill_runs(deployment: Deployment) -> list[dict] | None:
    runs = [r for r in deployment.runs("events_ingest") if r["run_type"] == "backfill"]
    return runs if len(runs) == len(BACKFILL_DAYS) else None


def _succeeded_runs(deployment: Deployment, dag_id: str) -> list[dict]:
    return [run for run in deployment.runs(dag_id) if run["state"] == "success"]


def _state(deployment: Deployment, dag_id: str, run_id: str, task_id: str) -> str | None:
    for task in deployment.task_instances(dag_id, run_id):
        if task["task_id"] == task_id:
            return task["state"]
    return None


def _trips(keys: range, ts: int) -> pa.Table:
    return pa.table(
        {
            "uuid": [f"trip-{k:03d}" for k in keys],
            "city": [("sf", "nyc", "sao_paulo")[k % 3] for k in keys],
            "ts": pa.array([ts] * len(keys), pa.int64()),
            "fare": [float(k * 10 + ts) for k in keys],
        }
    )


def _drop(path: Path, rows: pa.Table, modified: datetime | None = None) -> None:
    """A source file written aside and renamed in, as a landing process would (the ingest must
    never see half a file); dated `modified` if given."""
    path.parent.mkdir(parents=True, exist_ok=True)
    aside = path.with_name(f".{path.name}.tmp")
    pq.write_table(rows, aside)
    if modified is not None:
        os.utime(aside, (modified.timestamp(), modified.timestamp()))
    aside.rename(path)


def _drop_dated_events(folder: Path) -> dict[str, pa.Table]:
    """A file per day, modified at noon of that day (UTC); 10 events each, keys of their own."""
    events = {}
    for n, day in enumerate(BACKFILL_DAYS + OUTSIDE_DAYS):
        rows = _trips(range(100 * (n + 1), 100 * (n + 1) + 10), ts=n)
        noon = datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC)
        _drop(folder / f"events-{day}.parquet", rows, noon)
        events[day] = rows
    return events


def _row_count(path: str) -> int:
    """The rows hudi-rs reads; 0 before the table's first completed commit."""
    timeline = Path(path) / ".hoodie"
    if not timeline.exists() or not any(timeline.glob("*.deltacommit")):
        return 0
    return oracle.snapshot(path).num_rows


def _key(row: dict) -> str:
    return row["uuid"]


def _sorted(table: pa.Table) -> list[dict]:
    columns = ["uuid", "city", "ts", "fare"]
    return sorted(table.select(columns).to_pylist(), key=_key)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
