"""No failure is swallowed: a rollback that fails while handling a write's or a compaction's
failure is logged with its traceback and reaches the caller (and a job's result line); a result
file that cannot be written never costs the result line on stdout."""

from __future__ import annotations

import json
import logging

import pytest

from hudi_core.write import handles, transaction
from spark_jobs import cli
from tests import datagen
from tests.tables import create_trips_table


class TaskFailure(RuntimeError):
    pass


def _failing(*args, **kwargs):
    raise TaskFailure("the disk is full")


def _broken_rollback(*args, **kwargs):
    raise OSError("permission denied on .hoodie")


def test_a_write_whose_rollback_fails_reports_both(tmp_path, monkeypatch, caplog):
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE")
    table.write(datagen.trips([1, 2], seed=1, ts=1))
    monkeypatch.setattr(handles.MergeTask, "run", _failing)
    monkeypatch.setattr(transaction, "rollback_instant", _broken_rollback)
    with caplog.at_level(logging.ERROR), pytest.raises(TaskFailure) as failed:
        table.write(datagen.trips([1], seed=2, ts=2))
    (note,) = failed.value.__notes__
    assert "rolling back the failed write" in note and "permission denied on .hoodie" in note
    (record,) = [r for r in caplog.records if "failed too" in r.getMessage()]
    assert record.exc_info and "permission denied" in str(record.exc_info[1])
    pending = [i for i in table.timeline() if not i.is_completed]
    assert len(pending) == 1  # left for the next write, which rolls it back
    monkeypatch.undo()
    table.write(datagen.trips([1], seed=3, ts=3))
    assert all(i.is_completed for i in table.timeline())


def test_a_compaction_whose_rollback_fails_reports_both(tmp_path, monkeypatch, caplog):
    from hudi_core.services import compaction, planned_service

    path, table = create_trips_table(
        tmp_path, "MERGE_ON_READ", {"hoodie.compact.inline.max.delta.commits": "1"}
    )
    table.write(datagen.trips([1, 2], seed=1, ts=1))
    table.write(datagen.trips([1], seed=2, ts=2))
    planned = table.compaction.schedule()
    monkeypatch.setattr(compaction.CompactTask, "run", _failing)
    monkeypatch.setattr(planned_service, "rollback_instant", _broken_rollback)
    with caplog.at_level(logging.ERROR), pytest.raises(TaskFailure) as failed:
        table.compaction.run(planned)
    assert any(f"compaction {planned} failed too" in n for n in failed.value.__notes__)
    assert any(r.exc_info and "failed too" in r.getMessage() for r in caplog.records)


def _job_failing_with_a_note(argv):
    error = TaskFailure("the disk is full")
    error.add_note("rolling back the failed write 1 failed too (OSError: denied)")
    raise error


def test_a_jobs_result_line_carries_the_notes_of_its_failure(capsys, tmp_path):
    result_file = tmp_path / "result.json"
    code = cli.run("ingest", _job_failing_with_a_note, ["--result-file", str(result_file)])
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 1 and line["status"] == "FAILED"
    assert line["error"] == "TaskFailure: the disk is full"
    assert line["notes"] == ["rolling back the failed write 1 failed too (OSError: denied)"]
    assert json.loads(result_file.read_text()) == line


@pytest.mark.parametrize("outcome", ["succeeded", "failed"])
def test_an_unwritable_result_file_still_prints_the_result_line(capsys, tmp_path, outcome):
    def main(argv):
        if outcome == "failed":
            raise TaskFailure("the disk is full")
        return cli.result("clean", "/t", "20240101000000000", "clean", "COMPLETED")

    unwritable = tmp_path / "no-such-folder" / "result.json"
    code = cli.run("clean", main, ["--result-file", str(unwritable)])
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == (0 if outcome == "succeeded" else 1)
    assert line["status"] == outcome.upper()
    assert "No such file or directory" in line["result_file_error"]
    assert not unwritable.exists()
