"""A throwaway Spark standalone cluster (a master and workers on 127.0.0.1) started from the
installed pyspark, so tests can run the jobs as they run in production: spark-submit to a
master, executors in their own JVMs and Python workers, code shipped with --py-files.

    with standalone_cluster(tmp_path, python=sys.executable) as cluster:
        subprocess.run([cluster.spark_submit, "--master", cluster.master_url, ...])

Every daemon runs in its own process group (its executors and their Python workers too), and
all of them are killed when the block exits, however it exits.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
SPARK_CLASS = SPARK_HOME / "bin" / "spark-class"
SPARK_SUBMIT = SPARK_HOME / "bin" / "spark-submit"
DAEMON_MEMORY = "256m"  # master and worker JVMs: they only schedule
# Short-lived JVMs on a small machine: one GC thread and the quick JIT start (and compete) less.
LEAN_JVM_OPTIONS = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
_MASTER = "org.apache.spark.deploy.master.Master"
_WORKER = "org.apache.spark.deploy.worker.Worker"


@dataclass
class Daemon:
    name: str
    process: subprocess.Popen
    log: Path


@dataclass
class StandaloneCluster:
    master_url: str  # spark://127.0.0.1:PORT, for --master
    web_url: str  # the master's web UI; /json/ describes workers and applications
    work_dir: Path  # each worker's executors log under <work_dir>/<worker>/<app>/<executor>/
    python: str
    daemons: list[Daemon] = field(default_factory=list)
    worker_ui_ports: list[int] = field(default_factory=list)
    spark_submit: str = str(SPARK_SUBMIT)

    def state(self) -> dict:
        """The master's view: workers (state, cores), active and completed applications."""
        with urllib.request.urlopen(f"{self.web_url}/json/", timeout=5) as response:
            return json.load(response)

    def alive_workers(self) -> list[dict]:
        return [w for w in self.state().get("workers", []) if w.get("state") == "ALIVE"]

    def env(self) -> dict[str, str]:
        """The environment for spark-submit and the daemons: this pyspark, this Python."""
        env = dict(os.environ)
        env.update(
            SPARK_HOME=str(SPARK_HOME),
            SPARK_LOCAL_IP="127.0.0.1",
            PYSPARK_PYTHON=self.python,
            PYSPARK_DRIVER_PYTHON=self.python,
        )
        return env

    def diagnostics(self, tail: int = 60) -> str:
        """The end of every daemon's log and of every executor's stderr, for failure messages."""
        parts = [f"== {d.name} ({d.log}) ==\n{_tail(d.log, tail)}" for d in self.daemons]
        for stderr in sorted(self.work_dir.glob("*/*/*/stderr")):
            parts.append(
                f"== executor {stderr.relative_to(self.work_dir)} ==\n{_tail(stderr, tail)}"
            )
        return "\n".join(parts)

    def stop(self) -> None:
        """Kills every daemon's process group (executors and Python workers with it)."""
        for daemon in reversed(self.daemons):
            signal_group(daemon.process, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for daemon in reversed(self.daemons):
            try:
                daemon.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            signal_group(daemon.process, signal.SIGKILL)  # leftovers in the group, if any
            daemon.process.wait(timeout=10)


@contextmanager
def standalone_cluster(
    base_dir: Path, python: str, workers: int = 2, timeout: float = 90.0
) -> Iterator[StandaloneCluster]:
    """A master and `workers` workers (1 core, 1 GB each) on 127.0.0.1, ready when the master
    lists them all ALIVE; torn down on exit."""
    port, web_port, *worker_ports = free_ports(2 + workers)
    cluster = StandaloneCluster(
        master_url=f"spark://127.0.0.1:{port}",
        web_url=f"http://127.0.0.1:{web_port}",
        work_dir=Path(base_dir) / "work",
        python=python,
    )
    try:
        _start(cluster, "master", [_MASTER, "--host", "127.0.0.1", "--port", str(port)], web_port)
        for n in range(workers):
            ui_port = worker_ports[n]
            cluster.worker_ui_ports.append(ui_port)
            work = cluster.work_dir / f"worker-{n}"
            work.mkdir(parents=True)
            args = [_WORKER, cluster.master_url, "--host", "127.0.0.1", "--cores", "1"]
            args += ["--memory", "1g", "--work-dir", str(work)]
            _start(cluster, f"worker-{n}", args, ui_port)
        _wait_for_workers(cluster, workers, timeout)
        yield cluster
    finally:
        cluster.stop()


def free_ports(count: int) -> list[int]:
    """`count` distinct ports nothing listens on now (the OS's picks for ephemeral binds, all
    held at once so that no two are the same)."""
    probes = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


def _start(cluster: StandaloneCluster, name: str, args: list[str], web_port: int) -> None:
    log = cluster.work_dir.parent / f"{name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    env = cluster.env()
    env["SPARK_DAEMON_MEMORY"] = DAEMON_MEMORY
    env["SPARK_DAEMON_JAVA_OPTS"] = LEAN_JVM_OPTIONS
    command = [str(SPARK_CLASS), *args, "--webui-port", str(web_port)]
    with open(log, "wb") as out:
        process = subprocess.Popen(
            command,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group, killed as one
        )
    cluster.daemons.append(Daemon(name, process, log))


def _wait_for_workers(cluster: StandaloneCluster, expected: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    alive: list[dict] = []
    while time.monotonic() < deadline:
        dead = [d.name for d in cluster.daemons if d.process.poll() is not None]
        if dead:
            raise RuntimeError(f"{dead} exited while starting\n{cluster.diagnostics()}")
        try:
            alive = cluster.alive_workers()
        except (OSError, ValueError):  # the master's UI is not up (or not answering JSON) yet
            alive = []
        if len(alive) >= expected:
            return
        time.sleep(0.5)
    raise TimeoutError(
        f"{len(alive)} of {expected} workers ALIVE after {timeout}s\n{cluster.diagnostics()}"
    )


def signal_group(process: subprocess.Popen, sig: signal.Signals) -> None:
    """Signals a daemon and everything it started (its own process group)."""
    try:
        os.killpg(process.pid, sig)  # start_new_session: the group id is the leader's pid
    except ProcessLookupError:
        pass


def _tail(path: Path, lines: int) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as exc:
        return f"(unreadable: {exc})"
