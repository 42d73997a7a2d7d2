"""An instant on the timeline (time, action, state) and its file name in table version 6."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum


class State(Enum):
    REQUESTED = "REQUESTED"
    INFLIGHT = "INFLIGHT"
    COMPLETED = "COMPLETED"

    @property
    def rank(self) -> int:
        return ("REQUESTED", "INFLIGHT", "COMPLETED").index(self.value)


COMMIT = "commit"
DELTA_COMMIT = "deltacommit"
REPLACE_COMMIT = "replacecommit"
CLEAN = "clean"
ROLLBACK = "rollback"
SAVEPOINT = "savepoint"
RESTORE = "restore"
COMPACTION = "compaction"
LOG_COMPACTION = "logcompaction"
INDEXING = "indexing"
SCHEMA_COMMIT = "schemacommit"

ACTIONS = (
    COMMIT,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    CLEAN,
    ROLLBACK,
    SAVEPOINT,
    RESTORE,
    COMPACTION,
    LOG_COMPACTION,
    INDEXING,
    SCHEMA_COMMIT,
)
# Actions whose completed instants change the data a reader sees.
WRITE_ACTIONS = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)
# A compaction completes as a commit, a log compaction as a deltacommit.
COMPLETED_ACTION = {COMPACTION: COMMIT, LOG_COMPACTION: DELTA_COMMIT}

INSTANT_TIME_FORMAT = "%Y%m%d%H%M%S"
# Apache Hudi's fixed instants of a bootstrap: the skeleton files of a metadata-only bootstrap,
# the rewritten files of a full-record one. Older than any instant a clock makes.
METADATA_BOOTSTRAP_INSTANT = "00000000000001"
FULL_BOOTSTRAP_INSTANT = "00000000000002"
BOOTSTRAP_INSTANTS = (METADATA_BOOTSTRAP_INSTANT, FULL_BOOTSTRAP_INSTANT)
_FILE_NAME = re.compile(r"^(\d{14,17})\.([a-z]+)(?:\.(requested|inflight))?$")


@dataclass(frozen=True, order=True)
class Instant:
    """One instant: `timestamp` is yyyyMMddHHmmssSSS (older tables: yyyyMMddHHmmss)."""

    timestamp: str
    action: str
    state: State

    @property
    def is_completed(self) -> bool:
        return self.state is State.COMPLETED

    def with_state(self, state: State) -> Instant:
        action = self.action
        if state is State.COMPLETED:
            action = COMPLETED_ACTION.get(action, action)
        return Instant(self.timestamp, action, state)

    @property
    def file_name(self) -> str:
        if self.state is State.COMPLETED:
            return f"{self.timestamp}.{self.action}"
        if self.state is State.INFLIGHT and self.action == COMMIT:
            return f"{self.timestamp}.inflight"  # the one irregular name of layout 1
        return f"{self.timestamp}.{self.action}.{self.state.value.lower()}"

    @classmethod
    def from_file_name(cls, name: str) -> Instant | None:
        """The instant a timeline file stands for, or None for any other file."""
        match = _FILE_NAME.match(name)
        if not match:
            return None
        timestamp, action, suffix = match.groups()
        if action == "inflight" and suffix is None:
            return cls(timestamp, COMMIT, State.INFLIGHT)
        if action not in ACTIONS:
            return None
        state = State[suffix.upper()] if suffix else State.COMPLETED
        return cls(timestamp, action, state)

    def __str__(self) -> str:
        return f"[{self.timestamp}__{self.action}__{self.state.value}]"
