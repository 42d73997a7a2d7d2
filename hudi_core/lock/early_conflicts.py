"""Early conflict detection under optimistic concurrency (Apache Hudi's
hoodie.write.concurrency.early.conflict.detection.*): a write that is bound to conflict fails
before it writes anything, instead of at commit after all its data files were written.

Apache Hudi checks in each write handle, before it creates a marker. Here the driver checks
once, when the write starts executing: it knows every file group it planned before any task
runs (and so before any marker or data file of the write exists). It fails the write with
WriteConflictError when

- the markers of another live writer (a pending write whose heartbeat beats) name one of those
  file groups: markers are made before data files, so they show what a running write changes;
- with the transaction strategy (or hoodie.write.concurrency.early.conflict.check.commit.
  conflict), an instant that appeared since the write started changed one of them: the check
  the commit would make (lock.conflicts), made before the work instead of after it.

Under the bucket index file groups compare by bucket, as at commit. A dead writer's markers
(its heartbeat stopped) block nothing: its write is rolled back, never committed. The check
runs before this write has any marker, so two writers never fail each other by it: of two
writes on one file group, the one that starts writing second fails (Apache Hudi only looks at
writers older than the write, as its check runs while the write's own markers appear). The
transaction strategy checks under the table lock, against a timeline read under it.

Markers of a writer that checked at the same moment may not exist yet; the commit-time check
still catches that conflict, as in Apache Hudi.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from hudi_core.config import lock_options as L
from hudi_core.config.option import Options
from hudi_core.errors import WriteConflictError
from hudi_core.index.bucket_id import bucket_of_file_id
from hudi_core.lock.conflicts import FileGroupId, check_no_conflicts
from hudi_core.lock.table_lock import TableLock
from hudi_core.model.file_names import BaseFileName, LogFileName
from hudi_core.services.heartbeat import Liveness, write_is_alive
from hudi_core.storage import Storage
from hudi_core.timeline import ActiveTimeline, Instant
from hudi_core.timeline.instant import WRITE_ACTIONS
from hudi_core.write.markers import IO_TYPES, MARKER_INFIX, TEMP_FOLDER

_LOG = logging.getLogger(__name__)
_FOUND_EARLY = "found by early conflict detection, before the write wrote any data file"


@dataclass(frozen=True)
class EarlyConflictDetection:
    """How a write checks for conflicts before its tasks run (see the module doc)."""

    transactional: bool  # SimpleTransactionDirectMarkerBasedDetectionStrategy: under the lock
    check_commits: bool  # also instants that appeared since the write started
    liveness: Liveness  # which writers count as alive

    @classmethod
    def from_options(cls, options: Options) -> EarlyConflictDetection | None:
        """The detection the options ask for; None when off. The strategy is validated
        whenever detection is on; a single writer (or non-blocking concurrency) ignores it,
        as Apache Hudi does."""
        if not options.get_option(L.EARLY_CONFLICT_DETECTION_ENABLE):
            return None
        strategy = options.get_option(L.EARLY_CONFLICT_DETECTION_STRATEGY)
        mode = options.get_option(L.CONCURRENCY_MODE)
        if mode != "OPTIMISTIC_CONCURRENCY_CONTROL":
            _LOG.info(
                "%s is ignored: early conflict detection applies to %s=%s only, not %s",
                L.EARLY_CONFLICT_DETECTION_ENABLE.key,
                L.CONCURRENCY_MODE.key,
                "OPTIMISTIC_CONCURRENCY_CONTROL",
                mode,
            )
            return None
        transactional = strategy == L.TRANSACTION_DETECTION
        check_commits = options.get_option(L.EARLY_CONFLICT_CHECK_COMMIT_CONFLICT)
        return cls(transactional, transactional or check_commits, Liveness.from_options(options))

    def check(
        self,
        storage: Storage,
        started_from: ActiveTimeline,
        instant_time: str,
        planned: Iterable[FileGroupId],
        lock: TableLock,
        by_bucket: bool = False,
    ) -> None:
        """Raises WriteConflictError if the write at `instant_time`, which loaded
        `started_from` and plans to write `planned`, conflicts already (see the module doc)."""
        mine = set(planned)
        if not mine:
            return
        if self.transactional:
            with lock:
                self._check(storage, started_from, instant_time, mine, by_bucket)
        else:
            self._check(storage, started_from, instant_time, mine, by_bucket)

    def _check(
        self,
        storage: Storage,
        started_from: ActiveTimeline,
        instant_time: str,
        mine: set[FileGroupId],
        by_bucket: bool,
    ) -> None:
        current = started_from.reload()
        same = _bucket_key if by_bucket else _itself
        wanted = {same(group): group for group in mine}
        partitions = {partition for partition, _ in mine}
        for other in live_writers(storage, current, instant_time, self.liveness):
            theirs = {same(group) for group in marked_file_groups(storage, other, partitions)}
            overlap = {wanted[key] for key in wanted.keys() & theirs}
            if overlap:
                raise WriteConflictError(
                    f"write {instant_time} conflicts with {other.action} {other.timestamp}, "
                    "which is in flight (its writer is alive) and writes the same file groups: "
                    f"{_shown(overlap)}; {_FOUND_EARLY}. The write is rolled back, retry it "
                    f"once {other.timestamp} has finished"
                )
        if self.check_commits:
            try:
                check_no_conflicts(started_from, current, instant_time, mine, by_bucket)
            except WriteConflictError as conflict:
                raise WriteConflictError(f"{conflict} ({_FOUND_EARLY})") from None


def live_writers(
    storage: Storage, timeline: ActiveTimeline, instant_time: str, liveness: Liveness
) -> list[Instant]:
    """The pending writes other than `instant_time` whose writer still beats."""
    return [
        pending
        for pending in timeline.pending(WRITE_ACTIONS)
        if pending.timestamp != instant_time
        and write_is_alive(storage, pending.timestamp, liveness)
    ]


def marked_file_groups(
    storage: Storage, writer: Instant, partitions: Iterable[str]
) -> set[FileGroupId]:
    """The file groups of `partitions` that the markers of `writer` name (the files it made or
    is making there): one listing of its marker folder per partition."""
    found = set()
    for partition in partitions:
        folder = f"{TEMP_FOLDER}/{writer.timestamp}" + (f"/{partition}" if partition else "")
        for entry in storage.list_files(folder):
            data_file, _, io_type = entry.name.rpartition(MARKER_INFIX)
            file_id = _file_id(data_file) if io_type in IO_TYPES else None
            if file_id is not None:
                found.add((partition, file_id))
    return found


def _file_id(data_file: str) -> str | None:
    named = BaseFileName.parse(data_file) or LogFileName.parse(data_file)
    return named.file_id if named is not None else None


def _itself(group: FileGroupId) -> FileGroupId:
    return group


def _bucket_key(group: FileGroupId) -> FileGroupId:
    """A bucket's file groups as one: (partition, its 8-digit bucket number)."""
    partition, file_id = group
    bucket = bucket_of_file_id(file_id)
    return group if bucket is None else (partition, f"{bucket:08d}")


def _shown(groups: set[FileGroupId]) -> str:
    shown = ", ".join(f"{p or '(no partition)'}/{f}" for p, f in sorted(groups)[:3])
    return shown + (f" and {len(groups) - 3} more" if len(groups) > 3 else "")
