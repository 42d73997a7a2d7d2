"""The write planner: every decision of a write that does not depend on where rows live.

Both engines call it. The local engine (write.client) holds the batch in memory and hands
the planner its rows; the Spark writer keeps rows on executors and hands it counts. Either
way the planner says which stored keys the rows are looked up against, what a row whose key
is found becomes, which file groups the commit replaces, which partitions delete_partition
drops, and how rows are bucketed into file groups.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.choices import WriteOperation
from hudi_core.config import write_options as W
from hudi_core.config.option import Options
from hudi_core.engine import EngineContext
from hudi_core.errors import InvalidOptionError, WriteConflictError
from hudi_core.index.bucket_index import BucketGroups, BucketIndex
from hudi_core.keygen import KeyGenerator
from hudi_core.keygen.partition import require_safe_partition_paths
from hudi_core.model.file_group import FileSlice
from hudi_core.read.file_system_view import FileSystemView, pending_clustering_file_groups
from hudi_core.schema.meta_fields import PARTITION_PATH_FIELD, RECORD_KEY_FIELD
from hudi_core.timeline import ActiveTimeline
from hudi_core.write.append_task import AppendTask
from hudi_core.write.bucket_assigner import (
    LogTargets,
    Sizing,
    assign_bulk_inserts,
    assign_to_buckets,
    assign_upserts,
)
from hudi_core.write.bucket_plan import BucketIndexPlan, BucketPlan, plan_bucket_index, plan_buckets
from hudi_core.write.handles import CreateTask, MergeTask
from hudi_core.write.operation import KeyLookup, Replaces, commit_action, policy_for

WriteTask = CreateTask | MergeTask | AppendTask
ReplacedFileGroups = dict[str, list[str]]  # partition path -> file ids a replacecommit replaces


@dataclass(frozen=True)
class Lookup:
    """How a write's rows meet the stored keys (`kind`), and the `slices` whose base files
    hold the keys they may meet."""

    kind: KeyLookup
    slices: list[FileSlice]

    @property
    def tags(self) -> bool:
        """Rows keep the file group holding their key (an update; null: a new key)."""
        return self.kind is KeyLookup.TAG

    @property
    def drops_stored(self) -> bool:
        """Rows whose key is stored are dropped (insert with drop duplicates)."""
        return self.kind is KeyLookup.DROP_STORED


@dataclass(frozen=True)
class BatchCount:
    """Rows of a batch that share a partition, a tagged file group (None: new) and whether
    they delete; what a distributed engine collects instead of the rows."""

    partition_path: str
    file_id: str | None
    deletes: bool
    rows: int


@dataclass(frozen=True)
class BucketCount:
    """Under the bucket index: rows of a batch that share a partition, a bucket number and
    whether they delete; what a distributed engine collects instead of the rows."""

    partition_path: str
    bucket: int
    deletes: bool
    rows: int


class WritePlanner:
    """The decisions of one write, from its operation, options and the table's timeline."""

    def __init__(
        self,
        operation: WriteOperation,
        options: Options,
        timeline: ActiveTimeline,
        merge_on_read: bool,
        changelog: bool,
        key_generator: KeyGenerator,
        deletes_every_row: bool,
    ) -> None:
        self.operation = operation
        self.options = options
        self.timeline = timeline
        self.merge_on_read = merge_on_read
        self.changelog = changelog
        self.key_generator = key_generator
        self.deletes_every_row = deletes_every_row
        self.policy = policy_for(operation, options)

    # ---- what the operation is

    @property
    def action(self) -> str:
        return commit_action(self.operation, self.merge_on_read)

    @property
    def combine(self) -> bool:
        """Whether duplicate keys of the batch are pre-combined (per operation, as Hudi)."""
        if self.deletes_every_row:
            return self.options.get_option(W.COMBINE_BEFORE_DELETE)
        if self.keeps_every_change:
            return False
        return self.options.get_option(self.policy.combine_option)

    @property
    def skips_empty_batch(self) -> bool:
        """Whether an empty batch writes nothing at all: a bulk_insert of nothing is no commit;
        other operations commit empty unless hoodie.allow.empty.commit=false (delete_partition
        names its partitions in an option)."""
        if self.operation is WriteOperation.BULK_INSERT:
            return True
        if self.operation is WriteOperation.DELETE_PARTITION:
            return False
        return not self.options.get_option(W.ALLOW_EMPTY_COMMIT)

    @property
    def keeps_every_change(self) -> bool:
        """Changelog mode on merge-on-read: an upsert keeps every change of a key in the batch,
        in batch order, as Apache Hudi's Flink writer does with changelog.enabled (unless
        hoodie.combine.before.upsert is set). See write.changelog."""
        return (
            self.changelog
            and self.merge_on_read
            and self.operation is WriteOperation.UPSERT
            and not self.deletes_every_row
            and not self.options.is_set(W.COMBINE_BEFORE_UPSERT)
        )

    @property
    def tops_up_small_files(self) -> bool:
        """Whether inserts may go into existing small files: not when every change is kept
        (a merge into a base file keeps one version of a key), nor when the operation
        replaces file groups or writes sorted new ones."""
        return self.policy.uses_small_files and not self.keeps_every_change

    @property
    def shuffle_parallelism(self) -> int:
        """The operation's hoodie.*.shuffle.parallelism (0: let the engine infer it)."""
        return self.options.get_option(self.policy.parallelism_option)

    @property
    def matches_keys(self) -> bool:
        """Whether a merge into a base file replaces the stored row of a key; an insert with
        hoodie.merge.allow.duplicate.on.inserts keeps both."""
        allow = self.options.get_option(W.MERGE_ALLOW_DUPLICATE_ON_INSERTS)
        return not (self.operation is WriteOperation.INSERT and allow)

    # ---- which stored keys, which file groups

    def lookup(
        self, slices: Iterable[FileSlice], touched: set[str], every_partition: bool = False
    ) -> Lookup:
        """The slices whose stored keys the rows of `touched` partitions are looked up in;
        those of every partition for a global index (`every_partition`: keys are unique in
        the table, a row may find its key in a partition it does not name)."""
        if self.policy.lookup is KeyLookup.NONE:
            return Lookup(KeyLookup.NONE, [])
        found = [
            s for s in slices if s.base_file and (every_partition or s.partition_path in touched)
        ]
        return Lookup(self.policy.lookup, found)

    def replaced(self, slices: Iterable[FileSlice], touched: set[str]) -> ReplacedFileGroups | None:
        """The file groups the commit replaces (None: not a replacing operation). `touched`:
        the partitions the rows reach, or for delete_partition the partitions it drops."""
        whole = self.policy.replaces is Replaces.TABLE
        if self.policy.replaces is Replaces.NOTHING:
            return None
        by_partition: ReplacedFileGroups = {}
        for file_slice in slices:
            if whole or file_slice.partition_path in touched:
                by_partition.setdefault(file_slice.partition_path, []).append(file_slice.file_id)
        return by_partition

    @property
    def listed_partitions(self) -> set[str] | None:
        """delete_partition's partitions from hoodie.datasource.write.partitions.to.delete
        (None: not given, the rows name them); refuses unsafe paths."""
        listed = self.options.get_option(W.PARTITIONS_TO_DELETE)
        if not listed:
            return None
        partitions = {p.strip() for p in listed.split(",") if p.strip()}
        require_safe_partition_paths(sorted(partitions), W.PARTITIONS_TO_DELETE.key)
        return partitions

    def partitions_to_delete(self, named_by_rows: Callable[[], Iterable[str]]) -> set[str]:
        """delete_partition's partitions: the listed ones, else those the rows name (asked
        only when none are listed: rows may lack the partition fields then)."""
        partitions = self.listed_partitions
        if partitions is None:
            partitions = set(named_by_rows())
        if not partitions:
            raise InvalidOptionError(
                f"delete_partition needs {W.PARTITIONS_TO_DELETE.key} or a batch whose rows "
                "name the partitions"
            )
        return partitions

    def partition_paths(self, rows: pa.Table) -> set[str]:
        """The partition paths raw (unprepared) rows belong to."""
        return set(pc.unique(self.key_generator.partition_paths(rows)).to_pylist())

    @functools.cached_property
    def held_by_clustering(self) -> set[tuple[str, str]]:
        """File groups a pending clustering plan rewrites (one Apache Hudi scheduled, say): a
        write may neither update them nor top them up with inserts, as the clustering would
        replace them without the change."""
        return pending_clustering_file_groups(self.timeline)

    def refuse_updates_under_clustering(self, groups: Iterable[tuple[str, str]]) -> None:
        """Apache Hudi's default update strategy for file groups under pending clustering:
        the write fails (and rolls back) rather than lose its updates when the clustering
        completes."""
        held = sorted(self.held_by_clustering.intersection(groups))
        if held:
            shown = ", ".join(f"{p or '(no partition)'}/{f}" for p, f in held[:3])
            more = f" and {len(held) - 3} more" if len(held) > 3 else ""
            raise WriteConflictError(
                f"the write updates file groups a pending clustering rewrites ({shown}{more}): "
                "the clustering would replace them without these updates; the write is "
                "rolled back, retry it once the clustering has completed"
            )

    # ---- bucketing

    def log_targets(self, view: FileSystemView) -> LogTargets | None:
        """Merge-on-read: where appends go, and the file groups compaction holds."""
        if not self.merge_on_read:
            return None
        return LogTargets(view.slice_for_logs, set(view.pending_compactions))

    def tasks_for_rows(
        self,
        rows: pa.Table,
        file_ids: pa.Array,
        view: FileSystemView,
        sizing: Sizing,
        engine: EngineContext,
    ) -> list[WriteTask]:
        """The write tasks of prepared rows held in memory, tagged with `file_ids` (null: new)."""
        if self.operation is WriteOperation.DELETE_PARTITION:
            return []
        if self.policy.sorts_new_files:
            sort_by_key = self.options.get_option(W.BULK_INSERT_SORT_MODE) != "NONE"
            return assign_bulk_inserts(rows, sizing, engine, sort_by_key).tasks()
        self.refuse_updates_under_clustering(_tagged_groups(rows, file_ids))
        keep = self.keeps_every_change
        plan = assign_upserts(
            rows,
            file_ids,
            [] if self.policy.replaces is not Replaces.NOTHING else view.latest_slices(),
            sizing,
            self.tops_up_small_files,
            self.log_targets(view),
            keep,
            self.held_by_clustering,
        )
        return plan.tasks(match_keys=self.matches_keys)

    @functools.cached_property
    def bucket_index(self) -> BucketIndex | None:
        """The bucket index, when the table uses it: rows go to their key's bucket, found by
        file id, with no stored key read."""
        return BucketIndex.from_options(self.options, self.key_generator.record_key_fields)

    def bucket_groups(self, view: FileSystemView, touched: set[str]) -> BucketGroups:
        """The bucket file groups rows of `touched` partitions may go to (none for an
        operation that replaces them)."""
        assert self.bucket_index is not None
        if self.policy.replaces is not Replaces.NOTHING:
            return {}
        return self.bucket_index.file_groups(view.latest_slices(touched))

    def tasks_for_buckets(self, rows: pa.Table, view: FileSystemView) -> list[WriteTask]:
        """The write tasks of prepared rows under the bucket index: one per bucket written, no
        small-file top-ups, no size splits."""
        assert self.bucket_index is not None
        if self.operation is WriteOperation.DELETE_PARTITION:
            return []
        groups = self.bucket_groups(view, touched_partitions(rows))
        file_ids = self.bucket_index.locate(
            rows.column(PARTITION_PATH_FIELD), rows.column(RECORD_KEY_FIELD), groups
        )
        by_id = {s.file_id: s for s in groups.values()}
        updated = set(file_ids.dictionary.to_pylist()) & set(by_id)
        self.refuse_updates_under_clustering((by_id[f].partition_path, f) for f in updated)
        logs = self.log_targets(view)
        log_only = logs is not None and self.bucket_index.fixed_file_ids
        plan = assign_to_buckets(rows, file_ids, by_id, logs, self.keeps_every_change, log_only)
        return plan.tasks(match_keys=self.matches_keys)

    def buckets_for_bucket_counts(
        self, counts: Iterable[BucketCount], view: FileSystemView
    ) -> BucketIndexPlan:
        """The bucket index's plan for rows that stay where they are, from their counts per
        (partition, bucket): what tasks_for_buckets decides for rows in memory. A new bucket
        that only deletes writes nothing (its keys cannot be stored)."""
        assert self.bucket_index is not None
        written: dict[tuple[str, int], tuple[int, int]] = {}
        for count in counts:
            pair = (count.partition_path, count.bucket)
            rows, new_rows = written.get(pair, (0, 0))
            keeps = not count.deletes or self.keeps_every_change  # see assign_to_buckets
            written[pair] = (rows + count.rows, new_rows + (count.rows if keeps else 0))
        groups = self.bucket_groups(view, {partition for partition, _ in written})
        written = {p: n for p, n in written.items() if p in groups or n[1]}
        updated = [groups[p] for p in written if p in groups]
        self.refuse_updates_under_clustering((s.partition_path, s.file_id) for s in updated)
        logs = self.log_targets(view)
        return plan_bucket_index(self.bucket_index, written, groups, logs, self.keeps_every_change)

    def buckets_for_counts(
        self, counts: Iterable[BatchCount], view: FileSystemView, sizing: Sizing
    ) -> BucketPlan:
        """The buckets of rows that stay where they are, from their counts."""
        updates: dict[tuple[str, str], int] = {}
        inserts: dict[str, int] = {}
        for count in counts:
            if count.file_id is not None:
                group = (count.partition_path, count.file_id)
                updates[group] = updates.get(group, 0) + count.rows
            elif not count.deletes or self.keeps_every_change:  # see BucketPlan.every_change
                inserts[count.partition_path] = inserts.get(count.partition_path, 0) + count.rows
        self.refuse_updates_under_clustering(updates)
        return plan_buckets(
            updates,
            inserts,
            view.latest_slices(),
            sizing,
            self.log_targets(view),
            self.tops_up_small_files,
            self.keeps_every_change,
            self.held_by_clustering,
        )


def touched_partitions(rows: pa.Table) -> set[str]:
    """The partition paths prepared rows reach."""
    return set(pc.unique(rows.column(PARTITION_PATH_FIELD)).to_pylist())


def untagged(rows: pa.Table) -> pa.Array:
    return pa.nulls(rows.num_rows, pa.string())


def _tagged_groups(rows: pa.Table, file_ids: pa.Array) -> set[tuple[str, str]]:
    """(partition, file id) of the file groups the tagged rows update."""
    tagged = pc.is_valid(file_ids)
    if not pc.any(tagged).as_py():
        return set()
    pairs = pa.table(
        {"p": rows.column(PARTITION_PATH_FIELD).filter(tagged), "f": file_ids.filter(tagged)}
    )
    unique = pairs.group_by(["p", "f"]).aggregate([])
    return set(zip(unique["p"].to_pylist(), unique["f"].to_pylist(), strict=True))
