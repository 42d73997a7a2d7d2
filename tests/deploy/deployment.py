"""A deployment as docs/deploy.md describes it, for the deployment tests: the settings block
of the doc with its placeholders filled in, `airflow db migrate`, the four components, and
a client of the api-server's REST API (runs, task instances) for the checks."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[2]
DEPLOY_DOC = REPO / "docs" / "deploy.md"
USERNAME = "admin"
_PLACEHOLDER = re.compile(r"\$\{([A-Z_]+)\}")


def doc_block(language: str, after: str) -> str:
    """The first ```<language> block of docs/deploy.md after the heading `after`."""
    text = DEPLOY_DOC.read_text()
    start = text.index(after)
    found = re.search(rf"```{language}\n(.*?)```", text[start:], re.S)
    assert found, f"docs/deploy.md has no {language} block after {after!r}"
    return found.group(1)


def doc_settings(values: Mapping[str, str]) -> dict[str, str]:
    """The settings block of docs/deploy.md, word by word, with its placeholders filled from
    `values`; a placeholder without a value fails (the doc and the test must agree)."""
    settings = {}
    for line in doc_block("env", "## 2. Settings").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        key, _, value = line.partition("=")
        missing = [name for name in _PLACEHOLDER.findall(value) if name not in values]
        assert not missing, f"docs/deploy.md's {key} needs {missing}: the test gives no value"
        settings[key] = _PLACEHOLDER.sub(lambda m: values[m.group(1)], value)
    return settings


def doc_start_commands(values: Mapping[str, str]) -> list[list[str]]:
    """The commands of the doc's "Migrate and start" step, placeholders filled."""
    block = doc_block("bash", "## 3. Migrate and start")
    filled = _PLACEHOLDER.sub(lambda m: values[m.group(1)], block)
    return [line.split() for line in filled.splitlines() if line.strip()]


@dataclass
class Deployment:
    url: str
    env: dict[str, str]
    password: str
    home: Path
    _token: str = field(default="", repr=False)

    def airflow(self, *arguments: str, timeout: float = 120) -> str:
        """An `airflow` command with the deployment's settings (as a user's shell has them)."""
        result = subprocess.run(
            [sys.executable, "-m", "airflow", *arguments],
            env=self.env,
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert result.returncode == 0, f"airflow {' '.join(arguments)}:\n{result.stderr[-3000:]}"
        return result.stdout

    def api(self, method: str, route: str, **kwargs: Any) -> Any:
        if not self._token:
            login = {"username": USERNAME, "password": self.password}
            response = httpx.post(f"{self.url}/auth/token", json=login, timeout=30)
            assert response.status_code == 201, response.text
            self._token = response.json()["access_token"]
        headers = {"Authorization": f"Bearer {self._token}"}
        response = httpx.request(
            method, f"{self.url}/api/v2{route}", headers=headers, timeout=30, **kwargs
        )
        assert response.status_code < 300, f"{method} {route}: {response.text}"
        return response.json()

    def runs(self, dag_id: str) -> list[dict[str, Any]]:
        return self.api("GET", f"/dags/{dag_id}/dagRuns", params={"limit": 100})["dag_runs"]

    def task_instances(self, dag_id: str, run_id: str) -> list[dict[str, Any]]:
        route = f"/dags/{dag_id}/dagRuns/{run_id}/taskInstances"
        return self.api("GET", route)["task_instances"]

    def trigger(self, dag_id: str) -> str:
        run = self.api("POST", f"/dags/{dag_id}/dagRuns", json={"logical_date": None})
        return str(run["dag_run_id"])

    def wait_for_run(self, dag_id: str, run_id: str, timeout_s: float = 300) -> dict[str, Any]:
        """The run once it finished; fails with its task states if it failed or took too long."""
        run = wait_until(
            lambda: self._finished(dag_id, run_id), timeout_s, f"{dag_id} run {run_id}"
        )
        states = {ti["task_id"]: ti["state"] for ti in self.task_instances(dag_id, run_id)}
        assert run["state"] == "success", f"{dag_id} {run_id}: {run['state']} {states}"
        return run

    def _finished(self, dag_id: str, run_id: str) -> dict[str, Any] | None:
        run = self.api("GET", f"/dags/{dag_id}/dagRuns/{run_id}")
        return run if run["state"] in ("success", "failed") else None

    def task_log(self, dag_id: str, run_id: str, task_id: str, try_number: int = 1) -> str:
        route = f"/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}/logs/{try_number}"
        content = self.api("GET", route, headers={"Accept": "application/json"})["content"]
        return "\n".join(str(entry.get("event", "")) for entry in content)


def wait_until(found: Callable[[], Any], timeout_s: float, what: str, every_s: float = 2) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = found()
        if value:
            return value
        time.sleep(every_s)
    raise AssertionError(f"{what}: not there after {timeout_s:g} s")


def placeholder_values(
    home: Path, postgres_port: int, postgres_password: str, api_port: int, tables: Path
) -> dict[str, str]:
    """A value for each of docs/deploy.md's placeholders, for a deployment on this machine."""
    venv = Path(sys.executable).parent.parent
    return {
        "AIRFLOW_HOME": str(home),
        "POSTGRES_PASSWORD": postgres_password,
        "POSTGRES_HOST": "127.0.0.1",
        "POSTGRES_PORT": str(postgres_port),
        "DAGS_FOLDER": str(REPO / "dags"),
        "API_HOST": "127.0.0.1",
        "API_PORT": str(api_port),
        "JWT_SECRET": secrets.token_urlsafe(48),
        "API_SECRET_KEY": secrets.token_urlsafe(32),
        "FERNET_KEY": _fernet_key(),
        "SPARK_CONNECTION": "spark://local%5B1%5D",
        "TABLES_FILE": str(tables),
        "VENV": str(venv),
    }


def _fernet_key() -> str:
    from cryptography.fernet import Fernet

    return Fernet.generate_key().decode()


def write_passwords(home: Path, settings: Mapping[str, str]) -> str:
    """The admin's password, written where the settings point the simple auth manager."""
    password = secrets.token_urlsafe(12)
    Path(settings["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"]).write_text(
        json.dumps({USERNAME: password})
    )
    return password


def base_environment() -> dict[str, str]:
    """This process's environment without its Airflow and Hudi settings (the deployment's
    own come from the doc) and without a lock database: the tables run with no lock
    configured."""
    drop = ("AIRFLOW", "HUDI_TABLES_CONFIG", "HUDI_LOCK_DB_URL", "PYSPARK")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}
