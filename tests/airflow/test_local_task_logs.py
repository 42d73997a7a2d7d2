"""The log router of in-process DAG runs (hudi_airflow/local_task_logs.py): while a task runs
its JSON log lines go to the task's file whole, however the stream splits them; the console
shows the lines at or above its level, as text, tracebacks included."""

from __future__ import annotations

import json

from hudi_airflow.local_task_logs import TaskLogRouter, render


def line(level: str, event: str, **extra) -> bytes:
    entry = {"timestamp": "2026-11-24T10:19:33.561933Z", "level": level, "event": event}
    return json.dumps({**entry, **extra}).encode() + b"\n"


def test_lines_of_a_running_task_go_to_its_file_and_only_then(tmp_path, capsys):
    router = TaskLogRouter(console_level="WARNING")
    task_log = tmp_path / "attempt=1.log"
    router.write(line("info", "before the task"))
    router.open_task_log(task_log)
    first, second = line("info", "in the task"), line("warning", "careful")
    router.write(first[:10])  # a line may come in pieces
    router.write(first[10:] + second)
    router.close_task_log()
    router.write(line("warning", "after the task"))
    router.flush()

    assert task_log.read_bytes() == first + second
    console = capsys.readouterr().err.splitlines()
    assert console == [
        "10:19:33 WARNING  careful",
        "10:19:33 WARNING  after the task",
    ]


def test_a_later_try_appends_to_its_file(tmp_path):
    router = TaskLogRouter()
    task_log = tmp_path / "attempt=1.log"
    for event in ("until deferred", "resumed"):
        router.open_task_log(task_log)
        router.write(line("info", event))
        router.close_task_log()
    events = [json.loads(text)["event"] for text in task_log.read_text().splitlines()]
    assert events == ["until deferred", "resumed"]


def test_render_shows_the_logger_and_the_traceback():
    frames = [{"filename": "/dags/x.py", "lineno": 13, "name": "boom"}]
    exception = [{"exc_type": "ValueError", "exc_value": "no", "frames": frames}]
    entry = json.loads(line("error", "Task failed", logger="task", exception=exception))
    assert render(entry) == (
        "10:19:33 ERROR    Task failed  [task]\n"
        '  File "/dags/x.py", line 13, in boom\n'
        "ValueError: no"
    )


def test_a_line_that_is_not_json_still_shows(capsys):
    router = TaskLogRouter(console_level="INFO")
    router.write(b"plain text\n")
    assert capsys.readouterr().err == "INFO     plain text\n"
