"""`./run.sh ui` (examples/ui.py) on an Airflow home where local_run ran a DAG, as the demo
does: the four components run (the api-server reports the others healthy), the Hudi view is
served, the task's log lines, which the in-process run wrote to the try's log file
(hudi_airflow/local_task_logs.py), come back from the api-server's log endpoint, and Ctrl-C
stops every process it started.
The DAG run and the UI run in processes of their own, each with the home it configures."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import yaml

from tests.airflow.ui_server import (
    ApiServer,
    environment_without_airflow,
    free_port,
    stop_process_group,
)
from tests.processes import processes_of_airflow_home

pytestmark = [pytest.mark.airflow, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
DAG_ID = "ui_logs"
INFO_LINE = "the task's info line, for its log file only"
WARNING_LINE = "the task's warning line, for the console too"
DAG_FILE = f'''
import logging
from datetime import datetime

from airflow.sdk import DAG, task

with DAG("{DAG_ID}", schedule=None, start_date=datetime(2024, 1, 1), catchup=False):

    @task
    def speak():
        logging.getLogger("{DAG_ID}").info("{INFO_LINE}")
        logging.getLogger("{DAG_ID}").warning("{WARNING_LINE}")

    speak()
'''
# What the demo does before its DAG runs (examples/pipeline.py), with a DAG folder of its own.
RUN_DAG = f"""
import sys
from pathlib import Path

from hudi_airflow import local_run

workdir, dags = Path(sys.argv[1]), Path(sys.argv[2])
local_run.configure(workdir / "airflow", workdir / "tables.yaml", dags_folder=dags,
                    console_level="WARNING")
local_run.migrate_database()
print("states", local_run.task_states(local_run.run_dag("{DAG_ID}")))
"""


@dataclass
class DagRun:
    workdir: Path
    console: str


@pytest.fixture
def dag_run(tmp_path_factory) -> DagRun:
    workdir = tmp_path_factory.mktemp("demo")
    dags = tmp_path_factory.mktemp("dags")
    (dags / f"{DAG_ID}.py").write_text(DAG_FILE)
    table = {
        "name": "trips",
        "base_path": str(workdir / "lake" / "trips"),
        "table_type": "MERGE_ON_READ",
        "record_key_field": "uuid",
        "partition_path_field": "city",
        "precombine_field": "ts",
        "source_path": str(workdir / "landing" / "trips"),
        "source_format": "parquet",
    }
    (workdir / "tables.yaml").write_text(yaml.safe_dump({"tables": [table]}))
    result = subprocess.run(
        [sys.executable, "-c", RUN_DAG, str(workdir), str(dags)],
        env=environment_without_airflow(),
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "states {'speak': 'success'}" in result.stdout, result.stdout[-3000:]
    assert "states {" not in result.stderr  # logs go to stderr, what the run prints to stdout
    return DagRun(workdir, result.stderr)


@pytest.fixture
def ui(dag_run) -> Iterator[tuple[ApiServer, subprocess.Popen]]:
    """examples/ui.py in the foreground of a session of its own (so Ctrl-C can be sent to it
    and its server, as a terminal does); its printed address and login."""
    port = free_port()
    command = [sys.executable, str(REPO / "examples" / "ui.py")]
    command += ["--workdir", str(dag_run.workdir), "--port", str(port)]
    process = subprocess.Popen(
        command,
        env=environment_without_airflow(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    log_path = dag_run.workdir / "airflow" / "api-server.log"
    try:
        printed = []
        for line in process.stdout:  # ui.py prints the login once the server answers, or exits
            printed.append(line)
            if "login:" in line:
                break
        text = "".join(printed)
        found = re.search(r"(\S+)\s+login: (\S+) / (\S+)", text)
        assert found, text + (log_path.read_text() if log_path.exists() else "")
        url, user, password = found.groups()
        assert url == f"http://127.0.0.1:{port}/"
        yield ApiServer(url.rstrip("/"), user, password, log_path), process
    finally:
        stop_process_group(process)


def test_the_ui_serves_the_hudi_view_and_the_local_runs_task_log_until_ctrl_c(ui, dag_run):
    # One test, so that the slow part (a DAG run, a server start) runs once under xdist too.
    server, process = ui
    assert server.username == "admin"
    token = server.token()  # the printed login works
    _assert_the_hudi_view_is_served(server, token)
    _assert_the_task_log_is_served(server, token)
    # The console (stderr) of the run showed the warning, not the info line.
    assert WARNING_LINE in dag_run.console and INFO_LINE not in dag_run.console

    # The whole local Airflow runs: runs triggered from the UI run, sensors resume.
    health = httpx.get(f"{server.url}/api/v2/monitor/health", timeout=10).json()
    for component in ("scheduler", "triggerer", "dag_processor"):
        assert health[component]["status"] == "healthy", health

    os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    assert process.wait(60) == 0
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{server.url}/api/v2/monitor/health", timeout=2)
    home = dag_run.workdir / "airflow"
    assert not processes_of_airflow_home(home), "Ctrl-C left processes of the home running"


def _assert_the_hudi_view_is_served(server: ApiServer, token: str) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    page = httpx.get(f"{server.url}/hudi/", headers=headers)
    assert page.status_code == 200, server.log_tail()
    assert "<title>Hudi tables</title>" in page.text
    tables = httpx.get(f"{server.url}/hudi/api/tables", headers=headers)
    assert tables.status_code == 200, tables.text
    assert [t["name"] for t in tables.json()["tables"]] == ["trips"]


def _assert_the_task_log_is_served(server: ApiServer, token: str) -> None:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    runs = httpx.get(f"{server.url}/api/v2/dags/{DAG_ID}/dagRuns", headers=headers).json()
    (run,) = runs["dag_runs"]
    route = f"/api/v2/dags/{DAG_ID}/dagRuns/{run['dag_run_id']}/taskInstances/speak/logs/1"
    response = httpx.get(server.url + route, headers=headers)

    assert response.status_code == 200, response.text
    events = {entry["event"]: entry for entry in response.json()["content"]}
    assert events[INFO_LINE]["level"] == "info"
    assert events[WARNING_LINE]["level"] == "warning"
    assert events[WARNING_LINE]["logger"] == DAG_ID


def test_without_a_demo_the_ui_says_to_run_it_first(tmp_path):
    result = subprocess.run(
        [sys.executable, str(REPO / "examples" / "ui.py"), "--workdir", str(tmp_path / "none")],
        env=environment_without_airflow(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "No demo has run in" in result.stderr
    assert f"./run.sh demo --workdir {tmp_path / 'none'}" in result.stderr
    assert not (tmp_path / "none").exists()  # nothing created
