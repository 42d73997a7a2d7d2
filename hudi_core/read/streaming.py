"""Streaming reads: a table's commits as a stream, each micro-batch an incremental read.

An offset is a completed write instant (commit, deltacommit or replacecommit): the
micro-batch (start, end] holds what the commits after `start` up to `end` changed, as an
incremental read of that range returns it (merged rows, or every change in changelog mode).
Offsets are strings that compare as instants do; BEFORE_FIRST stands before every commit.

The latest offset never passes a write still pending (Apache Hudi's BLOCK handling of hollow
commits): a writer that started before another finished would otherwise complete behind the
stream's back and its commit be skipped forever. Pending compactions and clusterings do not
block: their rows keep the commit times of the writes they rewrite.

A micro-batch needs its commits' history: commits archived or files cleaned before the
stream got to them fail the batch with IncrementalHistoryError, unless
hoodie.datasource.read.incr.fallback.fulltablescan.enable lets it scan the whole table
(rows whose commit time is in range). A stream starting at `earliest` always may: its first
batch is everything the table holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hudi_core.choices import QueryType
from hudi_core.config import read_options as R
from hudi_core.config.option import Options
from hudi_core.config.table_config import TableConfig
from hudi_core.engine import EngineContext
from hudi_core.errors import InstantTimeError, InvalidOptionError
from hudi_core.read.file_system_view import clustering_plan
from hudi_core.read.reader import ReadPlan, ReadRequest, TableReader, normalize_instant
from hudi_core.storage import Storage
from hudi_core.timeline import ActiveTimeline, Instant
from hudi_core.timeline.instant import (
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    LOG_COMPACTION,
    REPLACE_COMMIT,
)

BEFORE_FIRST = "0" * 17
EARLIEST = "earliest"
LATEST = "latest"


class CommitStream:
    """The offsets of one streaming read of a table, and the read of each micro-batch."""

    def __init__(
        self,
        storage: Storage,
        config: TableConfig,
        engine: EngineContext,
        options: Mapping[str, Any],
    ) -> None:
        self.storage = storage
        self.config = config
        self.engine = engine
        self.options = {key: str(value) for key, value in options.items()}
        parsed = Options(config.properties, self.options)
        self.start = parsed.get_option(R.STREAMING_START_OFFSET).strip()
        self.max_instants = parsed.get_option(R.STREAMING_MAX_INSTANTS)
        if self.max_instants < 0:
            raise InvalidOptionError(
                f"option {R.STREAMING_MAX_INSTANTS.key}={self.max_instants} must be 0 (no "
                "limit) or a number of commits"
            )
        self.changelog = parsed.get_option(R.CHANGELOG_READ)
        if self.changelog and not config.changelog:
            raise InvalidOptionError(
                f"{R.CHANGELOG_READ.key}=true needs a table that keeps every change "
                "(created with hoodie.allow.operation.metadata.field=true); this one keeps "
                "only the latest state of each record"
            )

    def initial_offset(self) -> str:
        """Where a new query starts (hoodie.datasource.streaming.startOffset): before the
        first commit (earliest), at the newest one (latest), or just before an instant."""
        if self.start.lower() == EARLIEST:
            return BEFORE_FIRST
        if self.start.lower() == LATEST:
            return self.latest_offset(BEFORE_FIRST, limited=False)
        try:
            instant = normalize_instant(self.start)
        except InstantTimeError as exc:
            raise InvalidOptionError(
                f"option {R.STREAMING_START_OFFSET.key}={self.start!r}: use earliest, latest "
                f"or an instant time ({exc})"
            ) from exc
        return _just_before(instant)

    def latest_offset(self, start: str, limited: bool = True) -> str:
        """The newest completed write after `start` a micro-batch may end at (see
        `readable_commits`); `start` itself when there is nothing new."""
        ready = self.readable_commits(start, limited)
        return ready[-1] if ready else start

    def readable_commits(self, start: str = "", limited: bool = True) -> list[str]:
        """The completed writes after `start` a micro-batch may take, oldest first: not past
        a pending write, and (when `limited`) at most max.instants.per.trigger of them."""
        timeline = ActiveTimeline.load(self.storage, self.config.timeline_timezone)
        ready = [i.timestamp for i in _readable_writes(timeline) if i.timestamp > start]
        return ready[: self.max_instants] if limited and self.max_instants else ready

    def plan(self, start: str, end: str) -> ReadPlan | None:
        """The read of the micro-batch (start, end]; None for a table never written."""
        options = {**self.options, R.QUERY_TYPE.key: QueryType.INCREMENTAL.value}
        if start == BEFORE_FIRST:  # everything up to `end`: a scan of the table serves too
            options[R.INCREMENTAL_FULL_SCAN_FALLBACK.key] = "true"
        request = ReadRequest(
            query_type=QueryType.INCREMENTAL,
            begin=start,
            end=end,
            options=options,
            require_history=True,
        )
        return TableReader(self.storage, self.config, self.engine).plan(request)


def _readable_writes(timeline: ActiveTimeline) -> list[Instant]:
    """Completed writes before the first pending write that is no compaction or clustering."""
    blocking = [i.timestamp for i in timeline.pending() if _blocks_stream(timeline, i)]
    writes = timeline.completed_writes()
    if not blocking:
        return writes
    return [i for i in writes if i.timestamp < min(blocking)]


def _blocks_stream(timeline: ActiveTimeline, instant: Instant) -> bool:
    if instant.action in (COMPACTION, LOG_COMPACTION):
        return False
    if instant.action == REPLACE_COMMIT:  # a clustering, or a write that replaces files
        return clustering_plan(timeline, instant.timestamp) is None
    return instant.action in (COMMIT, DELTA_COMMIT)


def _just_before(instant: str) -> str:
    """The offset whose next micro-batch starts with the commit at `instant`."""
    padded = instant.ljust(17, "0")
    return str(int(padded) - 1).zfill(17) if int(padded) else BEFORE_FIRST
