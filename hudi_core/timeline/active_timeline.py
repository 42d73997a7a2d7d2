"""The active timeline: the instant files under .hoodie/, read and advanced one state at a time.

Each state change creates a new file (requested -> inflight -> completed) and never rewrites
one, so a reader listing `.hoodie/` sees either the old or the new state, never a torn one.
Readers only trust completed instants.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hudi_core.config.table_config import METAFOLDER
from hudi_core.errors import MissingInstantFileError, TimelineError
from hudi_core.storage import Storage
from hudi_core.timeline.content import InstantContent, parse_json_object
from hudi_core.timeline.instant import (
    COMPLETED_ACTION,
    SAVEPOINT,
    WRITE_ACTIONS,
    Instant,
    State,
)
from hudi_core.timeline.instant_time import new_instant_time


class ActiveTimeline:
    """A snapshot of the timeline as listed once; `reload()` lists again."""

    def __init__(
        self, storage: Storage, instants: Iterable[Instant], timezone: str = "LOCAL"
    ) -> None:
        self.storage = storage
        self.instants = sorted(instants)
        self.timezone = timezone  # of new instant times: LOCAL or UTC

    @classmethod
    def load(cls, storage: Storage, timezone: str = "LOCAL") -> ActiveTimeline:
        latest: dict[tuple[str, bool], Instant] = {}
        for entry in storage.list_files(METAFOLDER):
            instant = Instant.from_file_name(entry.name)
            if instant is None:
                continue
            known = latest.get(_key(instant))
            if known is None or instant.state.rank > known.state.rank:
                latest[_key(instant)] = instant
        return cls(storage, latest.values(), timezone)

    def reload(self) -> ActiveTimeline:
        return ActiveTimeline.load(self.storage, self.timezone)

    # ---- queries

    def completed(self, actions: Iterable[str] | None = None) -> list[Instant]:
        wanted = set(actions) if actions is not None else None
        return [
            i for i in self.instants if i.is_completed and (wanted is None or i.action in wanted)
        ]

    def completed_writes(self) -> list[Instant]:
        """Completed commits, deltacommits and replacecommits: what defines visible data."""
        return self.completed(WRITE_ACTIONS)

    def pending(self, actions: Iterable[str] | None = None) -> list[Instant]:
        wanted = set(actions) if actions is not None else None
        return [
            i
            for i in self.instants
            if not i.is_completed and (wanted is None or i.action in wanted)
        ]

    def timeline_start(self) -> str | None:
        """Where the active timeline begins: files of older instants not pending were
        archived, so they count as committed. As in Apache Hudi, the first completed write
        that is not savepointed: savepointed commits kept active while later ones were
        archived (hoodie.archive.beyond.savepoint) would otherwise hide those later ones.
        When every active write is savepointed (a restore leaves just that), the last one."""
        savepointed = {s.timestamp for s in self.savepoints()}
        writes = [w.timestamp for w in self.completed_writes()]
        unpinned = [w for w in writes if w not in savepointed]
        return unpinned[0] if unpinned else (writes[-1] if writes else None)

    def last_completed_write(self) -> Instant | None:
        writes = self.completed_writes()
        return writes[-1] if writes else None

    def latest_timestamp(self) -> str | None:
        return self.instants[-1].timestamp if self.instants else None

    def find(self, timestamp: str) -> Instant | None:
        """The instant at `timestamp` (not the savepoint that may share its time)."""
        return next(
            (i for i in self.instants if i.timestamp == timestamp and i.action != SAVEPOINT), None
        )

    def savepoints(self) -> list[Instant]:
        return [i for i in self.instants if i.action == SAVEPOINT and i.is_completed]

    def read_bytes(self, instant: Instant) -> InstantContent:
        """The content of an instant's file, knowing its source: parsing it names the file
        in a CorruptFileError when it is damaged."""
        path = f"{METAFOLDER}/{instant.file_name}"
        try:
            data = self.storage.read_bytes(path)
        except FileNotFoundError as exc:
            raise MissingInstantFileError(
                f"{path} does not exist: {instant} is not (or no longer) on the timeline; "
                "reload the table and retry"
            ) from exc
        return InstantContent(data, path, instant)

    def read_json(self, instant: Instant) -> dict[str, Any]:
        return parse_json_object(self.read_bytes(instant))

    # ---- transitions

    def new_instant_time(self) -> str:
        latest = self.reload().latest_timestamp()
        return new_instant_time(latest, self.timezone, table_key=self.storage.base_uri)

    def create_requested(
        self, action: str, timestamp: str, content: bytes = b"", ordered: bool = True
    ) -> Instant:
        """A new instant, requested; `ordered`: its time must come after every instant's
        (not so for a bootstrap's fixed instants, which may follow a rolled-back attempt)."""
        latest = self.reload().latest_timestamp()
        if ordered and latest is not None and timestamp.ljust(17, "0") <= latest.ljust(17, "0"):
            raise TimelineError(
                f"instant time {timestamp} is not after the latest instant {latest}; "
                "instant times must strictly increase"
            )
        instant = Instant(timestamp, action, State.REQUESTED)
        self._create(instant, content)
        return instant

    def create_inflight(self, action: str, timestamp: str, content: bytes = b"") -> Instant:
        """Starts an instant at inflight, as savepoints do: a savepoint takes the time of the
        commit it pins, so it is not checked against the latest instant."""
        instant = Instant(timestamp, action, State.INFLIGHT)
        self._create(instant, content)
        return instant

    def transition(self, instant: Instant, state: State, content: bytes = b"") -> Instant:
        """Moves `instant` to the next state; it must be in the state right before."""
        if state.rank != instant.state.rank + 1:
            raise TimelineError(f"cannot move {instant} to {state.value}")
        if not self.storage.exists(f"{METAFOLDER}/{instant.file_name}"):
            raise TimelineError(f"cannot move {instant}: it is not on the timeline")
        moved = instant.with_state(state)
        self._create(moved, content)
        return moved

    def _create(self, instant: Instant, content: bytes) -> None:
        try:
            self.storage.create_new(f"{METAFOLDER}/{instant.file_name}", content)
        except FileExistsError as exc:
            raise TimelineError(
                f"{instant} already exists on the timeline; instant files are never overwritten"
            ) from exc
        self.instants = sorted([i for i in self.instants if _key(i) != _key(instant)] + [instant])

    def delete_pending(self, instant: Instant) -> None:
        """Removes the inflight, then the requested file of an instant that was rolled back."""
        self._delete_files(instant, (State.INFLIGHT, State.REQUESTED))

    def revert_to_requested(self, instant: Instant) -> None:
        """Removes the inflight file of a failed attempt at a planned instant (compaction)."""
        self._delete_files(instant, (State.INFLIGHT,))

    def revert_to_inflight(self, instant: Instant) -> Instant:
        """Unpublishes a completed instant (deletes its completed file), the first step of
        rolling it back: readers stop seeing its data before any of its files go."""
        self._delete_files(instant, (State.COMPLETED,))
        pending_action = {v: k for k, v in COMPLETED_ACTION.items()}.get(instant.action)
        if pending_action and self.storage.exists(
            f"{METAFOLDER}/{Instant(instant.timestamp, pending_action, State.REQUESTED).file_name}"
        ):
            return Instant(instant.timestamp, pending_action, State.INFLIGHT)
        return Instant(instant.timestamp, instant.action, State.INFLIGHT)

    def delete_instant(self, instant: Instant) -> None:
        """Removes every file of an instant: completed first, requested last."""
        self._delete_files(instant, (State.COMPLETED, State.INFLIGHT, State.REQUESTED))

    def _delete_files(self, instant: Instant, states: tuple[State, ...]) -> None:
        actions = {instant.action}
        actions |= {p for p, c in COMPLETED_ACTION.items() if c == instant.action}
        actions |= {COMPLETED_ACTION.get(instant.action, instant.action)}
        for state in states:
            for action in sorted(actions):
                file_name = Instant(instant.timestamp, action, state).file_name
                self.storage.delete(f"{METAFOLDER}/{file_name}")
        self.instants = self.reload().instants


def _key(instant: Instant) -> tuple[str, bool]:
    """Instants are told apart by time, but a savepoint shares its commit's time."""
    return instant.timestamp, instant.action == SAVEPOINT
