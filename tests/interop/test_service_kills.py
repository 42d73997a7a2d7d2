"""Table services killed (SIGKILL, in a child process) after their plan, midway, and just
before completing: the table stays readable with the same rows (ours and hudi-rs), and running
the service again completes it."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest

from hudi_core import HudiTable
from hudi_core.timeline import State
from tests import datagen, oracle
from tests.killed_writer import ROOT

# Small heartbeats: a killed attempt counts as dead after 300 ms, so the retry may take over.
OPTIONS = {
    "hoodie.client.heartbeat.interval_in_ms": "100",
    "hoodie.client.heartbeat.tolerable.misses": "3",
    "hoodie.cleaner.commits.retained": "2",
    "hoodie.keep.min.commits": "3",
    "hoodie.keep.max.commits": "5",
    "hoodie.compact.inline.max.delta.commits": "2",
}

_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    sys.path.insert(0, {root!r})
    from hudi_core import HudiTable
    from hudi_core.timeline import ActiveTimeline
    import hudi_core.storage
    import hudi_core.services.archiver as archiver

    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    def at_transition(action, state):
        original = ActiveTimeline.transition
        def transition(self, instant, to, content=b""):
            if instant.action == action and to.value == state:
                die()
            return original(self, instant, to, content)
        ActiveTimeline.transition = transition

    def after_calls(owner, name, calls, matching=lambda *a: True):
        original = getattr(owner, name)
        seen = [0]
        def wrapped(*args, **kwargs):
            result = original(*args, **kwargs)
            if matching(*args):
                seen[0] += 1
                if seen[0] >= calls:
                    die()
            return result
        setattr(owner, name, wrapped)

    def before_call(owner, name):
        def wrapped(*args, **kwargs):
            die()
        setattr(owner, name, wrapped)

    {hook}
    table = HudiTable.open({path!r}, options={options!r})
    {service}
    """
)


def _run_killed(path: str, hook: str, service: str) -> None:
    code = _CHILD.format(root=str(ROOT), path=path, options=OPTIONS, hook=hook, service=service)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert result.returncode == -signal.SIGKILL, result.stderr.decode()[-2000:]
    time.sleep(0.4)  # the killed attempt's heartbeat goes stale


def _mor_table(tmp_path, deltas: int = 3) -> tuple[str, HudiTable]:
    path = str(tmp_path / "trips")
    table = HudiTable.create(
        path, "trips", "MERGE_ON_READ", ["uuid"], ["city"], "ts", options=OPTIONS
    )
    table.write(datagen.trips(list(range(80)), seed=1, ts=1), operation="insert")
    for n in range(2, 2 + deltas):
        table.write(datagen.trips(list(range(n, 80, 3)), seed=n, ts=n))
    return path, table


def _assert_unchanged(table: HudiTable, path: str, before: list[dict], step: str) -> None:
    ours = table.read()
    assert oracle.sorted_rows(ours.select(datagen.SCHEMA.names)) == before, step
    oracle.assert_same_table(ours, oracle.snapshot(path), step)


def _rows(table: HudiTable) -> list[dict]:
    return oracle.sorted_rows(table.read().select(datagen.SCHEMA.names))


COMPACTION_KILLS = {
    "after the plan": "at_transition('compaction', 'INFLIGHT')",
    "mid-execution": (
        "from hudi_core.io import base_file; after_calls(base_file.BaseFileWriter, 'close', 2)"
    ),
    "before completion": "at_transition('compaction', 'COMPLETED')",
}


@pytest.mark.parametrize("point", sorted(COMPACTION_KILLS))
def test_killed_compaction_is_completed_by_a_rerun(tmp_path, point):
    path, table = _mor_table(tmp_path)
    before = _rows(table)
    planned = table.compaction.schedule()
    assert planned is not None
    _run_killed(path, COMPACTION_KILLS[point], f"table.compaction.run({planned!r})")
    _assert_unchanged(table, path, before, f"compaction killed {point}")
    assert table.compaction.pending() == [planned]

    assert table.compaction.run() == planned
    rollbacks = [i for i in table.timeline() if i.action == "rollback" and i.is_completed]
    started = point != "after the plan"
    assert len(rollbacks) == started, "a dead attempt that wrote files is rolled back first"
    done = next(i for i in table.timeline() if i.timestamp == planned)
    assert (done.action, done.state) == ("commit", State.COMPLETED)
    _assert_unchanged(table, path, before, f"compaction re-run after a kill {point}")
    assert sorted(set(_base_instants(table))) >= [planned]


def _base_instants(table: HudiTable) -> list[str]:
    names = table.read(query_type="read_optimized", columns=["_hoodie_file_name"])
    return [name.rsplit("_", 1)[-1].split(".")[0] for name in names.column(0).to_pylist()]


CLEAN_KILLS = {
    "after the plan": "at_transition('clean', 'INFLIGHT')",
    "mid-execution": (
        "after_calls(hudi_core.storage.Storage, 'delete', 1, "
        "lambda self, path: '.parquet' in path or '.log.' in path)"
    ),
    "before completion": "at_transition('clean', 'COMPLETED')",
}


@pytest.mark.parametrize("point", sorted(CLEAN_KILLS))
def test_killed_clean_is_completed_by_a_rerun(tmp_path, point):
    path, table = _mor_table(tmp_path)
    for _ in range(2):
        assert table.compaction.schedule() is not None
        table.compaction.run()
        table.write(datagen.trips(list(range(0, 80, 5)), seed=9, ts=9))
        table.write(datagen.trips(list(range(1, 80, 5)), seed=10, ts=10))
    before = _rows(table)
    files_before = _data_files(table)
    _run_killed(path, CLEAN_KILLS[point], "table.clean()")
    _assert_unchanged(table, path, before, f"clean killed {point}")
    pending = [i for i in table.timeline() if i.action == "clean" and not i.is_completed]
    assert len(pending) == 1, "the killed clean left its plan"

    table.clean()
    cleans = [i for i in table.timeline() if i.action == "clean"]
    assert cleans and all(i.is_completed for i in cleans)
    assert _data_files(table) < files_before, "the re-run deleted the planned files"
    _assert_unchanged(table, path, before, f"clean re-run after a kill {point}")


def _data_files(table: HudiTable) -> set[str]:
    return {
        e.path
        for e in table.storage.list_files("", recursive=True)
        if not e.path.startswith(".hoodie") and (".parquet" in e.name or ".log." in e.name)
    }


ARCHIVAL_KILLS = {
    "after the plan": "before_call(archiver, 'archive_instants')",
    "mid-execution": "after_calls(archiver, 'archive_instants', 1)",
    "before completion": (
        "after_calls(hudi_core.storage.Storage, 'delete', 3, "
        "lambda self, path: path.startswith('.hoodie/') and path.count('/') == 1)"
    ),
}


@pytest.mark.parametrize("point", sorted(ARCHIVAL_KILLS))
def test_killed_archival_is_completed_by_a_rerun(tmp_path, point):
    path, table = _mor_table(tmp_path, deltas=7)
    table.clean()
    before = _rows(table)
    full_before = [(i.timestamp, i.action) for i in table.timeline(archived=True)]
    _run_killed(path, ARCHIVAL_KILLS[point], "table.archive()")
    _assert_unchanged(table, path, before, f"archival killed {point}")
    assert [(i.timestamp, i.action) for i in table.timeline(archived=True)] == full_before

    table.archive()
    commits = [i for i in table.timeline() if i.action in ("commit", "deltacommit")]
    assert len(commits) == int(OPTIONS["hoodie.keep.min.commits"])
    assert [(i.timestamp, i.action) for i in table.timeline(archived=True)] == full_before
    assert all(i.is_completed for i in table.timeline(archived=True))
    _assert_unchanged(table, path, before, f"archival re-run after a kill {point}")


CLUSTERING_KILLS = {
    "after the plan": "at_transition('replacecommit', 'INFLIGHT')",
    "mid-execution": (
        "from hudi_core.io import base_file; after_calls(base_file.BaseFileWriter, 'close', 1)"
    ),
    "before completion": "at_transition('replacecommit', 'COMPLETED')",
}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("point", sorted(CLUSTERING_KILLS))
def test_killed_clustering_is_completed_by_a_rerun(tmp_path, point, table_type):
    path = str(tmp_path / "trips")
    options = {**OPTIONS, "hoodie.parquet.small.file.limit": "0"}
    table = HudiTable.create(path, "trips", table_type, ["uuid"], ["city"], "ts", options=options)
    for n in range(4):
        table.write(datagen.trips(list(range(20 * n, 20 * n + 20)), seed=n, ts=n))
    table.write(datagen.trips(list(range(0, 80, 3)), seed=9, ts=9))
    before = _rows(table)
    planned = table.clustering.schedule({"hoodie.clustering.plan.strategy.sort.columns": "fare"})
    assert planned is not None
    _run_killed(path, CLUSTERING_KILLS[point], f"table.clustering.run({planned!r})")
    _assert_unchanged(table, path, before, f"clustering killed {point}")
    assert table.clustering.pending() == [planned]

    assert table.clustering.run() == planned
    rollbacks = [i for i in table.timeline() if i.action == "rollback" and i.is_completed]
    assert len(rollbacks) == (point != "after the plan"), "a dead attempt is rolled back first"
    done = next(i for i in table.timeline() if i.timestamp == planned)
    assert (done.action, done.state) == ("replacecommit", State.COMPLETED)
    _assert_unchanged(table, path, before, f"clustering re-run after a kill {point}")
    assert set(_base_instants(table)) == {planned}  # every row now lies in a clustered file
