"""Archival: keeping the active timeline short, as Apache Hudi's timeline archiver does.

Once more than `hoodie.keep.max.commits` completed commits are active, the oldest are moved
(every state file of each) into an archive log file until `hoodie.keep.min.commits` remain.
Archival stops before the earliest pending instant (of any action), the first savepoint
(completed, or cut off before it completed while its commit is active), the earliest commit
the last clean retained, a replacecommit whose replaced files the cleaner has not deleted
(readers would see them again), and, on merge-on-read, the delta commits the compaction
trigger still counts. Clean and rollback instants are archived by the same bounds, per action.
The archive is written before any instant file goes, so a cut-off archival leaves instants in
both places (read once) and the next run deletes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hudi_core.config import archival_options as A
from hudi_core.config import cleaner_options as CL
from hudi_core.config import compaction_options as C
from hudi_core.config import table_options as T
from hudi_core.config.option import Options
from hudi_core.config.table_config import METAFOLDER, TableConfig
from hudi_core.errors import InvalidOptionError
from hudi_core.model.commit_metadata import CommitMetadata
from hudi_core.read.file_system_view import file_groups_on_storage
from hudi_core.services.heartbeat import Liveness, claim_attempt
from hudi_core.services.retention import last_clean_retained
from hudi_core.services.savepoint import require_no_restore_in_progress
from hudi_core.services.table_service import TableService
from hudi_core.storage import Storage
from hudi_core.timeline import ActiveTimeline, Instant, State, avro_metadata
from hudi_core.timeline.archived_timeline import (
    ArchivedEntry,
    archive_folder_path,
    archive_instants,
    read_archived_instants,
)
from hudi_core.timeline.content import parse_json_object
from hudi_core.timeline.instant import (
    CLEAN,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    REPLACE_COMMIT,
    ROLLBACK,
    SAVEPOINT,
    WRITE_ACTIONS,
)
from hudi_core.write.markers import Markers

_ARCHIVAL_CLAIM = "archival"  # one archival of a table at a time
_JSON_CONTENT = (COMMIT, DELTA_COMMIT)


class Archiver(TableService):
    """`HudiTable.archive`: moves old instants to the archived timeline."""

    def __init__(
        self, storage: Storage, config: TableConfig, options: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__(storage, config, options)
        self.folder = archive_folder_path(config.options.get_option(T.ARCHIVELOG_FOLDER))

    def archive(self, options: Mapping[str, Any] | None = None) -> list[Instant]:
        """Archives what the bounds allow; returns the archived instants (completed state)."""
        opts = self._options_for_change(options, "archival")
        min_keep, max_keep = _checked_bounds(opts)
        liveness = Liveness.from_options(opts)
        with claim_attempt(self.storage, _ARCHIVAL_CLAIM, liveness, "archival"), self._lock(opts):
            timeline = self._timeline()
            require_no_restore_in_progress(timeline, "archive")
            chosen = self._commits_to_archive(timeline, opts, min_keep, max_keep)
            for action in (CLEAN, ROLLBACK):
                chosen += _oldest_beyond(timeline.completed([action]), min_keep, max_keep)
            if not chosen:
                return []
            entries = [e for instant in sorted(chosen) for e in self._entries(timeline, instant)]
            archive_instants(
                self.storage,
                self.folder,
                entries,
                opts.get_option(A.BATCH),
                self.config.timeline_timezone,
            )
            self._delete_from_active(timeline, entries)
        return sorted(chosen)

    def _commits_to_archive(
        self, timeline: ActiveTimeline, opts: Options, min_keep: int, max_keep: int
    ) -> list[Instant]:
        commits = timeline.completed(WRITE_ACTIONS)
        if len(commits) <= max_keep:
            return []
        stop = min(
            (b for b in self._bounds(timeline, opts) if b is not None),
            default=None,
        )
        # Beyond savepoints, savepointed commits go too (their savepoints stay and keep
        # pinning files): Apache Hudi keeps them, leaving a hole hudi-rs reads wrongly (it
        # takes the earliest active commit as the timeline's start).
        eligible = [c for c in commits if stop is None or c.timestamp < stop]
        return eligible[: len(commits) - min_keep]

    def _bounds(self, timeline: ActiveTimeline, opts: Options) -> list[str | None]:
        """Times from which on nothing may be archived."""
        savepoints = timeline.savepoints()
        return [
            None
            if opts.get_option(A.BEYOND_SAVEPOINT) or not savepoints
            else savepoints[0].timestamp,
            _first_pending_savepoint(timeline),
            _before_earliest_pending(timeline),
            last_clean_retained(timeline),
            _first_unclean_replacement(self.storage, timeline),
            _oldest_counted_for_compaction(timeline, opts)
            if self.config.is_merge_on_read
            else None,
        ]

    def _entries(self, timeline: ActiveTimeline, instant: Instant) -> list[ArchivedEntry]:
        """One entry per state file of the instant (a compaction's plan with both pending
        states, where Apache Hudi's archived timeline looks for it)."""
        entries = []
        plan = None
        for state in (State.REQUESTED, State.INFLIGHT, State.COMPLETED):
            for action in (
                _pending_actions(instant) if state is not State.COMPLETED else [instant.action]
            ):
                file = Instant(instant.timestamp, action, state)
                path = f"{METAFOLDER}/{file.file_name}"
                if not self.storage.exists(path):
                    continue
                data = self.storage.read_bytes(path)
                content = _content(file, data)
                if action == COMPACTION:
                    plan = content or plan
                    content = plan
                entries.append(ArchivedEntry(file, content))
        return entries

    def _delete_from_active(self, timeline: ActiveTimeline, entries: list[ArchivedEntry]) -> None:
        """Pending state files first, then completed ones oldest first: a reader never sees
        a completed instant whose earlier states are missing before later ones."""
        ordered = [e for e in entries if not e.instant.is_completed]
        ordered += [e for e in entries if e.instant.is_completed]
        for entry in ordered:
            self.storage.delete(f"{METAFOLDER}/{entry.instant.file_name}")
        for timestamp in sorted({e.instant.timestamp for e in entries}):
            Markers(self.storage, timestamp).delete_all()

    def timeline(self) -> list[Instant]:
        """Archived and active instants, each in its latest state, oldest first."""
        latest: dict[tuple[str, str], Instant] = {}
        for entry in read_archived_instants(self.storage, self.folder):
            instant = entry.instant
            key = (instant.timestamp, _family(instant))
            if key not in latest or instant.state.rank > latest[key].state.rank:
                latest[key] = instant
        active = self._timeline().instants
        for instant in active:
            latest[(instant.timestamp, _family(instant))] = instant
        return sorted(latest.values())


def _checked_bounds(opts: Options) -> tuple[int, int]:
    min_keep, max_keep = opts.get_option(A.MIN_COMMITS), opts.get_option(A.MAX_COMMITS)
    retained = opts.get_option(CL.COMMITS_RETAINED)
    if max_keep <= min_keep:
        raise InvalidOptionError(
            f"hoodie.keep.max.commits={max_keep} must be greater than "
            f"hoodie.keep.min.commits={min_keep}"
        )
    if min_keep <= retained:
        raise InvalidOptionError(
            f"hoodie.keep.min.commits={min_keep} must be greater than "
            f"hoodie.cleaner.commits.retained={retained}: the cleaner's window must stay on "
            "the active timeline"
        )
    return min_keep, max_keep


def _oldest_beyond(instants: list[Instant], min_keep: int, max_keep: int) -> list[Instant]:
    return instants[: len(instants) - min_keep] if len(instants) > max_keep else []


def _before_earliest_pending(timeline: ActiveTimeline) -> str | None:
    """With an instant pending (a write, compaction, clustering, clean, rollback, ...), the
    last commit completed before it stays (and everything after), as Apache Hudi keeps it
    before a pending write. Savepoints have their own bound (_first_pending_savepoint)."""
    pending = [i for i in timeline.pending() if i.action != SAVEPOINT]
    if not pending:
        return None
    before = [c for c in timeline.completed(WRITE_ACTIONS) if c.timestamp < pending[0].timestamp]
    return before[-1].timestamp if before else pending[0].timestamp


def _first_pending_savepoint(timeline: ActiveTimeline) -> str | None:
    """A savepoint cut off before it completed stops archival where a completed one would:
    running the savepoint again completes it, and needs its commit on the active timeline.
    (Apache Hudi's archiver passes it.) One that can no longer complete (its commit archived,
    or older than what the cleaner retains) can only be deleted (HudiTable.delete_savepoint)
    and keeps nothing."""
    active = {c.timestamp for c in timeline.completed(WRITE_ACTIONS)}
    retained = last_clean_retained(timeline)
    cut_off = [
        s.timestamp
        for s in timeline.pending([SAVEPOINT])
        if s.timestamp in active and (retained is None or s.timestamp >= retained)
    ]
    return cut_off[0] if cut_off else None


def _first_unclean_replacement(storage: Storage, timeline: ActiveTimeline) -> str | None:
    """The first replacecommit whose replaced file groups still have files: while they do,
    only the replacecommit on the active timeline keeps readers from seeing them."""
    remaining = None
    for instant in timeline.instants:
        if instant.action != REPLACE_COMMIT:
            continue
        if not instant.is_completed:
            return instant.timestamp
        if remaining is None:
            remaining = set(file_groups_on_storage(storage))
        replaced = CommitMetadata.from_json_bytes(timeline.read_bytes(instant)).replaced_file_ids()
        if replaced & remaining:
            return instant.timestamp
    return None


def _oldest_counted_for_compaction(timeline: ActiveTimeline, opts: Options) -> str | None:
    """The delta commits NUM_COMMITS triggers count since the last compaction stay."""
    if opts.get_option(C.TRIGGER_STRATEGY) not in ("NUM_COMMITS", "NUM_AND_TIME"):
        return None
    compactions = timeline.completed([COMMIT])
    since = compactions[-1].timestamp if compactions else None
    deltas = [d for d in timeline.completed([DELTA_COMMIT]) if since is None or d.timestamp > since]
    needed = opts.get_option(C.MAX_DELTA_COMMITS)
    if len(deltas) < needed:
        return since if since is not None else (deltas[0].timestamp if deltas else None)
    return deltas[len(deltas) - needed].timestamp


def _pending_actions(instant: Instant) -> list[str]:
    """The actions an instant's pending files carry (a compaction completes as a commit)."""
    if instant.action == COMMIT:
        return [COMMIT, COMPACTION]
    return [instant.action]


def _content(instant: Instant, data: bytes) -> dict[str, Any] | None:
    if not data.strip():
        return None
    if instant.action in _JSON_CONTENT or (
        instant.action == REPLACE_COMMIT and instant.state is not State.REQUESTED
    ):
        return parse_json_object(data)
    return avro_metadata.deserialize(data)


def _family(instant: Instant) -> str:
    return "savepoint" if instant.action == SAVEPOINT else "main"
