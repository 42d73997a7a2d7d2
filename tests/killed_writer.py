"""A write run in a child process that SIGKILLs itself at a chosen timeline transition."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_SCRIPT = textwrap.dedent(
    """
    import os, signal, sys
    sys.path.insert(0, {root!r})
    from hudi_core import HudiTable
    from hudi_core.timeline import ActiveTimeline
    from tests import datagen

    original = ActiveTimeline.transition

    def transition(self, instant, state, content=b""):
        if instant.action == {action!r} and state.value == {state!r}:
            os.kill(os.getpid(), signal.SIGKILL)
        return original(self, instant, state, content)

    ActiveTimeline.transition = transition
    HudiTable.open({path!r}).write(datagen.trips({keys!r}, seed=9, ts=9), operation={operation!r})
    """
)


def kill_during_write(
    path: str, action: str, state: str, keys: list[int], operation: str = "upsert"
) -> None:
    """Writes trips of `keys`, dying just before `action` moves to `state`."""
    code = _SCRIPT.format(
        root=str(ROOT), path=path, action=action, state=state, keys=keys, operation=operation
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert result.returncode == -signal.SIGKILL, result.stderr.decode()


def beating_elsewhere(heartbeat: Path) -> None:
    """Makes a heartbeat (or service attempt) file look like a live one of a writer on another
    machine: beaten just now, naming no process here, so only its time tells it is alive."""
    heartbeat.write_bytes(b"")
