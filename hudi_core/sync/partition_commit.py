"""Partition commit: telling downstream readers that a partition is complete, as the
filesystem connector does it.

Each run collects the partitions written by commits completed since the last run (they become
pending, stamped with the run's clock), then commits those whose trigger has fired:

- process-time: the clock has passed the time the partition was first seen committed plus
  the delay;
- partition-time: the watermark (the event time up to which data is complete, given by the
  caller and never moving back) has passed the partition's own time, parsed from its values,
  plus the delay.

Committing runs the policies: `success-file` writes the success file into the partition's
folder, `metastore` registers the partition in the Hive metastore. A partition written again
after its commit is pending again and is committed again (its success file rewritten).

The state (pending and committed partitions, the last collected instant, the watermark) is
kept in .hoodie/.aux/, where Apache Hudi keeps auxiliary files and readers never look.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from hudi_core.config import hive_sync_options as HS
from hudi_core.config import partition_commit_options as PC
from hudi_core.config.option import Options
from hudi_core.errors import InvalidOptionError
from hudi_core.storage import Storage
from hudi_core.sync.partition_times import PartitionTimeExtractor
from hudi_core.sync.written_partitions import partitions_written_since
from hudi_core.timeline import ActiveTimeline

STATE_FILE = ".hoodie/.aux/partition_commit.json"
SUCCESS_FILE = "success-file"
METASTORE = "metastore"
POLICIES = (SUCCESS_FILE, METASTORE)
_LOG = logging.getLogger(__name__)
_UNITS_MS = {"ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
_UNIT_NAMES = {
    "ms": ("ms", "milli", "millis", "millisecond", "milliseconds"),
    "s": ("s", "sec", "secs", "second", "seconds"),
    "min": ("min", "mins", "minute", "minutes", "m"),
    "h": ("h", "hour", "hours"),
    "d": ("d", "day", "days"),
}


def parse_duration_ms(text: str) -> int:
    """'30 min', '1 h', '0 s', '2d', '500 ms' (a bare number is milliseconds) -> millis."""
    match = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", str(text))
    unit = match and match.group(2).lower()
    for canonical, names in _UNIT_NAMES.items():
        if match and (unit in names or (unit == "" and canonical == "ms")):
            return int(match.group(1)) * _UNITS_MS[canonical]
    raise InvalidOptionError(
        f"option {PC.DELAY.key}={text!r} is not a duration such as '0 s', '30 min', '1 h', '1 d'"
    )


def commit_policies(options: Options) -> list[str]:
    kinds = [kind.lower() for kind in options.get_option(PC.POLICY_KIND)]
    unknown = [kind for kind in kinds if kind not in POLICIES]
    if unknown:
        raise InvalidOptionError(
            f"option {PC.POLICY_KIND.key} names unknown policies {', '.join(unknown)}; "
            f"known: {', '.join(POLICIES)}"
        )
    if METASTORE in kinds and not options.get_option(HS.ENABLE):
        raise InvalidOptionError(
            f"option {PC.POLICY_KIND.key} names {METASTORE}, which registers partitions "
            f"through the Hive sync: set {HS.ENABLE.key}=true (and its mode and metastore)"
        )
    return kinds


@dataclass
class CommitState:
    last_instant: str = ""  # newest completed write whose partitions were collected
    pending: dict[str, int] = field(default_factory=dict)  # partition -> first seen, ms
    committed: dict[str, int] = field(default_factory=dict)  # partition -> committed at, ms
    watermark_ms: int | None = None

    @classmethod
    def load(cls, storage: Storage) -> CommitState:
        if not storage.exists(STATE_FILE):
            return cls()
        return cls(**json.loads(storage.read_bytes(STATE_FILE)))

    def save(self, storage: Storage) -> None:
        storage.write_bytes(STATE_FILE, json.dumps(asdict(self), sort_keys=True).encode())


@dataclass
class CommitRun:
    """What one run did: partitions newly pending, committed now, and still waiting."""

    collected: list[str]
    committed: list[str]
    waiting: list[str]
    watermark_ms: int | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class PartitionCommitter:
    """`values_of(partition)` gives a partition's values in partition-key order (the Hive
    sync's extractor); `register(partitions)` is the metastore policy (the Hive sync's)."""

    def __init__(
        self,
        storage: Storage,
        options: Options,
        partition_keys: list[str],
        values_of: Callable[[str], list[str]],
        register: Callable[[list[str]], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.storage = storage
        self.policies = commit_policies(options)
        self.trigger = options.get_option(PC.TRIGGER)
        self.delay_ms = parse_duration_ms(options.get_option(PC.DELAY))
        self.success_file = options.get_option(PC.SUCCESS_FILE_NAME)
        self.values_of = values_of
        self.register = register
        self.clock = clock
        if METASTORE in self.policies and register is None:
            raise InvalidOptionError(
                f"{PC.POLICY_KIND.key} names {METASTORE}: enable Hive sync "
                "(hoodie.datasource.hive_sync.*) so partitions can be registered"
            )
        self.times = (
            PartitionTimeExtractor(partition_keys, options)
            if self.trigger == "partition-time"
            else None
        )

    @property
    def enabled(self) -> bool:
        return bool(self.policies)

    def pending(self) -> set[str]:
        return set(CommitState.load(self.storage).pending)

    def collect(self, timeline: ActiveTimeline) -> list[str]:
        """Makes partitions written by commits completed since the last run pending."""
        state = CommitState.load(self.storage)
        written, newest = partitions_written_since(timeline, state.last_instant or None)
        fresh = sorted(p for p in written if p not in state.pending)
        now_ms = int(self.clock() * 1000)
        for partition in fresh:
            state.pending[partition] = now_ms
        state.last_instant = newest or state.last_instant
        state.save(self.storage)
        return fresh

    def commit_due(self, watermark_ms: int | None = None) -> list[str]:
        """Commits every pending partition whose trigger fired; the watermark only advances."""
        state = CommitState.load(self.storage)
        if watermark_ms is not None and (
            state.watermark_ms is None or watermark_ms > state.watermark_ms
        ):
            state.watermark_ms = watermark_ms
        now_ms = int(self.clock() * 1000)
        due = sorted(p for p, seen in state.pending.items() if self._due(p, seen, now_ms, state))
        if due:
            self._commit(due)
            for partition in due:
                del state.pending[partition]
                state.committed[partition] = now_ms
        state.save(self.storage)
        return due

    def run(self, timeline: ActiveTimeline, watermark_ms: int | None = None) -> CommitRun:
        collected = self.collect(timeline)
        committed = self.commit_due(watermark_ms)
        state = CommitState.load(self.storage)
        return CommitRun(collected, committed, sorted(state.pending), state.watermark_ms)

    def _due(self, partition: str, first_seen_ms: int, now_ms: int, state: CommitState) -> bool:
        if self.times is None:
            return now_ms >= first_seen_ms + self.delay_ms
        if state.watermark_ms is None:
            return False
        partition_ms = self.times.epoch_ms(self.values_of(partition), partition)
        return state.watermark_ms >= partition_ms + self.delay_ms

    def _commit(self, partitions: list[str]) -> None:
        if METASTORE in self.policies and self.register is not None:  # checked in __init__
            self.register(partitions)
        if SUCCESS_FILE in self.policies:
            for partition in partitions:
                name = f"{partition}/{self.success_file}" if partition else self.success_file
                self.storage.write_bytes(name, b"")
        _LOG.info("committed partitions %s (%s)", partitions, ", ".join(self.policies))
