"""The file system view: which file slices a reader sees as of an instant.

Built from one listing of the table's folders and the completed instants of the timeline:
a slice counts only if the instant that started it completed (files of failed or running
writes stay invisible), and file groups retired by a completed replacecommit disappear. Log
files join the slice they were written on; which of their blocks count is the log reader's
business (each block names its instant).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from hudi_core.config.table_config import METAFOLDER
from hudi_core.io.bootstrap_index import BootstrapIndex
from hudi_core.model.clustering_plan import ClusteringPlan
from hudi_core.model.commit_metadata import CommitMetadata
from hudi_core.model.compaction_plan import read_plan
from hudi_core.model.file_group import BaseFile, BootstrapSource, FileGroup, FileSlice, LogFile
from hudi_core.model.file_names import BaseFileName, LogFileName
from hudi_core.storage import FileEntry, Storage
from hudi_core.timeline import ActiveTimeline, Instant, State
from hudi_core.timeline.instant import (
    COMPACTION,
    METADATA_BOOTSTRAP_INSTANT,
    REPLACE_COMMIT,
    SAVEPOINT,
)


class FileSystemView:
    def __init__(
        self, storage: Storage, timeline: ActiveTimeline, as_of: str | None = None
    ) -> None:
        self.storage = storage
        self.timeline = timeline
        self.as_of = as_of
        writes = [i for i in timeline.completed_writes() if as_of is None or i.timestamp <= as_of]
        self.visible_instants = {i.timestamp for i in writes}
        self.timeline_start = timeline.timeline_start()
        self.pending_instants = pending_instant_times(timeline)
        self.replaced = set()
        for instant in writes:
            if instant.action == REPLACE_COMMIT:
                metadata = CommitMetadata.from_json_bytes(timeline.read_bytes(instant))
                self.replaced |= metadata.replaced_file_ids()
        self.file_groups = file_groups_on_storage(storage)

    @functools.cached_property
    def pending_compactions(self) -> dict[tuple[str, str], str]:
        """(partition, file id) of every file group a pending compaction plans -> its instant.

        Read when first asked (by writers and table services): a query does not need the
        plans, and, as in hudi-rs, a pending compaction whose plan is damaged does not stop
        one; a writer gets the plan's CorruptFileError instead.
        """
        return pending_compaction_file_groups(self.timeline)

    def is_visible(self, instant_time: str) -> bool:
        """Completed (as of the view's instant), or older than the active timeline and not
        pending: such instants were archived, and their files count, as in Apache Hudi."""
        if instant_time in self.visible_instants:
            return True
        if self.as_of is not None and instant_time > self.as_of:
            return False
        start = self.timeline_start
        return (
            start is not None and instant_time < start and instant_time not in self.pending_instants
        )

    def latest_slices(self, partitions: Iterable[str] | None = None) -> list[FileSlice]:
        """The newest visible slice of every live file group (optionally of some partitions)."""
        wanted = set(partitions) if partitions is not None else None
        slices = []
        for (partition, file_id), group in sorted(self.file_groups.items()):
            if wanted is not None and partition not in wanted:
                continue
            if (partition, file_id) in self.replaced:
                continue
            latest = group.latest_slice(self.is_visible)
            if latest is not None:
                slices.append(latest)
        return slices

    def slice_for_logs(self, partition: str, file_id: str) -> FileSlice | None:
        """Where a write's new log file for a file group goes (see FileGroup.slice_for_logs)."""
        group = self.file_groups.get((partition, file_id))
        if group is None:
            return None
        return group.slice_for_logs(
            self.pending_compactions.get((partition, file_id)), self.is_visible
        )


def pending_instant_times(timeline: ActiveTimeline) -> frozenset[str]:
    """Times of the pending instants whose files no read may see. Savepoints are left out:
    one takes the time of the commit it pins, and one cut off before it completed says nothing
    about that commit, which may be archived (Apache Hudi's archiver passes such savepoints)."""
    return frozenset(i.timestamp for i in timeline.pending() if i.action != SAVEPOINT)


def pending_compaction_file_groups(timeline: ActiveTimeline) -> dict[tuple[str, str], str]:
    """(partition, file id) of every file group in a pending compaction plan -> its instant."""
    groups: dict[tuple[str, str], str] = {}
    for instant in timeline.pending([COMPACTION]):
        for group in read_plan(timeline, instant.timestamp).file_groups():
            groups[group] = instant.timestamp
    return groups


def pending_clustering_file_groups(timeline: ActiveTimeline) -> set[tuple[str, str]]:
    """(partition, file id) of every file group a pending clustering plan rewrites."""
    groups = set()
    for instant in timeline.pending([REPLACE_COMMIT]):
        groups |= clustering_file_groups(timeline, instant.timestamp)
    return groups


def clustering_file_groups(timeline: ActiveTimeline, instant_time: str) -> set[tuple[str, str]]:
    """(partition, file id) of the file groups the clustering plan at `instant_time` rewrites
    (none for a replacecommit without one)."""
    plan = clustering_plan(timeline, instant_time)
    return plan.file_groups() if plan is not None else set()


def clustering_plan(timeline: ActiveTimeline, instant_time: str) -> ClusteringPlan | None:
    """The clustering plan of a replacecommit, None for other replacecommits."""
    requested = Instant(instant_time, REPLACE_COMMIT, State.REQUESTED)
    try:
        data = timeline.read_bytes(requested)
    except FileNotFoundError:
        return None
    source = f"{METAFOLDER}/{requested.file_name}"
    return ClusteringPlan.from_requested_bytes(data, source) if data else None


def file_groups_on_storage(storage: Storage) -> dict[tuple[str, str], FileGroup]:
    """Every file group with files on storage, committed or not, by (partition, file id)."""
    groups = _group_files(list_table_files(storage))
    skeletons = [
        group.slices[METADATA_BOOTSTRAP_INSTANT]
        for group in groups.values()
        if METADATA_BOOTSTRAP_INSTANT in group.slices
    ]
    if skeletons:
        index = BootstrapIndex.load(storage)
        for skeleton in skeletons:
            stitched = _with_bootstrap_source(skeleton, index)
            groups[(skeleton.partition_path, skeleton.file_id)].slices[
                METADATA_BOOTSTRAP_INSTANT
            ] = stitched
    return groups


def with_bootstrap_source(storage: Storage, file_slice: FileSlice) -> FileSlice:
    """A slice whose base file is a bootstrap's skeleton file, with the source file it stands
    for attached (slices rebuilt from a compaction or clustering plan)."""
    if file_slice.base_instant_time != METADATA_BOOTSTRAP_INSTANT:
        return file_slice
    return _with_bootstrap_source(file_slice, BootstrapIndex.load(storage))


def _with_bootstrap_source(file_slice: FileSlice, index: BootstrapIndex | None) -> FileSlice:
    base = file_slice.base_file
    if base is None or index is None or base.bootstrap_source is not None:
        return file_slice  # no index: a bootstrap still writing it, its slices not visible
    mapping = index.mapping_for(file_slice.partition_path, file_slice.file_id)
    if mapping is None:
        return file_slice
    source = BootstrapSource(
        mapping.source_base_path, mapping.source_partition_path, mapping.source_file_name
    )
    return FileSlice(
        file_slice.partition_path,
        file_slice.file_id,
        file_slice.base_instant_time,
        BaseFile(base.path, base.size, source),
        file_slice.log_files,
    )


def list_table_files(storage: Storage) -> list[FileEntry]:
    """Every file under the base path except those of the metadata folder."""
    files = storage.list_files("")
    for folder in storage.list_folders(""):
        if folder != METAFOLDER:
            files.extend(storage.list_files(folder, recursive=True))
    return files


def _group_files(files: list[FileEntry]) -> dict[tuple[str, str], FileGroup]:
    """File groups of base files and log files; a log file joins the slice of its base instant."""
    groups: dict[tuple[str, str], FileGroup] = {}
    logs: dict[tuple[str, str, str], list[LogFile]] = {}
    for entry in files:
        if (base := BaseFileName.parse(entry.name)) is not None:
            group = groups.setdefault(
                (entry.parent, base.file_id), FileGroup(entry.parent, base.file_id)
            )
            base_file = BaseFile(entry.path, entry.size)
            group.slices[base.instant_time] = FileSlice(
                entry.parent, base.file_id, base.instant_time, base_file
            )
        elif (log := LogFileName.parse(entry.name)) is not None:
            key = (entry.parent, log.file_id, log.base_instant_time)
            logs.setdefault(key, []).append(LogFile(entry.path, entry.size))
    for (partition, file_id, instant), log_files in logs.items():
        group = groups.setdefault((partition, file_id), FileGroup(partition, file_id))
        file_slice = group.slices.get(instant) or FileSlice(partition, file_id, instant, None)
        group.slices[instant] = file_slice.with_log_files(log_files)
    return groups
