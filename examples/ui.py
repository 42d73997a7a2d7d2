"""The whole local Airflow on the demo's Airflow home: its DAG runs, their task logs, the Hudi
view, and the tables' DAGs running on their schedules.

    ./run.sh ui [--workdir DIR] [--port 8080]

Starts Airflow's scheduler, dag-processor, triggerer and api-server (LocalExecutor, the api-server
on 127.0.0.1) with the Airflow home `./run.sh demo` left in DIR (default: ./data in the repo),
the Hudi provider installed (its UI plugin loaded), and the simple auth manager with one admin
login; unpauses the tables' DAGs, so they run on their schedules, backfills can be started
from the UI ("Backfill" on a DAG's page) and deferred sensors resume in the triggerer. It
prints the address and the login and stays in the foreground until Ctrl-C, which stops every
process it started. Run the demo first: without its Airflow home this exits with a message.
The demo starts by replacing that home, so stop the UI before running the demo again.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import socket
import sys
import time
from pathlib import Path

from hudi_airflow import local_run
from hudi_airflow.local_airflow import AirflowComponents, component_settings

REPO = Path(__file__).resolve().parents[1]
USERNAME = "admin"
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


def unpause_table_dags() -> list[str]:
    """Unpauses the DAGs of the demo's tables (dag.test() left them paused, Airflow's default
    for new DAGs); returns their ids."""
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session

    with create_session() as session:
        dags = session.query(DagModel).filter(DagModel.dag_id.like("trips_%")).all()
        for dag in dags:
            dag.is_paused = False
        return sorted(dag.dag_id for dag in dags)


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
    unpaused = unpause_table_dags()
    env = {**os.environ, **component_settings(port)}
    components = AirflowComponents(airflow_home, env, port)
    try:
        components.start()
        components.wait_until_healthy()
        url = components.url
        print(f"Airflow (scheduler, dag-processor, triggerer, api-server) on {airflow_home}:")
        print(f"  {url}/   login: {USERNAME} / {password}")
        print(f"  the Hudi view: {url}/hudi/   (logs: {airflow_home}/<component>.log)")
        print(f"  running on their schedules: {', '.join(unpaused) or 'no DAGs yet'}")
        print("Ctrl-C stops every process started here.", flush=True)
        while all(p.poll() is None for p in components.processes.values()):
            time.sleep(1)
        stopped = [c for c, p in components.processes.items() if p.poll() is not None]
        print(f"airflow {stopped[0]} stopped; {components.log_tail(stopped[0])}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1
    finally:
        components.stop()


def exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # runs the `finally` that stops the components


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", default=str(REPO / "data"), help="the demo's --workdir")
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, exit_on_sigterm)
    # Ctrl-C stops everything even where SIGINT came in ignored (a background job of a script
    # inherits SIG_IGN, and Python then installs no KeyboardInterrupt handler of its own).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return serve(Path(args.workdir).resolve(), args.port)


if __name__ == "__main__":
    sys.exit(main())
