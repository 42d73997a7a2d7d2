"""A savepoint killed before it completed (`<commit>.savepoint.inflight` left): archival stops
before its commit, readers ignore it (also once its commit is archived, as Apache Hudi's
archiver allows), and savepointing the commit again, or deleting the savepoint, recovers."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hudi_core import HudiTable
from hudi_core.errors import ServiceError
from hudi_core.timeline import ActiveTimeline, State
from tests import datagen, oracle
from tests.killed_writer import ROOT
from tests.tables import create_trips_table

CITY, ELSEWHERE = "san_francisco", "chennai"
BOUNDS = {
    "hoodie.keep.min.commits": 3,
    "hoodie.keep.max.commits": 5,
    "hoodie.cleaner.commits.retained": 2,
    "hoodie.archive.automatic": False,
    "hoodie.compact.inline.trigger.strategy": "TIME_ELAPSED",
}
TABLE_TYPES = ["MERGE_ON_READ", "COPY_ON_WRITE"]

_KILLED_SAVEPOINT = textwrap.dedent(
    """
    import os, signal, sys
    sys.path.insert(0, {root!r})
    from hudi_core import HudiTable
    from hudi_core.timeline import ActiveTimeline

    original = ActiveTimeline.transition

    def transition(self, instant, state, content=b""):
        if instant.action == "savepoint" and state.value == "COMPLETED":
            os.kill(os.getpid(), signal.SIGKILL)
        return original(self, instant, state, content)

    ActiveTimeline.transition = transition
    HudiTable.open({path!r}).savepoint({instant!r})
    """
)


def _kill_during_savepoint(path: str, instant: str) -> None:
    code = _KILLED_SAVEPOINT.format(root=str(ROOT), path=path, instant=instant)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert result.returncode == -signal.SIGKILL, result.stderr.decode()
    assert (Path(path) / ".hoodie" / f"{instant}.savepoint.inflight").exists()


def _keys(table) -> list[str]:
    return sorted(table.column("uuid").to_pylist())


def _write(table: HudiTable, keys: list[int], seed: int, city: str, operation: str) -> str:
    return table.write(datagen.trips(keys, seed=seed, ts=seed, cities=[city]), operation=operation)


def _table_with_a_delete(tmp_path: Path, table_type: str) -> tuple[str, HudiTable, list[str]]:
    """k1, k2 written; k1 deleted (commits[1]); later writes go to another partition, so the
    delete's files stay the newest of their file group."""
    path, table = create_trips_table(tmp_path, table_type, BOUNDS)
    commits = [_write(table, [1, 2], 1, CITY, "upsert"), _write(table, [1], 2, CITY, "delete")]
    return path, table, commits


def _later_writes(table: HudiTable, commits: list[str]) -> None:
    commits += [_write(table, [seed], seed, ELSEWHERE, "upsert") for seed in range(3, 7)]


def _assert_reads(table: HudiTable, path: str, expected: list[str]) -> None:
    ours = table.read()
    assert _keys(ours) == expected
    oracle.assert_same_table(ours, oracle.snapshot(path), "ours vs hudi-rs")


def _active_writes(path: str) -> list[str]:
    return [
        i.timestamp for i in ActiveTimeline.load(HudiTable.open(path).storage).completed_writes()
    ]


EXPECTED = ["key-000002", "key-000003", "key-000004", "key-000005", "key-000006"]


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_archival_stops_before_a_savepoint_killed_before_it_completed(tmp_path, table_type):
    path, table, commits = _table_with_a_delete(tmp_path, table_type)
    _kill_during_savepoint(path, commits[1])
    _later_writes(table, commits)

    archived = [i.timestamp for i in table.archive()]

    assert archived == commits[:1]  # the savepoint's commit stays: a rerun completes it
    assert commits[1] in _active_writes(path)
    _assert_reads(table, path, EXPECTED)


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_savepointing_again_completes_a_savepoint_killed_before_it_completed(tmp_path, table_type):
    path, table, commits = _table_with_a_delete(tmp_path, table_type)
    _kill_during_savepoint(path, commits[1])
    _later_writes(table, commits)
    table.archive()

    assert table.savepoint(commits[1]) == commits[1]

    savepoints = [i for i in table.timeline() if i.action == "savepoint"]
    assert [(i.timestamp, i.state) for i in savepoints] == [(commits[1], State.COMPLETED)]
    assert _keys(table.read(as_of=commits[1])) == ["key-000002"]
    assert table.archive() == []  # the completed savepoint keeps its commit
    table.restore(commits[1])
    _assert_reads(table, path, ["key-000002"])


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_deleting_a_savepoint_killed_before_it_completed_lets_archival_go_on(tmp_path, table_type):
    path, table, commits = _table_with_a_delete(tmp_path, table_type)
    _kill_during_savepoint(path, commits[1])
    _later_writes(table, commits)

    table.delete_savepoint(commits[1])

    assert not [i for i in table.timeline() if i.action == "savepoint"]
    assert [i.timestamp for i in table.archive()] == commits[:3]
    _assert_reads(table, path, EXPECTED)


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_a_savepoint_left_inflight_on_an_archived_commit_does_not_hide_it(tmp_path, table_type):
    """Apache Hudi's archiver only stops at completed savepoints: the commit of a savepoint
    left inflight may be archived. Its delete must still count (hudi-rs agrees)."""
    path, table, commits = _table_with_a_delete(tmp_path, table_type)
    _later_writes(table, commits)
    assert [i.timestamp for i in table.archive()] == commits[:3]
    # what Apache Hudi's SavepointActionExecutor leaves when killed: an empty inflight file
    ActiveTimeline.load(table.storage).create_inflight("savepoint", commits[1])

    _assert_reads(table, path, EXPECTED)
    ours = table.read(as_of=commits[3])
    assert _keys(ours) == ["key-000002", "key-000003", "key-000004"]
    oracle.assert_same_table(ours, oracle.snapshot(path, as_of=commits[3]), "as of, hudi-rs")

    # It cannot be completed any more (its commit is archived), only deleted; meanwhile it
    # does not hold archival back.
    with pytest.raises(ServiceError, match="delete_savepoint"):
        table.savepoint(commits[1])
    commits += [_write(table, [seed], seed, ELSEWHERE, "upsert") for seed in range(7, 10)]
    assert [i.timestamp for i in table.archive()] == commits[3:6]
    table.delete_savepoint(commits[1])
    _assert_reads(table, path, [*EXPECTED, "key-000007", "key-000008", "key-000009"])
