"""Processes in tests: writers and a table service racing in processes of their own, as
separate jobs would; and which processes a test's Airflow left behind."""

from __future__ import annotations

from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Event
from pathlib import Path


def run_writers_beside(
    writers: list[BaseProcess],
    service: BaseProcess,
    writers_done: Event,
    writer_seconds: float,
    service_seconds: float,
) -> None:
    """Starts all, waits for the writers, tells the service they are done, waits for it;
    fails if any process crashed or hung, and never leaves one running."""
    processes = [*writers, service]
    try:
        for process in processes:
            process.start()
        for writer in writers:
            writer.join(writer_seconds)
        writers_done.set()
        service.join(service_seconds)
        exit_codes = [p.exitcode for p in processes]
        assert exit_codes == [0] * len(processes), f"a process crashed or hung: {exit_codes}"
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()


def processes_of_airflow_home(airflow_home: Path) -> list[str]:
    """The pids of running processes whose environment has AIRFLOW_HOME=`airflow_home` (a
    component, a task process, a spark-submit JVM started under it)."""
    mark = f"AIRFLOW_HOME={airflow_home}".encode()
    pids = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if mark in environ.read_bytes().split(b"\0"):
                pids.append(environ.parent.name)
        except OSError:
            continue  # gone, or not ours to read
    return pids
