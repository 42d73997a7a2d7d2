"""Cleaning: deleting file slices no query needs any more, as Apache Hudi's cleaner does.

Planning (`<ts>.clean.requested`, an Avro HoodieCleanerPlan) picks, by the policy, the old
slices of every file group and every slice of file groups a replacecommit retired. It never
picks the latest slice of a group, a slice a pending compaction or clustering reads (nor the
slices a pending compaction starts), a savepointed slice, or (by commits or hours) a slice a
query of the retained window may read: the newest slice older than the earliest commit to
retain stays too. That holds for retired file groups as well, which Apache Hudi's cleaner
deletes whole even while a pending plan reads them: a compaction planned before an
insert_overwrite replaced its file group still runs, and its files go with the next clean.
A partition whose every file goes (all its file groups replaced, as by delete_partition) is
deleted with them. Execution deletes the files and records what went in HoodieCleanMetadata
(`<ts>.clean`). A clean cut off midway is resumed from its plan: deleting is idempotent.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from hudi_core.config import cleaner_options as CL
from hudi_core.config.option import Options
from hudi_core.config.table_config import TableConfig
from hudi_core.engine import EngineContext, LocalEngine
from hudi_core.errors import ConcurrentServiceError, InvalidOptionError, TimelineError
from hudi_core.lock import failed_writes_policy
from hudi_core.model.commit_metadata import CommitMetadata
from hudi_core.model.file_group import FileGroup, FileSlice
from hudi_core.model.file_names import PARTITION_METAFILE
from hudi_core.read.file_system_view import FileSystemView
from hudi_core.services.heartbeat import Liveness, claim_attempt, release_attempts
from hudi_core.services.retention import files_pending_plans_read, savepointed_files
from hudi_core.services.rollback import roll_back_dead_writes
from hudi_core.services.savepoint import require_no_restore_in_progress
from hudi_core.services.table_service import TableService
from hudi_core.storage import Storage
from hudi_core.timeline import ActiveTimeline, Instant, State, avro_metadata
from hudi_core.timeline.instant import CLEAN, COMPACTION, REPLACE_COMMIT, ROLLBACK, WRITE_ACTIONS
from hudi_core.timeline.instant_time import format_instant_time

PLAN_VERSION = 2
_LOG = logging.getLogger(__name__)


@dataclass
class CleanPlan:
    policy: str
    earliest_to_retain: Instant | None
    last_completed_commit: str
    files_by_partition: dict[str, list[str]] = field(default_factory=dict)  # relative paths
    partitions_to_delete: list[str] = field(default_factory=list)

    @property
    def file_count(self) -> int:
        return sum(len(files) for files in self.files_by_partition.values())

    def to_avro_bytes(self, storage: Storage) -> bytes:
        earliest = self.earliest_to_retain
        return avro_metadata.serialize(
            "HoodieCleanerPlan",
            {
                "earliestInstantToRetain": None
                if earliest is None
                else {
                    "timestamp": earliest.timestamp,
                    "action": earliest.action,
                    "state": State.COMPLETED.value,
                },
                "lastCompletedCommitTimestamp": self.last_completed_commit,
                "policy": self.policy,
                "filesToBeDeletedPerPartition": {},
                "version": PLAN_VERSION,
                "filePathsToBeDeletedPerPartition": {
                    partition: [
                        {"filePath": storage.uri_of(path), "isBootstrapBaseFile": False}
                        for path in paths
                    ]
                    for partition, paths in sorted(self.files_by_partition.items())
                },
                "partitionsToBeDeleted": list(self.partitions_to_delete),
            },
        )

    @classmethod
    def from_avro_bytes(cls, storage: Storage, data: bytes) -> CleanPlan:
        record = avro_metadata.deserialize(data)
        earliest = record.get("earliestInstantToRetain")
        files: dict[str, list[str]] = {}
        for partition, infos in (record.get("filePathsToBeDeletedPerPartition") or {}).items():
            files[partition] = [storage.relative_of(info["filePath"]) for info in infos or []]
        for partition, paths in (record.get("filesToBeDeletedPerPartition") or {}).items():
            files.setdefault(partition, []).extend(  # version 1 plans: names in the partition
                f"{partition}/{name}" if partition else name for name in paths or []
            )
        return cls(
            record.get("policy") or "",
            Instant(earliest["timestamp"], earliest["action"], State.COMPLETED)
            if earliest
            else None,
            record.get("lastCompletedCommitTimestamp") or "",
            files,
            list(record.get("partitionsToBeDeleted") or []),
        )


@dataclass(frozen=True)
class CleanBacklog:
    """What a clean run would do now (see Cleaner.plan): the cleans planned and not yet
    executed, with the files each deletes, and, under the lazy failed-writes policy, the
    pending writes and rollbacks it checks for dead writers to roll back."""

    planned: tuple[tuple[str, int], ...]  # (clean instant time, files it deletes), oldest first
    unfinished_writes: tuple[str, ...]  # instant times; empty under the eager policy

    @property
    def files(self) -> int:
        return sum(count for _, count in self.planned)

    @property
    def idle(self) -> bool:
        """Nothing for a clean to do: no plan to execute, no write that may be a dead one."""
        return not self.planned and not self.unfinished_writes


class Cleaner(TableService):
    """`HudiTable.clean`: plans and runs cleans of one table (deleting on the engine)."""

    def __init__(
        self,
        storage: Storage,
        config: TableConfig,
        options: Mapping[str, Any] | None = None,
        engine: EngineContext | None = None,
    ) -> None:
        super().__init__(storage, config, options)
        self.engine = engine or LocalEngine()

    def clean(self, options: Mapping[str, Any] | None = None) -> str | None:
        """Finishes any clean cut off earlier, then plans and runs a new one if there is
        something to delete; returns the new clean's instant time, or None."""
        opts = self._options_for_change(options, "cleaning")
        liveness = Liveness.from_options(opts)
        timeline = self._timeline()
        require_no_restore_in_progress(timeline, "clean")
        if failed_writes_policy(opts) == "LAZY":
            with self._lock(opts):
                timeline, _ = roll_back_dead_writes(self.storage, timeline.reload(), liveness)
        for pending in timeline.pending([CLEAN]):
            self._execute(pending.timestamp, liveness, opts)
        instant_time = self._schedule(opts)
        if instant_time is not None:
            self._execute(instant_time, liveness, opts)
        return instant_time

    def schedule(self, options: Mapping[str, Any] | None = None) -> str | None:
        """Writes a clean plan if the trigger is met and some file may go; its instant time."""
        return self._schedule(self._options_for_change(options, "cleaning"))

    def plan(self, options: Mapping[str, Any] | None = None) -> CleanBacklog:
        """Plans a clean if one is due (as `schedule`), deleting nothing, and says what
        `clean` would do now: an orchestrator skips an idle clean, or runs a small one
        without a cluster."""
        opts = self._options_for_change(options, "cleaning")
        require_no_restore_in_progress(self._timeline(), "clean")
        self._schedule(opts)
        timeline = self._timeline()
        planned = tuple(
            (instant.timestamp, self._planned_files(timeline, instant.timestamp))
            for instant in timeline.pending([CLEAN])
        )
        unfinished: tuple[str, ...] = ()
        if failed_writes_policy(opts) == "LAZY":
            pending = timeline.pending([*WRITE_ACTIONS, ROLLBACK])
            unfinished = tuple(instant.timestamp for instant in pending)
        return CleanBacklog(planned, unfinished)

    def _planned_files(self, timeline: ActiveTimeline, instant_time: str) -> int:
        requested = Instant(instant_time, CLEAN, State.REQUESTED)
        return CleanPlan.from_avro_bytes(self.storage, timeline.read_bytes(requested)).file_count

    def _schedule(self, opts: Options) -> str | None:
        if opts.get_option(CL.DELETE_BOOTSTRAP_BASE_FILE):
            raise InvalidOptionError(
                f"{CL.DELETE_BOOTSTRAP_BASE_FILE.key}=true is not supported: cleaning never "
                "deletes a bootstrap's source files"
            )
        with self._lock(opts):
            timeline = self._timeline()
            if not _clean_due(timeline, opts):
                return None
            plan = plan_clean(self.storage, timeline, opts)
            if plan is None or plan.file_count == 0:
                return None
            instant_time = timeline.new_instant_time()
            timeline.create_requested(CLEAN, instant_time, plan.to_avro_bytes(self.storage))
        _LOG.info("planned clean %s of %d files", instant_time, plan.file_count)
        return instant_time

    def _execute(self, instant_time: str, liveness: Liveness, opts: Options) -> None:
        with claim_attempt(self.storage, instant_time, liveness, "clean"):
            timeline = self._timeline()
            current = timeline.find(instant_time)
            if current is None or current.is_completed:
                return
            requested = Instant(instant_time, CLEAN, State.REQUESTED)
            data = timeline.read_bytes(requested)
            if current.state is State.REQUESTED:
                try:  # the inflight file repeats the plan, as Apache Hudi's does
                    current = timeline.transition(current, State.INFLIGHT, data)
                except TimelineError as exc:
                    raise ConcurrentServiceError(
                        f"clean {instant_time} was started by another process"
                    ) from exc
            plan = CleanPlan.from_avro_bytes(self.storage, data)
            metadata = _delete_files(self.storage, plan, instant_time, self.engine)
            completed = avro_metadata.serialize("HoodieCleanMetadata", metadata)
            with self._lock(opts):
                timeline.transition(current, State.COMPLETED, completed)
        release_attempts(self.storage, instant_time)


def _clean_due(timeline: ActiveTimeline, opts: Options) -> bool:
    """NUM_COMMITS: enough completed commits since the last clean's last commit."""
    since = ""
    for clean in reversed(timeline.completed([CLEAN])):
        metadata = avro_metadata.deserialize(timeline.read_bytes(clean))
        since = metadata.get("lastCompletedCommitTimestamp") or ""
        break
    commits = [i for i in timeline.completed(WRITE_ACTIONS) if i.timestamp > since]
    return len(commits) >= opts.get_option(CL.MAX_COMMITS)


# ---- planning


def plan_clean(storage: Storage, timeline: ActiveTimeline, opts: Options) -> CleanPlan | None:
    """The files the policy lets go now, or None when the policy keeps everything."""
    policy = opts.get_option(CL.POLICY)
    earliest = _earliest_to_retain(timeline, policy, opts)
    if policy != "KEEP_LATEST_FILE_VERSIONS" and earliest is None:
        return None
    last_commit = timeline.last_completed_write()
    plan = CleanPlan(policy, earliest, last_commit.timestamp if last_commit else "")
    view = FileSystemView(storage, timeline)
    pick = _SlicePicker(
        view,
        savepointed_files(timeline),
        files_pending_plans_read(timeline),
        policy,
        earliest.timestamp if earliest else None,
        opts.get_option(CL.FILE_VERSIONS_RETAINED),
    )
    retired = _replaced_groups(timeline)
    for (partition, file_id), group in sorted(view.file_groups.items()):
        files = plan.files_by_partition.setdefault(partition, [])
        replaced_at = retired.get((partition, file_id))
        if replaced_at is not None:
            files += pick.retired_files(group, replaced_at)
        else:
            files += pick.old_files(group)
    plan.partitions_to_delete = _emptied_partitions(view, plan)
    return plan


def _emptied_partitions(view: FileSystemView, plan: CleanPlan) -> list[str]:
    """Partitions the plan deletes every data file of (all their file groups were replaced,
    as by delete_partition, and none is pending or savepointed): Apache Hudi's cleaner
    deletes the partition folder too."""
    files: dict[str, set[str]] = {}
    for (partition, _), group in view.file_groups.items():
        files.setdefault(partition, set()).update(_SlicePicker._files(group.slices.values()))
    return sorted(
        partition
        for partition, paths in files.items()
        if partition and paths <= set(plan.files_by_partition.get(partition, ()))
    )


def _earliest_to_retain(timeline: ActiveTimeline, policy: str, opts: Options) -> Instant | None:
    completed = timeline.completed(WRITE_ACTIONS)
    if policy == "KEEP_LATEST_BY_HOURS":
        hours = opts.get_option(CL.HOURS_RETAINED)
        now = (
            datetime.now(UTC).replace(tzinfo=None) if timeline.timezone == "UTC" else datetime.now()
        )
        cutoff = format_instant_time(now - timedelta(hours=hours))
        return next((i for i in completed if i.timestamp >= cutoff), None)
    if policy == "KEEP_LATEST_FILE_VERSIONS":
        return None
    retained = opts.get_option(CL.COMMITS_RETAINED)
    if len(completed) <= retained:
        return None
    nth = completed[len(completed) - retained]
    pending = timeline.pending([*WRITE_ACTIONS, COMPACTION])
    if pending and pending[0].timestamp < nth.timestamp:
        # A pending instant may still need what came before it: retain from there.
        before = [i for i in completed if i.timestamp < pending[0].timestamp]
        return before[-1] if before else None
    return nth


def _replaced_groups(timeline: ActiveTimeline) -> dict[tuple[str, str], str]:
    """(partition, file id) retired by a completed replacecommit -> the replacecommit's time."""
    replaced = {}
    for instant in timeline.completed([REPLACE_COMMIT]):
        metadata = CommitMetadata.from_json_bytes(timeline.read_bytes(instant))
        for group in metadata.replaced_file_ids():
            replaced[group] = instant.timestamp
    return replaced


@dataclass
class _SlicePicker:
    """Which slices of one file group the policy deletes."""

    view: FileSystemView
    savepointed: set[str]
    planned: set[str]  # paths of the files pending compaction and clustering plans read
    policy: str
    earliest: str | None  # the earliest commit to retain (by commits or hours)
    versions_retained: int

    def retired_files(self, group: FileGroup, replaced_at: str) -> list[str]:
        """A replaced file group goes whole once its replacement is out of the window, but
        for what a pending plan still reads: such slices go with a later clean."""
        if self.earliest is not None and replaced_at >= self.earliest:
            return []
        compaction_base = self._pending_compaction_base(group)
        return self._files(
            s
            for s in group.slices.values()
            if not self._savepointed(s)
            and not self._planned(s)
            and (compaction_base is None or s.base_instant_time < compaction_base)
        )

    def old_files(self, group: FileGroup) -> list[str]:
        slices = self._committed_slices(group)
        if not slices:
            return []
        compaction_base = self._pending_compaction_base(group)
        unpinned = [
            s for s in slices if compaction_base is None or s.base_instant_time < compaction_base
        ]
        if self.policy == "KEEP_LATEST_FILE_VERSIONS":
            doomed = self._beyond_versions(unpinned, pending_compaction=compaction_base is not None)
        else:
            doomed = self._outside_window(slices, unpinned)
        return self._files(s for s in doomed if not self._planned(s))

    def _beyond_versions(
        self, slices: list[FileSlice], pending_compaction: bool
    ) -> list[FileSlice]:
        keep = self.versions_retained - (1 if pending_compaction else 0)
        # The newest `keep` slices stay, savepointed or not (as in Apache Hudi, a savepointed
        # slice counts as a version kept); older ones go unless savepointed.
        return [s for s in slices[max(keep, 0) :] if not self._savepointed(s)]

    def _outside_window(
        self, slices: list[FileSlice], candidates: list[FileSlice]
    ) -> list[FileSlice]:
        assert self.earliest is not None
        latest = slices[0].base_instant_time
        before = [s.base_instant_time for s in slices if s.base_instant_time < self.earliest]
        last_before = before[0] if before else None
        return [
            s
            for s in candidates
            if s.base_instant_time not in (latest, last_before)
            and s.base_instant_time < self.earliest
            and not self._savepointed(s)
        ]

    def _committed_slices(self, group: FileGroup) -> list[FileSlice]:
        """The group's slices newest first: those of completed writes, and the one a pending
        compaction starts (files of failed or running writes are the rollback's business)."""
        pending = self.view.pending_compactions.get((group.partition_path, group.file_id))
        return [
            group.slices[instant]
            for instant in sorted(group.slices, reverse=True)
            if self.view.is_visible(instant) or instant == pending
        ]

    def _pending_compaction_base(self, group: FileGroup) -> str | None:
        """The base instant of the slice a pending compaction of this group reads: it and
        newer slices stay."""
        pending = self.view.pending_compactions.get((group.partition_path, group.file_id))
        if pending is None:
            return None
        older = [i for i in group.slices if i < pending and self.view.is_visible(i)]
        return max(older, default=pending)

    def _planned(self, file_slice: FileSlice) -> bool:
        """Whether a pending compaction or clustering plan reads a file of the slice (the
        whole slice stays: its newer log files are read on top of the planned ones)."""
        return any(path in self.planned for path in self._files([file_slice]))

    def _savepointed(self, file_slice: FileSlice) -> bool:
        names = [f.name for f in file_slice.log_files]
        if file_slice.base_file is not None:
            names.append(file_slice.base_file.name)
        return any(name in self.savepointed for name in names)

    @staticmethod
    def _files(slices: Iterable[FileSlice]) -> list[str]:
        paths = []
        for file_slice in slices:
            if file_slice.base_file is not None:
                paths.append(file_slice.base_file.path)
            paths.extend(f.path for f in file_slice.log_files)
        return paths


# ---- execution


def _delete_files(
    storage: Storage, plan: CleanPlan, instant_time: str, engine: EngineContext
) -> dict[str, Any]:
    """Deletes the planned files, a task per partition on the engine; the clean metadata."""
    started = time.monotonic()
    work = [(p, paths) for p, paths in sorted(plan.files_by_partition.items())]
    done = engine.map(functools.partial(_delete_partition_files, storage=storage), work)
    emptied = [p for p in plan.partitions_to_delete if _holds_no_data(storage, p)]
    partitions: dict[str, dict[str, Any]] = {}
    for (partition, paths), (deleted, failed) in zip(work, done, strict=True):
        partitions[partition] = {
            "partitionPath": partition,
            "policy": plan.policy,
            "deletePathPatterns": [p.rsplit("/", 1)[-1] for p in paths],
            "successDeleteFiles": deleted,
            "failedDeleteFiles": failed,
            "isPartitionDeleted": partition in emptied,
        }
    for partition in emptied:
        storage.delete_dir(partition)  # what is left: the partition metadata file
    earliest = plan.earliest_to_retain
    return {
        "startCleanTime": instant_time,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": sum(len(p["successDeleteFiles"]) for p in partitions.values()),
        "earliestCommitToRetain": earliest.timestamp if earliest else "",
        "lastCompletedCommitTimestamp": plan.last_completed_commit,
        "partitionMetadata": partitions,
        "version": PLAN_VERSION,
        "bootstrapPartitionMetadata": {},
    }


def _holds_no_data(storage: Storage, partition: str) -> bool:
    """Whether a partition the plan empties holds nothing but its metadata file now. A clean
    resumed after a kill runs its plan late: writes since may have put files in the partition
    again, and deleting the folder would delete them (Apache Hudi deletes it regardless)."""
    return all(
        entry.path.rsplit("/", 1)[-1].startswith(PARTITION_METAFILE)
        for entry in storage.list_files(partition, recursive=True)
    )


def _delete_partition_files(
    work: tuple[str, list[str]], storage: Storage
) -> tuple[list[str], list[str]]:
    """(deleted, failed) file names of one partition's planned files."""
    deleted: list[str] = []
    failed: list[str] = []
    for path in work[1]:
        try:
            # A file already gone (a resumed clean) is a failed delete, as Java's fs.delete
            # returning false records it.
            gone_now = storage.delete(path)
        except OSError:
            gone_now = False
        (deleted if gone_now else failed).append(path.rsplit("/", 1)[-1])
    return deleted, failed
