"""The Airflow UI on the demo's Airflow home: its DAG runs, their task logs, and the Hudi view.

    ./run.sh ui [--workdir DIR] [--port 8080]

Starts `airflow api-server` on 127.0.0.1 with the Airflow home `./run.sh demo` left in DIR
(default: ./data in the repo), the Hudi provider installed (its UI plugin loaded), and the
simple auth manager with one admin login, then prints the address and the login and stays in
the foreground until Ctrl-C. Run the demo first: without its Airflow home this exits with a
message. The demo starts by replacing that home, so stop the UI before running the demo again.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from hudi_airflow import local_run

REPO = Path(__file__).resolve().parents[1]
USERNAME = "admin"
START_TIMEOUT_S = 120
# The simple auth manager's passwords file, at the place it uses by default.
PASSWORDS_FILE = "simple_auth_manager_passwords.json.generated"


def admin_password(airflow_home: Path) -> str:
    """The admin's password from the home's passwords file; a new one if it has none."""
    path = airflow_home / PASSWORDS_FILE
    passwords = json.loads(path.read_text() or "{}") if path.exists() else {}
    if USERNAME not in passwords:
        passwords[USERNAME] = secrets.token_urlsafe(12)
        path.write_text(json.dumps(passwords))
    return passwords[USERNAME]


def configure(workdir: Path) -> Path:
    """The demo's Airflow settings (local_run.configure) plus the login; returns the home."""
    airflow_home = workdir / "airflow"
    local_run.configure(airflow_home, workdir / "tables.yaml")
    os.environ["AIRFLOW__CORE__AUTH_MANAGER"] = (
        "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager"
    )
    os.environ["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS"] = f"{USERNAME}:admin"
    os.environ["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS"] = "False"
    os.environ["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"] = str(
        airflow_home / PASSWORDS_FILE
    )
    return airflow_home


def port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def start_api_server(airflow_home: Path, port: int) -> subprocess.Popen:
    """`airflow api-server` with its output in <home>/api-server.log. Started in the Airflow
    home, not the checkout: `python -m` puts the working folder on sys.path, and the
    checkout's egg-info there would make Airflow load the plugin's entry point twice."""
    command = [sys.executable, "-m", "airflow", "api-server"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--workers", "1"]
    with open(airflow_home / "api-server.log", "wb") as log:
        return subprocess.Popen(command, cwd=airflow_home, stdout=log, stderr=subprocess.STDOUT)


def wait_until_up(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
            raise SystemExit(f"airflow api-server exited with {process.returncode}:\n{tail}")
        try:
            if httpx.get(f"{url}/api/v2/monitor/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass  # not listening yet
        time.sleep(0.5)
    process.terminate()
    raise SystemExit(f"airflow api-server did not answer within {START_TIMEOUT_S} s; see {log}")


def serve(workdir: Path, port: int) -> int:
    if not (workdir / "airflow" / "airflow.db").exists():
        print(
            f"No demo has run in {workdir} (no Airflow home {workdir / 'airflow'}).\n"
            f"Run `./run.sh demo --workdir {workdir}` first, then this again.",
            file=sys.stderr,
        )
        return 1
    airflow_home = configure(workdir)
    if not port_is_free(port):
        print(f"Port {port} is in use; choose another with --port.", file=sys.stderr)
        return 1
    password = admin_password(airflow_home)
    local_run.migrate_database()  # quick when the demo already migrated it
    process = start_api_server(airflow_home, port)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, process, airflow_home / "api-server.log")
        print(f"Airflow UI on the demo's Airflow home {airflow_home}:")
        print(f"  {url}/   login: {USERNAME} / {password}")
        print(f"  the Hudi view: {url}/hudi/   (server log: {airflow_home / 'api-server.log'})")
        print("Ctrl-C stops it.", flush=True)
        return process.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        stop(process)


def stop(process: subprocess.Popen) -> None:
    """Stops the server (Ctrl-C in a terminal has reached it already; SIGTERM is harmless then)."""
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # runs the `finally` that stops the server


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", default=str(REPO / "data"), help="the demo's --workdir")
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, exit_on_sigterm)
    return serve(Path(args.workdir).resolve(), args.port)


if __name__ == "__main__":
    sys.exit(main())
