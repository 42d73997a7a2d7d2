"""A real `airflow api-server` for the UI view's tests: its own AIRFLOW_HOME and SQLite
database, the installed Hudi provider (its UI plugin; the plugins folder stays empty), and
the simple auth manager with one admin user whose password the test chooses (written to the
passwords file the auth manager reads). Also headless Chromium, logged in to it."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import httpx
import pytest

AUTH_MANAGER = "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager"
USERNAME = "admin"
START_TIMEOUT_S = 90
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROME_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1280,1024",
)
WAIT_S = 30


@dataclass
class ApiServer:
    url: str
    username: str
    password: str
    log_path: Path

    def token(self) -> str:
        """A JWT for the user, from the simple auth manager's login route."""
        response = httpx.post(
            f"{self.url}/auth/token",
            json={"username": self.username, "password": self.password},
            timeout=30,
        )
        assert response.status_code == 201, f"login failed: {response.status_code} {response.text}"
        return response.json()["access_token"]

    def trigger_dag_run(self, dag_id: str, run_id: str, logical_date: str) -> None:
        """A DAG run (its task instances with it) through the REST API; nothing runs it."""
        response = httpx.post(
            f"{self.url}/api/v2/dags/{dag_id}/dagRuns",
            json={"dag_run_id": run_id, "logical_date": logical_date},
            headers={"Authorization": f"Bearer {self.token()}"},
            timeout=30,
        )
        assert response.status_code == 200, f"trigger: {response.status_code} {response.text}"

    def log_tail(self, lines: int = 40) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def airflow_env(home: Path, tables_config: Path, password_file: Path) -> dict[str, str]:
    """The environment of the server: nothing Airflow-related inherited from the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(home / "dags"),
            "AIRFLOW__CORE__PLUGINS_FOLDER": str(home / "plugins"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__API__HOST": "127.0.0.1",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
            "AIRFLOW__CORE__AUTH_MANAGER": AUTH_MANAGER,
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{USERNAME}:admin",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(password_file),
            "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_hex(32),
            "HUDI_TABLES_CONFIG": str(tables_config),
        }
    )
    return env


@contextmanager
def running_api_server(
    home: Path, tables_config: Path, dags: Mapping[str, str] | None = None
) -> Iterator[ApiServer]:
    """Migrates a fresh database under `home`, serializes `dags` (file name -> source) into it,
    starts the API server on a free port, and always stops it (its whole process group) on
    the way out."""
    (home / "dags").mkdir(parents=True, exist_ok=True)
    for name, source in (dags or {}).items():
        (home / "dags" / name).write_text(source)
    password = secrets.token_urlsafe(12)
    password_file = home / "passwords.json"
    password_file.write_text(json.dumps({USERNAME: password}))
    env = airflow_env(home, tables_config, password_file)
    _airflow(env, "db", "migrate")
    if dags:
        # The server (`--apps core`) parses no DAGs; the UI shows the serialized ones.
        _airflow(env, "dags", "reserialize")
    port = _free_port()
    server = ApiServer(f"http://127.0.0.1:{port}", USERNAME, password, home / "api-server.log")
    command = [sys.executable, "-m", "airflow", "api-server"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--workers", "1", "--apps", "core"]
    with open(server.log_path, "wb") as log:
        # Started outside the repository, as a deployment is: the checkout's folder on
        # sys.path (python -m adds the working folder) would also hold the editable install's
        # egg-info, whose plugin entry point Airflow would then load twice.
        process = subprocess.Popen(
            command,
            env=env,
            cwd=home,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_until_up(server, process)
        yield server
    finally:
        _stop(process)


def _airflow(env: dict[str, str], *args: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "airflow", *args],
        env=env,
        cwd=env["AIRFLOW_HOME"],  # outside the repository, as the server (running_api_server)
        capture_output=True,
        text=True,
        timeout=180,
    )
    if result.returncode != 0:
        command = " ".join(("airflow", *args))
        raise RuntimeError(f"{command} failed:\n{result.stdout}\n{result.stderr}")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_until_up(server: ApiServer, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"airflow api-server exited with {process.returncode}:\n{server.log_tail()}"
            )
        try:
            if httpx.get(f"{server.url}/api/v2/monitor/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass  # not listening yet
        time.sleep(0.5)
    raise RuntimeError(
        f"airflow api-server did not answer within {START_TIMEOUT_S} s:\n{server.log_tail()}"
    )


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM to the server's process group (it forks workers), then SIGKILL to whatever of
    the group is left."""
    for sig, wait_s in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return  # the whole group is gone
        try:
            process.wait(wait_s)
        except subprocess.TimeoutExpired:
            pass


def stop_process_group(process: subprocess.Popen) -> None:
    """Stops a process started in a session of its own, and all it started (see _stop)."""
    _stop(process)


def environment_without_airflow() -> dict[str, str]:
    """This process's environment minus its Airflow settings (the test session's Airflow home
    and tables file), for a child that makes its own."""
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("AIRFLOW") and k != "HUDI_TABLES_CONFIG"
    }


def free_port() -> int:
    return _free_port()


@contextmanager
def logged_in_browser(server: ApiServer) -> Iterator:
    """Headless Chromium (a Selenium driver), logged in through Airflow's own login page."""
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        pytest.fail(
            f"{' and '.join(missing)} missing: the browser test needs Debian's chromium and "
            "chromium-driver packages; `./run.sh test` installs them"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        options.add_argument(f"--user-data-dir={profile}")
        driver = webdriver.Chrome(
            service=Service(executable_path=str(CHROMEDRIVER)), options=options
        )
        try:
            _log_in(driver, server)
            yield driver
        finally:
            driver.quit()


def _log_in(driver, server: ApiServer) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(server.url + "/hudi/")
    WebDriverWait(driver, WAIT_S).until(ec.presence_of_element_located((By.NAME, "username")))
    assert "/auth/login" in driver.current_url, "the view must send a new browser to log in"
    driver.find_element(By.NAME, "username").send_keys(server.username)
    driver.find_element(By.NAME, "password").send_keys(server.password)
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    WebDriverWait(driver, WAIT_S).until(ec.url_to_be(server.url + "/hudi/"))


# The iframe Airflow's UI shows the Hudi view in (Browse > Hudi tables).
HUDI_VIEW_FRAME = "iframe[title='Hudi tables']"


def wait(driver):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_S)


def path_of(driver) -> str:
    return urlparse(driver.current_url).path


def open_the_hudi_view_from_the_browse_menu(driver, server: ApiServer) -> None:
    """What a user does: Airflow's home page, Browse, Hudi tables (the view in an iframe)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    driver.get(server.url + "/")
    browse = (By.CSS_SELECTOR, "[data-testid='nav-sidebar'] button[aria-label='Browse']")
    wait(driver).until(ec.element_to_be_clickable(browse)).click()
    item = (By.XPATH, "//*[@role='menuitem'][normalize-space()='Hudi tables']")
    wait(driver).until(ec.element_to_be_clickable(item)).click()
    wait(driver).until(lambda d: path_of(d).startswith("/plugin/hudi-tables"))


@contextmanager
def in_the_hudi_view_frame(driver) -> Iterator[None]:
    """The driver inside the view's iframe, back on the page afterwards."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    frame = (By.CSS_SELECTOR, HUDI_VIEW_FRAME)
    wait(driver).until(ec.frame_to_be_available_and_switch_to_it(frame))
    try:
        yield
    finally:
        driver.switch_to.default_content()
