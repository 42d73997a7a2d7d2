"""Single-writer mode (the default) beside a second writer process: the second one fails with
an error saying another writer is active and how to let writers overlap, and the first one's
write is untouched; a writer that died is rolled back at once by the next one."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from hudi_core import HudiTable
from hudi_core.errors import ConcurrentWriterError
from tests import datagen, oracle
from tests.killed_writer import ROOT
from tests.tables import create_trips_table

_PAUSED_WRITER = textwrap.dedent(
    """
    import os, signal, sys, time
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from hudi_core import HudiTable
    from hudi_core.write.handles import MergeTask
    from tests import datagen

    original = MergeTask.run

    def paused(self, settings):
        Path({started!r}).touch()
        deadline = time.monotonic() + 60
        while not Path({go!r}).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        if {die!r}:
            os.kill(os.getpid(), signal.SIGKILL)
        return original(self, settings)

    MergeTask.run = paused
    HudiTable.open({path!r}).write(datagen.trips([0, 1, 2], seed=2, ts=2))
    """
)


def _start_paused_writer(path: str, folder: Path, die: bool = False) -> subprocess.Popen:
    started, go = folder / "started", folder / "go"
    code = _PAUSED_WRITER.format(
        root=str(ROOT), path=path, started=str(started), go=str(go), die=die
    )
    child = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not started.exists():
        assert child.poll() is None, child.stderr.read().decode()[-2000:]
        assert time.monotonic() < deadline, "the writer never reached its merge"
        time.sleep(0.05)
    return child


def test_a_second_writer_is_refused_while_the_first_is_writing(tmp_path):
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE")
    table.write(datagen.trips(list(range(6)), seed=1, ts=1))
    first = _start_paused_writer(path, tmp_path)
    try:
        timeline = HudiTable.open(path).timeline()
        with pytest.raises(ConcurrentWriterError) as refused:
            HudiTable.open(path).write(datagen.trips([3, 4], seed=3, ts=3))
        message = str(refused.value)
        assert "another writer is active" in message
        assert "hoodie.write.concurrency.mode=optimistic_concurrency_control" in message
        assert "hoodie.write.lock.provider" in message
        assert HudiTable.open(path).timeline() == timeline  # the pending write left alone
    finally:
        (tmp_path / "go").touch()
        assert first.wait(timeout=120) == 0, first.stderr.read().decode()[-2000:]
    rows = HudiTable.open(path).read()
    values = {r["uuid"]: r["ts"] for r in rows.to_pylist()}
    assert values == {f"key-{k:06d}": 2 if k < 3 else 1 for k in range(6)}  # its write landed
    oracle.assert_same_table(rows, oracle.snapshot(path))


def test_a_writer_that_died_is_rolled_back_by_the_next_at_once(tmp_path):
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE")
    table.write(datagen.trips(list(range(6)), seed=1, ts=1))
    (tmp_path / "go").touch()  # the child dies as soon as it reaches its merge
    dead = _start_paused_writer(path, tmp_path, die=True)
    assert dead.wait(timeout=120) == -signal.SIGKILL
    assert any(not i.is_completed for i in HudiTable.open(path).timeline())
    # Its heartbeat file is recent, but names a process that is gone: no waiting for expiry.
    HudiTable.open(path).write(datagen.trips([3], seed=3, ts=3))
    actions = [(i.action, i.is_completed) for i in HudiTable.open(path).timeline()]
    assert actions == [("commit", True), ("rollback", True), ("commit", True)]
    values = {r["uuid"]: r["ts"] for r in HudiTable.open(path).read().to_pylist()}
    assert values == {f"key-{k:06d}": 3 if k == 3 else 1 for k in range(6)}
