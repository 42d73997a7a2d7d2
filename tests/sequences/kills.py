"""Running a step in a forked child process that is SIGKILLed at a chosen moment."""

from __future__ import annotations

import math
import multiprocessing
import os
import pickle
import signal
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hudi_core.storage import Storage

_FORK = multiprocessing.get_context("fork")
_CHILD_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Forked:
    """How a forked step ended: `finished` when it reported back before the kill (then
    `result` or `error`, an exception), `killed` when the SIGKILL found it running."""

    finished: bool
    killed: bool
    result: Any = None
    error: BaseException | None = None


# The Storage calls that change the table: a kill "at call n" dies just before the n-th.
CHANGING_CALLS = ("write_bytes", "replace", "create_new", "move", "delete", "delete_dir")


def run_killed(work: Callable[[], Any], delay: float, at_call: int | None = None) -> Forked:
    """Runs `work` in a forked child, SIGKILLed `delay` seconds after it starts (math.inf:
    only once it finished, that is never), or (`at_call`) by itself just before its n-th
    table-changing Storage call."""
    with tempfile.TemporaryDirectory(prefix="h9-kill-") as folder:
        report = os.path.join(folder, "report")
        child = _FORK.Process(target=_child, args=(work, report, at_call), daemon=True)
        child.start()
        if math.isinf(delay):
            child.join(_CHILD_TIMEOUT_S)
        elif delay > 0:
            child.join(delay)
        killed = child.is_alive()
        if killed:
            os.kill(child.pid, signal.SIGKILL)  # type: ignore[arg-type]
        child.join(_CHILD_TIMEOUT_S)
        return _ended(report, killed)


def _ended(report: str, killed: bool) -> Forked:
    if not os.path.exists(report):
        return Forked(finished=False, killed=killed)
    with open(report, "rb") as file:
        ok, value = pickle.load(file)
    return Forked(True, killed, value if ok else None, None if ok else value)


def _die_at_call(count: int) -> None:
    calls = [0]
    for name in CHANGING_CALLS:
        original = getattr(Storage, name)

        def counted(self: Storage, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            calls[0] += 1
            if calls[0] >= count:
                os.kill(os.getpid(), signal.SIGKILL)
            return _original(self, *args, **kwargs)

        setattr(Storage, name, counted)


def _child(work: Callable[[], Any], report: str, at_call: int | None) -> None:
    if at_call is not None:
        _die_at_call(at_call)
    try:
        outcome: tuple[bool, Any] = (True, work())
    except BaseException as error:  # noqa: BLE001 - reported to the parent as it is
        error.add_note(traceback.format_exc())
        outcome = (False, error)
    try:
        payload = pickle.dumps(outcome)
    except Exception:  # noqa: BLE001 - an unpicklable error: its text
        payload = pickle.dumps((False, RuntimeError(repr(outcome[1]))))
    with open(report + ".tmp", "wb") as file:
        file.write(payload)
    os.replace(report + ".tmp", report)
    os._exit(0)
