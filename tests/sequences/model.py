"""The model a random sequence is checked against: the table's rows as a dict key -> row, each
write operation's meaning on it, and the rows as of every completed commit (for time travel,
rollback and restore)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

Row = tuple[str, str, int, int]  # (key, part, ts, val): the table's user columns
State = dict[str, Row]

OVERWRITE_WITH_LATEST = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
EVENT_TIME = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"


def rows_of(state: State) -> list[Row]:
    """The rows a read of `state` returns, in key order (what reads are compared with)."""
    return sorted(state.values())


def precombined(rows: Iterable[Row]) -> list[Row]:
    """A batch with one row per key: the largest ts wins (Apache Hudi's preCombine); the
    generator never puts two rows of one key and one ts in a batch."""
    best: dict[str, Row] = {}
    for row in rows:
        if row[0] not in best or row[2] > best[row[0]][2]:
            best[row[0]] = row
    return list(best.values())


@dataclass
class Model:
    """What the table holds now, and held at each completed data instant."""

    partitioned: bool
    payload: str = OVERWRITE_WITH_LATEST
    state: State = field(default_factory=dict)
    history: dict[str, State] = field(default_factory=dict)  # completed instant -> rows
    seen_ts: dict[str, int] = field(default_factory=dict)  # largest ts ever drawn per key
    clean_floor: str = ""  # the latest earliestCommitToRetain of a completed clean
    cleans_seen: set[str] = field(default_factory=set)

    def partition_of(self, row: Row) -> str:
        return row[1] if self.partitioned else ""

    # ---- write operations: each returns the state after it, leaving self unchanged

    def upsert(self, rows: list[Row]) -> State:
        after = dict(self.state)
        for row in precombined(rows):
            stored = after.get(row[0])
            if stored is None or self.payload != EVENT_TIME or row[2] >= stored[2]:
                after[row[0]] = row
        return after

    def insert(self, rows: list[Row]) -> State:
        """Inserts of keys the table does not hold (the generator keeps to those): Apache
        Hudi's insert of a stored key makes a duplicate with a non-global index."""
        assert not set(r[0] for r in rows) & set(self.state), "insert of a stored key"
        return {**self.state, **{r[0]: r for r in precombined(rows)}}

    def delete(self, keys: list[str]) -> State:
        return {k: r for k, r in self.state.items() if k not in set(keys)}

    def insert_overwrite(self, rows: list[Row]) -> State:
        touched = {self.partition_of(r) for r in rows}
        kept = {k: r for k, r in self.state.items() if self.partition_of(r) not in touched}
        return {**kept, **{r[0]: r for r in rows}}

    def insert_overwrite_table(self, rows: list[Row]) -> State:
        return {r[0]: r for r in rows}

    def delete_partition(self, partitions: list[str]) -> State:
        return {k: r for k, r in self.state.items() if self.partition_of(r) not in partitions}

    # ---- history

    def record(self, instant: str) -> None:
        """`instant` completed: a write's with the current rows; a compaction or clustering
        planned before later writes completed with the rows as of its instant time."""
        if instant in self.history:
            return
        later = any(i > instant for i in self.history)
        self.history[instant] = self.before(instant) if later else dict(self.state)

    def before(self, instant: str) -> State:
        """The rows as of the last completed instant before `instant` (none: empty)."""
        earlier = [i for i in self.history if i < instant]
        return dict(self.history[max(earlier)]) if earlier else {}

    def forget_after(self, instant: str, inclusive: bool) -> None:
        """Rollback and restore take instants off the timeline: no time travel to them."""
        for i in list(self.history):
            if i > instant or (inclusive and i == instant):
                del self.history[i]
