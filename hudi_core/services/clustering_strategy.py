"""Which file slices a clustering rewrites: Apache Hudi's size-based plan strategy.

Partitions are chosen first: the listed ones (hoodie.clustering.plan.strategy.partition.
selected) or those matching the regex (partition.regex.pattern, a full match), then the
filter mode (hoodie.clustering.plan.partition.filter.mode): NONE; RECENT_DAYS, the latest
`daybased.lookback.partitions` in reverse order after skipping `daybased.skipfromlatest.
partitions`; SELECTED_PARTITIONS, those between `cluster.begin.partition` and
`cluster.end.partition` (inclusive, either bound optional); DAY_ROLLING, the partitions
whose place in sorted order is the hour of the day modulo 24, so that a day of hourly runs
covers them all.

In each partition the latest slices whose base file is smaller than `small.file.limit` are
candidates, never a file group a pending compaction or clustering holds. Largest first,
they fill groups of at most `max.bytes.per.group` (a slice without a base file counts as a
full file of hoodie.parquet.max.file.size), each rewritten into ceil(size /
`target.file.max.bytes`) file groups; a last group of one slice is kept only with sort
columns or `single.group.clustering.enabled` (default true). At most `max.num.groups` groups
make a plan.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from hudi_core.config import clustering_options as K
from hudi_core.config import storage_options as S
from hudi_core.config.option import Options, parse_list
from hudi_core.errors import InvalidOptionError
from hudi_core.model.clustering_plan import ClusteringGroup, ClusteringPlan, ClusteringSlice
from hudi_core.model.file_group import FileSlice
from hudi_core.services.compaction_strategy import Candidate

SORT_COLUMNS_PARAM = K.SORT_COLUMNS.key
FILTER_MODES = ("NONE", "RECENT_DAYS", "SELECTED_PARTITIONS", "DAY_ROLLING")


@dataclass(frozen=True)
class PlanSettings:
    """The plan strategy's settings, defaulting as Apache Hudi's options do."""

    small_file_limit: int = 300 << 20
    target_file_max_bytes: int = 1 << 30
    max_bytes_per_group: int = 2 << 30
    max_num_groups: int = 30
    max_file_size: int = 120 << 20  # hoodie.parquet.max.file.size
    single_group: bool = True
    sort_columns: str = ""
    filter_mode: str = "NONE"
    lookback_partitions: int = 2
    skip_from_latest: int = 0
    begin_partition: str | None = None
    end_partition: str | None = None
    regex: str | None = None
    selected: tuple[str, ...] = field(default_factory=tuple)
    preserve_commit_metadata: bool = True

    @classmethod
    def from_options(cls, opts: Options) -> PlanSettings:
        strategy = opts.get_option(K.PLAN_STRATEGY_CLASS)
        if strategy.rsplit(".", 1)[-1] != K.SIZE_BASED_PLAN.rsplit(".", 1)[-1]:
            raise InvalidOptionError(
                f"{K.PLAN_STRATEGY_CLASS.key}={strategy}: only the size-based plan strategy "
                f"({K.SIZE_BASED_PLAN}) is implemented"
            )
        selected = opts.get_option(K.PARTITION_SELECTED)
        return cls(
            small_file_limit=opts.get_option(K.SMALL_FILE_LIMIT),
            target_file_max_bytes=opts.get_option(K.TARGET_FILE_MAX_BYTES),
            max_bytes_per_group=opts.get_option(K.MAX_BYTES_PER_GROUP),
            max_num_groups=opts.get_option(K.MAX_NUM_GROUPS),
            max_file_size=opts.get_option(S.PARQUET_MAX_FILE_SIZE),
            single_group=opts.get_option(K.SINGLE_GROUP),
            sort_columns=",".join(parse_list(opts.get_option(K.SORT_COLUMNS))),
            filter_mode=opts.get_option(K.PARTITION_FILTER_MODE),
            lookback_partitions=opts.get_option(K.LOOKBACK_PARTITIONS),
            skip_from_latest=opts.get_option(K.SKIP_FROM_LATEST),
            begin_partition=opts.get_option(K.BEGIN_PARTITION),
            end_partition=opts.get_option(K.END_PARTITION),
            regex=opts.get_option(K.PARTITION_REGEX),
            selected=tuple(parse_list(selected)) if selected else (),
            preserve_commit_metadata=opts.get_option(K.PRESERVE_COMMIT_METADATA),
        )

    def __post_init__(self) -> None:
        if self.filter_mode not in FILTER_MODES:
            raise InvalidOptionError(
                f"hoodie.clustering.plan.partition.filter.mode={self.filter_mode!r} is not one "
                f"of {', '.join(FILTER_MODES)}"
            )


def plan_clustering(
    slices: Iterable[FileSlice],
    held: Collection[tuple[str, str]],
    settings: PlanSettings,
    hour: int,
) -> ClusteringPlan | None:
    """The plan over the table's latest `slices`, leaving out the file groups in `held`
    (pending compactions and clusterings); None when no group qualifies. `hour` is the hour
    of the day DAY_ROLLING picks partitions by."""
    by_partition: dict[str, list[FileSlice]] = {}
    for file_slice in slices:
        by_partition.setdefault(file_slice.partition_path, []).append(file_slice)
    groups: list[ClusteringGroup] = []
    for partition in partitions_to_cluster(by_partition, settings, hour):
        eligible = [
            s
            for s in by_partition.get(partition, [])
            if (s.partition_path, s.file_id) not in held
            and _base_size(s) < settings.small_file_limit
        ]
        groups += groups_of(eligible, settings)[: settings.max_num_groups]
    groups = groups[: settings.max_num_groups]
    if not groups:
        return None
    params = {SORT_COLUMNS_PARAM: settings.sort_columns} if settings.sort_columns else {}
    return ClusteringPlan(
        groups, strategy_params=params, preserve_hoodie_metadata=settings.preserve_commit_metadata
    )


def partitions_to_cluster(
    partitions: Iterable[str], settings: PlanSettings, hour: int
) -> list[str]:
    """The partitions a plan looks at, in the order Apache Hudi takes them."""
    if settings.selected:
        chosen = list(settings.selected)
    else:
        chosen = sorted(partitions)
        if settings.regex:
            pattern = _regex(settings.regex)
            chosen = [p for p in chosen if pattern.fullmatch(p)]
    mode = settings.filter_mode
    if mode == "RECENT_DAYS":
        latest_first = sorted(chosen, reverse=True)[max(settings.skip_from_latest, 0) :]
        keep = settings.lookback_partitions if settings.lookback_partitions > 0 else None
        return latest_first[:keep]
    if mode == "SELECTED_PARTITIONS":
        begin, end = settings.begin_partition, settings.end_partition
        return [p for p in chosen if (begin is None or p >= begin) and (end is None or p <= end)]
    if mode == "DAY_ROLLING":
        return [p for i, p in enumerate(sorted(chosen)) if i % 24 == hour]
    return chosen


def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as error:
        raise InvalidOptionError(
            f"hoodie.clustering.plan.strategy.partition.regex.pattern={pattern!r} is not a "
            f"valid regular expression: {error}"
        ) from error


def groups_of(eligible: list[FileSlice], settings: PlanSettings) -> list[ClusteringGroup]:
    """One partition's candidate slices grouped by size, largest first."""
    sized = sorted(eligible, key=lambda s: -_planned_size(s, settings))
    groups: list[list[FileSlice]] = []
    current: list[FileSlice] = []
    total = 0
    for file_slice in sized:
        size = _planned_size(file_slice, settings)
        if current and total + size > settings.max_bytes_per_group:
            groups.append(current)
            current, total = [], 0
            if len(groups) >= settings.max_num_groups:
                break
        current.append(file_slice)
        total += size
    else:
        if current and (len(current) > 1 or settings.single_group or settings.sort_columns):
            groups.append(current)
    return [_group(members, settings) for members in groups]


def _group(members: list[FileSlice], settings: PlanSettings) -> ClusteringGroup:
    size = sum(_planned_size(s, settings) for s in members)
    metrics: dict[str, float] = {}
    for file_slice in members:
        for name, value in Candidate(file_slice, settings.max_file_size).metrics().items():
            metrics[name] = metrics.get(name, 0.0) + value
    outputs = max(1, math.ceil(size / settings.target_file_max_bytes))
    return ClusteringGroup(tuple(ClusteringSlice.of(s) for s in members), outputs, metrics)


def _base_size(file_slice: FileSlice) -> int:
    return file_slice.base_file.size if file_slice.base_file is not None else 0


def _planned_size(file_slice: FileSlice, settings: PlanSettings) -> int:
    """A slice's size for grouping: its base file's, a full file's when it has none."""
    base = file_slice.base_file
    return base.size if base is not None else settings.max_file_size
