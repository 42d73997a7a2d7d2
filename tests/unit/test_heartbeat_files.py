"""Heartbeat and attempt files of a process killed while refreshing them: the next run must
see the process dead (its name stays in the file) instead of waiting for the heartbeat to
expire; and an empty heartbeat, Apache Hudi's format, still counts as alive by its time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_core import HudiTable
from hudi_core.errors import ConcurrentServiceError
from hudi_core.services.heartbeat import Liveness, claim_attempt, write_is_alive
from tests import datagen, oracle
from tests.killed_writer import ROOT
from tests.tables import create_trips_table

CITY = "san_francisco"
BOUNDS = {
    "hoodie.keep.min.commits": 3,
    "hoodie.keep.max.commits": 5,
    "hoodie.cleaner.commits.retained": 2,
    "hoodie.archive.automatic": False,
}
EVERY_DELTA = {"hoodie.compact.inline.max.delta.commits": 1}
# The child beats every 50 ms; the parent keeps the defaults (60 s, 2 misses): by time alone
# a heartbeat the child left would count as alive for two minutes.
FAST_BEAT = {"hoodie.client.heartbeat.interval_in_ms": 50}

# A child that runs one job and is SIGKILLed while refreshing a heartbeat (or attempt) file
# whose path contains WATCHED: after the file was truncated, for a plain rewrite; before the
# new content lands, for a whole replace; at the latest right after its second beat.
_SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, time
    sys.path.insert(0, {root!r})
    from hudi_core import HudiTable
    from hudi_core.services import archiver, heartbeat
    from hudi_core.storage import Storage
    from hudi_core.timeline import ActiveTimeline
    from tests import datagen

    WATCHED = {watched!r}
    beats = {{}}
    armed = set()

    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    original_beat = heartbeat.Heartbeat._beat

    def beat(self):
        beats[self.path] = beats.get(self.path, 0) + 1
        if WATCHED in self.path and beats[self.path] > 1:
            armed.add(self.path)
            original_beat(self)
            die()
        return original_beat(self)

    heartbeat.Heartbeat._beat = beat
    original_write, original_replace = Storage.write_bytes, Storage.replace

    def write_bytes(self, relative, data):
        if relative in armed:
            original_write(self, relative, b"")  # truncated; the content never comes
            die()
        return original_write(self, relative, data)

    def replace(self, relative, data):
        if relative in armed:
            die()
        return original_replace(self, relative, data)

    Storage.write_bytes, Storage.replace = write_bytes, replace

    def slowly(function):
        def slow(*args, **kwargs):
            time.sleep(5)  # beats go on meanwhile, until the second one kills us
            return function(*args, **kwargs)
        return slow

    original_transition = ActiveTimeline.transition

    def transition(self, instant, state, content=b""):
        if instant.action == {slow_action!r} and state.value == "COMPLETED":
            time.sleep(5)
        return original_transition(self, instant, state, content)

    ActiveTimeline.transition = transition
    archiver.archive_instants = slowly(archiver.archive_instants)
    table = HudiTable.open({path!r}, options={options!r})
    {job}
    """
)


def _run_killed(path: str, watched: str, job: str, slow_action: str = "") -> None:
    code = _SCRIPT.format(
        root=str(ROOT),
        path=path,
        options={**BOUNDS, **FAST_BEAT},
        watched=watched,
        slow_action=slow_action,
        job=job,
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert result.returncode == -signal.SIGKILL, result.stderr.decode()


def _upsert(table: HudiTable, seed: int, keys: list[int]) -> str:
    return table.write(datagen.trips(keys, seed=seed, ts=seed, cities=[CITY]), operation="upsert")


def _moved(table: pa.Table) -> pa.Table:
    """Rows without where they live: compaction writes them to new files."""
    return table.drop_columns(["_hoodie_file_name"])


def _left_files(path: str, folder: str) -> list[Path]:
    return [p for p in (Path(path) / ".hoodie" / folder).rglob("*") if p.is_file()]


def test_an_archival_killed_while_refreshing_its_attempt_does_not_block_the_next(tmp_path):
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE", BOUNDS)
    commits = [_upsert(table, seed, [seed]) for seed in range(1, 8)]
    before = table.read()

    _run_killed(path, ".attempts/archival/", "table.archive()")
    assert [p for p in _left_files(path, ".aux/.attempts/archival") if p.name.isdigit()]

    archived = table.archive()  # at once, not two minutes later

    assert [i.timestamp for i in archived] == commits[:4]
    oracle.assert_same_table(table.read(), before, "ours after archival")
    oracle.assert_same_table(oracle.snapshot(path), before, "hudi-rs after archival")


def test_a_compaction_killed_while_refreshing_its_attempt_is_rerun_at_once(tmp_path):
    path, table = create_trips_table(tmp_path, "MERGE_ON_READ", BOUNDS)
    _upsert(table, 1, [1, 2, 3])
    _upsert(table, 2, [2])
    _upsert(table, 3, [3, 4])
    planned = table.compaction.schedule(EVERY_DELTA)
    assert planned is not None
    before = table.read()

    _run_killed(path, f".attempts/{planned}/", "table.compaction.run()", slow_action="compaction")

    assert table.compaction.run() == planned  # no ConcurrentServiceError
    assert table.compaction.pending() == []
    after = table.read()
    oracle.assert_same_table(_moved(after), _moved(before), "ours: rows moved, not changed")
    oracle.assert_same_table(after, oracle.snapshot(path), "hudi-rs after the rerun")


def test_a_write_killed_while_refreshing_its_heartbeat_is_rolled_back_at_once(tmp_path):
    path, table = create_trips_table(tmp_path, "MERGE_ON_READ", BOUNDS)
    _upsert(table, 1, [1, 2, 3])
    _upsert(table, 2, [2])
    before = table.read()

    job = f"table.write(datagen.trips([5, 6], seed=9, ts=9, cities=[{CITY!r}]))"
    _run_killed(path, ".heartbeat/", job, slow_action="deltacommit")
    assert _left_files(path, ".heartbeat")

    # A single writer's compaction waits for writes in flight; a dead one is rolled back.
    planned = table.compaction.schedule(EVERY_DELTA)

    assert planned is not None
    assert not [i for i in table.timeline() if not i.is_completed and i.timestamp != planned]
    oracle.assert_same_table(table.read(), before, "ours without the killed write")
    oracle.assert_same_table(oracle.snapshot(path), before, "hudi-rs without it")


def test_an_empty_heartbeat_beaten_just_now_counts_as_alive(tmp_path):
    """Apache Hudi's heartbeat files are empty: only their time tells (guard, not a fix)."""
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE")
    heartbeat = Path(path) / ".hoodie" / ".heartbeat" / "20240101000000000"
    heartbeat.parent.mkdir(parents=True, exist_ok=True)
    heartbeat.write_bytes(b"")
    liveness = Liveness(interval_ms=60000, tolerable_misses=2)
    assert write_is_alive(table.storage, "20240101000000000", liveness)

    attempt = Path(path) / ".hoodie" / ".aux" / ".attempts" / "x" / "1"
    attempt.parent.mkdir(parents=True)
    attempt.write_bytes(b"")
    with pytest.raises(ConcurrentServiceError):
        claim_attempt(table.storage, "x", liveness, "test")

    old = time.time() - 300
    os.utime(heartbeat, (old, old))
    assert not write_is_alive(table.storage, "20240101000000000", liveness)


def test_a_beat_replaces_the_file_whole(tmp_path):
    """Every beat leaves the owner's name in the file: never an empty file in between."""
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE")
    liveness = Liveness(interval_ms=5, tolerable_misses=2)
    seen: set[bytes] = set()
    with claim_attempt(table.storage, "y", liveness, "test"):
        attempt = Path(path) / ".hoodie" / ".aux" / ".attempts" / "y" / "1"
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:
            try:
                seen.add(attempt.read_bytes())
            except FileNotFoundError:
                seen.add(b"<missing>")
    assert len(seen) == 1 and next(iter(seen)).endswith(str(os.getpid()).encode()), seen
