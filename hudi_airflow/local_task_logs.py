"""Task logs of the DAG runs `local_run` drives, written where the Airflow UI reads them.

`dag.test()` runs each task inside the calling process, and Airflow's logging sends every line
to the console: no per-try log file, so the api-server's log view of those runs stays empty.
A worker's supervisor would write the task's lines, as JSON, to
`[logging] base_log_folder/<log_filename_template>`; `route_task_logs()` does the same here.
Airflow's logging is pointed (JSON lines) at a `TaskLogRouter`, and a task listener tells the
router which task runs: its lines go to that task's file, and the lines at or above the console
level (any task or not) are shown on the console, rendered as short text: on stderr, so that
stdout holds only what a program prints.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any, BinaryIO

import pluggy

# Airflow's listener hook marker (airflow.listeners.hookimpl), without importing airflow here.
hookimpl = pluggy.HookimplMarker("airflow")
LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40, "critical": 50}

_router: TaskLogRouter | None = None


class TaskLogRouter:
    """A binary stream of JSON log lines (Airflow's structlog and stdlib output) that appends
    each line to the running task's log file, if a task runs, and shows it on the console if
    its level is high enough. Several threads log (the in-process supervisor has its own)."""

    def __init__(self, console_level: str = "INFO") -> None:
        self.console_level = LEVELS[console_level.lower()]
        self._lock = threading.RLock()  # a line that logs while routed must not deadlock
        self._pending = b""
        self._task_file: BinaryIO | None = None

    def open_task_log(self, path: Path) -> None:
        """From now on the lines go to `path` too (appended: a resumed try keeps its start)."""
        with self._lock:
            self._close_task_file()
            self._task_file = path.open("ab")

    def close_task_log(self) -> None:
        with self._lock:
            self._close_task_file()

    def write(self, data: bytes) -> int:
        with self._lock:
            self._pending += data
            *lines, self._pending = self._pending.split(b"\n")
            for line in lines:
                if line.strip():
                    self._route(line)
        return len(data)

    def flush(self) -> None:
        with self._lock:
            if self._task_file is not None:
                self._task_file.flush()

    def _route(self, line: bytes) -> None:
        if self._task_file is not None:
            self._task_file.write(line + b"\n")
        try:
            entry = json.loads(line)
        except ValueError:
            entry = {"level": "info", "event": line.decode(errors="replace")}
        if LEVELS.get(str(entry.get("level", "info")).lower(), 20) >= self.console_level:
            print(render(entry), file=sys.stderr, flush=True)

    def _close_task_file(self) -> None:
        if self._task_file is not None:
            self._task_file.close()
            self._task_file = None


def render(entry: dict[str, Any]) -> str:
    """One JSON log entry as console text: time, level, event, logger, and a traceback."""
    time = str(entry.get("timestamp", ""))[11:19]  # HH:MM:SS of an ISO timestamp
    text = f"{time} " if time else ""
    text += f"{str(entry.get('level', '')).upper():<8} {entry.get('event', '')}"
    if entry.get("logger"):
        text += f"  [{entry['logger']}]"
    for exception in entry.get("exception") or []:
        for frame in exception.get("frames", []):
            text += f'\n  File "{frame.get("filename")}", line {frame.get("lineno")}, '
            text += f"in {frame.get('name')}"
        text += f"\n{exception.get('exc_type')}: {exception.get('exc_value')}"
    return text


class TaskLogListener:
    """An Airflow task listener: opens the running try's log file, closes it when the try ends."""

    def __init__(self, router: TaskLogRouter) -> None:
        self.router = router

    @hookimpl
    def on_task_instance_running(self, previous_state: Any, task_instance: Any) -> None:
        self.router.open_task_log(task_log_path(task_instance))

    @hookimpl
    def on_task_instance_success(self, previous_state: Any, task_instance: Any) -> None:
        self.router.close_task_log()

    @hookimpl
    def on_task_instance_failed(self, previous_state: Any, task_instance: Any, error: Any) -> None:
        self.router.close_task_log()

    @hookimpl
    def on_task_instance_skipped(self, previous_state: Any, task_instance: Any) -> None:
        self.router.close_task_log()


def task_log_path(task_instance: Any) -> Path:
    """The try's log file, as Airflow's executors name it (created, with its folders)."""
    from airflow.sdk.log import init_log_file
    from airflow.utils.helpers import log_filename_template_renderer

    return init_log_file(log_filename_template_renderer()(ti=task_instance))


def route_task_logs(console_level: str = "INFO") -> TaskLogRouter:
    """Installs the router and its listener once per process (after Airflow's own logging
    setup, which `import airflow` does); later calls only change the console level."""
    global _router
    if _router is not None:
        _router.console_level = LEVELS[console_level.lower()]
        return _router
    from airflow.sdk.listener import get_listener_manager
    from airflow.sdk.log import configure_logging

    router = TaskLogRouter(console_level)
    excepthook = sys.excepthook
    configure_logging(json_output=True, output=router)  # at [logging] logging_level
    sys.excepthook = excepthook  # a crash outside the tasks keeps its plain traceback
    get_listener_manager().add_listener(TaskLogListener(router))
    _router = router
    return router
