"""Airflow 3's four components as local processes: scheduler, dag-processor, triggerer and
api-server, as a deployment runs them (docs/deploy.md), on one machine.

`./run.sh ui` (examples/ui.py) and the deployment tests (tests/deploy) start them through
`AirflowComponents`: each component is `python -m airflow <component>` in a process group
of its own, so that stopping it also stops what it started (LocalExecutor's workers, the
task processes, their spark-submit JVMs), and nothing else: no process this did not start
is ever signalled.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import httpx

COMPONENTS = ("scheduler", "dag-processor", "triggerer", "api-server")
# The api-server's health answer names the other components by these keys.
_HEALTH_KEYS = {
    "scheduler": "scheduler",
    "triggerer": "triggerer",
    "dag-processor": "dag_processor",
}
STOP_GRACE_S = 20


def component_settings(api_port: int, api_host: str = "127.0.0.1") -> dict[str, str]:
    """What the four components must share beyond the metadata database, DAGs and home: the
    executor, where task processes reach the Execution API, and the secrets tokens are signed
    with (each component would otherwise make its own, and reject the others' tokens)."""
    return {
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://{api_host}:{api_port}/execution/",
        "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_urlsafe(48),
        "AIRFLOW__API__SECRET_KEY": secrets.token_urlsafe(32),
    }


class AirflowComponents:
    """The four components of one Airflow home, started and stopped together."""

    def __init__(
        self,
        airflow_home: Path,
        env: Mapping[str, str],
        api_port: int,
        api_host: str = "127.0.0.1",
    ) -> None:
        self.airflow_home = airflow_home
        self.env = dict(env)
        self.api_port = api_port
        self.api_host = api_host
        self.processes: dict[str, subprocess.Popen[bytes]] = {}

    @property
    def url(self) -> str:
        return f"http://{self.api_host}:{self.api_port}"

    def log_file(self, component: str) -> Path:
        return self.airflow_home / f"{component}.log"

    def start(self) -> None:
        """Starts every component, its output in <home>/<component>.log. They run in the
        Airflow home, not a checkout: `python -m` puts the working folder on sys.path, and a
        checkout's egg-info there would load the provider's plugin twice."""
        for component in COMPONENTS:
            command = [sys.executable, "-m", "airflow", component]
            if component == "api-server":
                command += ["--host", self.api_host, "--port", str(self.api_port)]
            with open(self.log_file(component), "ab") as log:
                self.processes[component] = subprocess.Popen(
                    command,
                    cwd=self.airflow_home,
                    env=self.env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own process group: see stop()
                )

    def wait_until_healthy(self, timeout_s: float = 180) -> None:
        """Waits until the api-server answers and reports the scheduler, triggerer and
        dag-processor healthy; raises RuntimeError naming the component that is not (with
        the tail of its log) if one exits or the time runs out."""
        deadline = time.monotonic() + timeout_s
        unhealthy = list(COMPONENTS)
        while time.monotonic() < deadline:
            self._check_running()
            unhealthy = self._unhealthy()
            if not unhealthy:
                return
            time.sleep(1)
        raise RuntimeError(
            f"Airflow's {', '.join(unhealthy)} did not become healthy within {timeout_s:g} s; "
            + self.log_tail(unhealthy[0])
        )

    def _unhealthy(self) -> list[str]:
        try:
            health = httpx.get(f"{self.url}/api/v2/monitor/health", timeout=3).json()
        except (httpx.HTTPError, ValueError):
            return ["api-server"]
        return [
            component
            for component, key in _HEALTH_KEYS.items()
            if (health.get(key) or {}).get("status") != "healthy"
        ]

    def _check_running(self) -> None:
        for component, process in self.processes.items():
            if process.poll() is not None:
                raise RuntimeError(
                    f"airflow {component} exited with {process.returncode}; "
                    + self.log_tail(component)
                )

    def log_tail(self, component: str, lines: int = 30) -> str:
        path = self.log_file(component)
        text = path.read_text(errors="replace") if path.exists() else ""
        return f"the end of {path}:\n" + "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """SIGTERM to each component's process group, then SIGKILL to what is left after
        STOP_GRACE_S. Only the groups this started are signalled."""
        for process in self.processes.values():
            _signal_group(process, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for process in self.processes.values():
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for process in self.processes.values():
            _signal_group(process, signal.SIGKILL)
            process.wait()
        self.processes.clear()

    def __enter__(self) -> AirflowComponents:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    """Signals the process group the component leads (its own pid: start_new_session), even
    after the leader exited, while children of it may live on."""
    try:
        os.killpg(process.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass  # the whole group is gone
