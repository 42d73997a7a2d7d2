"""What compaction and clustering share: a plan written first (a requested instant), executed
later by any process, one attempt at a time.

Execution claims an attempt (so two runs of one plan cannot both proceed), rolls back a
previous attempt that died (keeping the plan), runs the service's job and completes the
instant under the table lock, keeping the columns writes added meanwhile in the schema it
records. A failed attempt is rolled back at once, the plan kept for the next one.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from hudi_core.choices import CompactionOrder
from hudi_core.config.option import Options
from hudi_core.config.table_config import TableConfig
from hudi_core.engine import EngineContext
from hudi_core.errors import ConcurrentServiceError, ServiceError, TimelineError
from hudi_core.lock import optimistic_concurrency
from hudi_core.model.commit_metadata import CommitMetadata
from hudi_core.schema.to_arrow import table_schema_from_commit
from hudi_core.schema.to_avro import arrow_to_avro_json
from hudi_core.services.heartbeat import Liveness, claim_attempt, release_attempts
from hudi_core.services.rollback import roll_back_dead_writes, rollback_instant
from hudi_core.services.savepoint import require_no_restore_in_progress
from hudi_core.services.table_service import TableService
from hudi_core.storage import Storage
from hudi_core.table_schema import with_concurrent_columns
from hudi_core.timeline import ActiveTimeline, Instant, State
from hudi_core.write.markers import Markers

_LOG = logging.getLogger(__name__)


class PlannedService(TableService, ABC):
    """A service executed from plans on the timeline (see the subclasses)."""

    action: ClassVar[str]  # the requested instant's action
    what: ClassVar[str]  # the service's name in messages

    def __init__(
        self,
        storage: Storage,
        config: TableConfig,
        engine: EngineContext,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(storage, config, options)
        self.engine = engine  # runs the plan's tasks

    def pending(self) -> list[str]:
        """Instant times of the plans not yet completed, oldest first."""
        return [i.timestamp for i in self._pending_plans(self._timeline())]

    def _pending_plans(self, timeline: ActiveTimeline) -> list[Instant]:
        return [i for i in timeline.pending([self.action]) if self._is_plan(timeline, i)]

    def _is_plan(self, timeline: ActiveTimeline, instant: Instant) -> bool:
        return instant.action == self.action

    def _require_applicable(self) -> None:
        """Raises ServiceError when the service has nothing to do on this kind of table."""

    @abstractmethod
    def schedule(self, options: Mapping[str, Any] | None = None) -> str | None:
        """Writes a plan if one is due; its instant time, or None."""

    @abstractmethod
    def _check_plan(self, timeline: ActiveTimeline, instant_time: str) -> None:
        """Reads the plan, so that an unreadable one stops a run before any change."""

    @abstractmethod
    def _job(self, timeline: ActiveTimeline, instant_time: str, opts: Options) -> CommitMetadata:
        """Executes the plan: writes the new files; their commit metadata."""

    def _settled_timeline(self, opts: Options) -> ActiveTimeline:
        """The timeline once dead writes are rolled back. With a single writer, a write still
        running would put files on slices the plan supersedes, so planning waits for it (as
        Apache Hudi's single-writer check does); with several, such a write fails its
        conflict check at commit instead."""
        timeline = self._timeline()
        require_no_restore_in_progress(timeline, f"schedule a {self.what}")
        timeline, running = roll_back_dead_writes(
            self.storage, timeline, Liveness.from_options(opts)
        )
        if running and not optimistic_concurrency(opts):
            raise ConcurrentServiceError(
                f"write {running[0].timestamp} is still in flight; schedule the {self.what} "
                "after it completes"
            )
        return timeline

    def run(
        self,
        instant: str | None = None,
        order: CompactionOrder | str = CompactionOrder.FIFO,
        options: Mapping[str, Any] | None = None,
    ) -> str | None:
        """Executes a plan: `instant`, else the oldest (FIFO) or newest (LIFO) pending one.
        Returns its instant time, or None when nothing is planned."""
        self._require_applicable()
        opts = self._options_for_change(options, self.what)
        require_no_restore_in_progress(self._timeline(), f"run a {self.what}")
        instant_time = self._chosen(instant, order)
        if instant_time is None:
            return None
        if _is_completed(self._timeline(), instant_time):
            return instant_time  # done before: nothing to claim, nothing to write
        liveness = Liveness.from_options(opts)
        with claim_attempt(self.storage, instant_time, liveness, self.what):
            timeline = self._timeline()
            current = timeline.find(instant_time)
            if current is not None and not current.is_completed:  # else finished meanwhile
                self._check_plan(timeline, instant_time)
                if current.state is State.INFLIGHT:  # an earlier attempt died: undo its files
                    _LOG.info("rolling back the failed attempt at %s %s", self.what, instant_time)
                    rollback_instant(self.storage, timeline, current)
                    timeline = timeline.reload()
                self._execute(timeline, instant_time, opts)
        release_attempts(self.storage, instant_time)
        return instant_time

    def _chosen(self, instant: str | None, order: CompactionOrder | str) -> str | None:
        timeline = self._timeline()
        if instant is not None:
            found = timeline.find(instant)
            if found is None or not self._is_plan(timeline, found):
                raise ServiceError(f"there is no {self.what} planned at {instant}")
            return instant
        order = CompactionOrder.parse(order, f"{self.what} order")
        pending = self._pending_plans(timeline)
        if not pending:
            return None
        return (pending[0] if order is CompactionOrder.FIFO else pending[-1]).timestamp

    def _execute(self, timeline: ActiveTimeline, instant_time: str, opts: Options) -> None:
        requested = Instant(instant_time, self.action, State.REQUESTED)
        try:
            inflight = timeline.transition(requested, State.INFLIGHT)
        except TimelineError as exc:
            raise ConcurrentServiceError(
                f"{self.what} {instant_time} was started by another process"
            ) from exc
        try:
            metadata = self._job(timeline, instant_time, opts)
            written = {s.path for s in metadata.write_stats()}
            Markers(self.storage, instant_time).reconcile(written)
            with self._lock(opts):
                self._check_no_conflicts(timeline, timeline.reload(), instant_time, metadata)
                self._keep_concurrent_columns(metadata, timeline)
                timeline.transition(inflight, State.COMPLETED, metadata.to_json_bytes())
        except BaseException as failure:
            self._roll_back_attempt(failure, timeline, instant_time)
            raise
        Markers(self.storage, instant_time).delete_all()

    def _check_no_conflicts(
        self,
        started_from: ActiveTimeline,
        current: ActiveTimeline,
        instant_time: str,
        metadata: CommitMetadata,
    ) -> None:
        """Raises when an instant completed since `started_from` makes committing `metadata`
        wrong (called under the table lock; none by default)."""

    def _keep_concurrent_columns(self, metadata: CommitMetadata, timeline: ActiveTimeline) -> None:
        """Columns writes added while the service ran stay in the schema it records."""
        if not metadata.schema:
            return
        schema = table_schema_from_commit(metadata.schema)
        widened = with_concurrent_columns(schema, timeline, timeline.reload())
        if widened is not schema:
            schema_json = arrow_to_avro_json(widened, self.config.name, False)
            metadata.extra_metadata[CommitMetadata.SCHEMA_KEY] = schema_json

    def _roll_back_attempt(
        self, failure: BaseException, timeline: ActiveTimeline, instant_time: str
    ) -> None:
        """Undoes this process's failed attempt. If that fails too, the next attempt rolls it
        back: the rollback's own failure is logged with its traceback and noted on the
        attempt's failure, which the caller sees."""
        try:
            timeline = timeline.reload()
            current = timeline.find(instant_time)
            if current is not None and current.state is State.INFLIGHT:
                rollback_instant(timeline.storage, timeline, current)
        except Exception as rollback_error:
            what = f"the failed attempt at {self.what} {instant_time}"
            _LOG.exception("rolling back %s failed too", what)
            failure.add_note(
                f"rolling back {what} failed too ({type(rollback_error).__name__}: "
                f"{rollback_error}); the next attempt rolls it back"
            )


def _is_completed(timeline: ActiveTimeline, instant_time: str) -> bool:
    found = timeline.find(instant_time)
    return found is not None and found.is_completed
