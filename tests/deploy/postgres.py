"""A PostgreSQL cluster of the test's own: Debian's server binaries (the `postgresql` package,
which ./run.sh test installs), a data folder in a temporary directory, a free port on
127.0.0.1, password authentication for the one role it creates. Stopped (`pg_ctl stop`) and
removed by the test that started it; no other server is touched."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SERVER_BINARIES = "/usr/lib/postgresql/*/bin"
USER = "airflow"


@dataclass(frozen=True)
class Postgres:
    port: int
    password: str

    def url(self, database: str, driver: str = "psycopg2") -> str:
        return f"postgresql+{driver}://{USER}:{self.password}@127.0.0.1:{self.port}/{database}"


def server_binaries() -> Path | None:
    """The newest installed server's bin folder (initdb, pg_ctl), if any."""
    found = sorted(glob.glob(f"{SERVER_BINARIES}/initdb"), key=_major_version)
    return Path(found[-1]).parent if found else None


def _major_version(initdb: str) -> int:
    return int(Path(initdb).parts[-3])


@contextmanager
def postgres_cluster(databases: list[str], password: str = "airflow-test") -> Iterator[Postgres]:
    """A running cluster with `databases` owned by the role `airflow`; stopped afterwards."""
    binaries = server_binaries()
    if binaries is None:
        raise FileNotFoundError(f"no PostgreSQL server in {SERVER_BINARIES}")
    folder = Path(tempfile.mkdtemp(prefix="hudi-deploy-pg-"))
    data, sockets = folder / "data", folder / "sockets"
    sockets.mkdir()
    as_owner = _as_postgres_user(folder)
    port = _free_port()
    (folder / "password").write_text(password)
    subprocess.run(
        [*as_owner, str(binaries / "initdb"), "-D", str(data), "-U", USER, "-A", "scram-sha-256",
         f"--pwfile={folder / 'password'}", "--no-sync"],
        check=True, capture_output=True,
    )  # fmt: skip
    options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off"
    pg_ctl = [*as_owner, str(binaries / "pg_ctl"), "-D", str(data), "-l", str(folder / "log")]
    subprocess.run([*pg_ctl, "-o", options, "-w", "start"], check=True, capture_output=True)
    try:
        server = Postgres(port, password)
        _create_databases(server, databases)
        yield server
    finally:
        subprocess.run([*pg_ctl, "-m", "fast", "-w", "stop"], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def _as_postgres_user(folder: Path) -> list[str]:
    """PostgreSQL refuses to run as root: as root, the cluster belongs to Debian's `postgres`
    user (the package creates it), and the commands run as that user."""
    if os.geteuid() != 0:
        return []
    shutil.chown(folder, "postgres", "postgres")
    for child in folder.iterdir():
        shutil.chown(child, "postgres", "postgres")
    return ["runuser", "-u", "postgres", "--"]


def _create_databases(server: Postgres, databases: list[str]) -> None:
    import sqlalchemy as sa

    engine = sa.create_engine(server.url("postgres"), isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        for name in databases:
            connection.execute(sa.text(f'CREATE DATABASE "{name}"'))
    engine.dispose()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
