"""Apache Hudi's size-based clustering plan strategy: small files grouped largest first up to
the group budget, output file groups by the target size, held and large file groups left
out, and the partition filter modes."""

from __future__ import annotations

import pytest

from hudi_core.errors import InvalidOptionError
from hudi_core.model.clustering_plan import ClusteringPlan
from hudi_core.model.file_group import BaseFile, FileSlice, LogFile
from hudi_core.services.clustering_strategy import (
    PlanSettings,
    partitions_to_cluster,
    plan_clustering,
)
from hudi_core.storage import Storage

MB = 1 << 20
T = "20240101000000000"


def _slice(partition: str, file_id: str, size_mb: float | None, logs: int = 0) -> FileSlice:
    base = None
    if size_mb is not None:
        base = BaseFile(f"{partition}/{file_id}_0-1-0_{T}.parquet", int(size_mb * MB))
    file_slice = FileSlice(partition, file_id, T, base)
    log_files = [
        LogFile(f"{partition}/.{file_id}_{T}.log.{n}_0-1-0", MB) for n in range(1, logs + 1)
    ]
    return file_slice.with_log_files(log_files)


def _ids(plan: ClusteringPlan | None) -> list[list[str]]:
    assert plan is not None
    return [[s.file_id for s in group.slices] for group in plan.groups]


SMALL = PlanSettings(
    small_file_limit=50 * MB, max_bytes_per_group=100 * MB, target_file_max_bytes=40 * MB
)


def test_small_files_fill_groups_largest_first_each_sized_into_output_file_groups():
    slices = [_slice("p", f"f{i:02d}", 10 + i) for i in range(8)]  # 10..17 MB
    plan = plan_clustering(slices, set(), SMALL, hour=0)
    # 17+16+15+14+13+12+11 = 98 MB; 10 more would pass 100: a new group.
    assert _ids(plan) == [["f07", "f06", "f05", "f04", "f03", "f02", "f01"], ["f00"]]
    assert plan is not None
    assert [g.num_output_file_groups for g in plan.groups] == [3, 1]  # ceil(98/40), ceil(10/40)
    assert plan.groups[0].metrics["TOTAL_IO_READ_MB"] == 98.0
    assert plan.preserve_hoodie_metadata is True
    assert plan.strategy_params == {}


def test_large_and_held_file_groups_stay_out_and_log_only_slices_count_as_full_files():
    slices = [
        _slice("p", "big", 60),  # not below the small file limit
        _slice("p", "held", 5),  # under a pending compaction or clustering
        _slice("p", "logs", None, logs=2),  # no base file: a full max-size file
        _slice("p", "a", 5),
        _slice("p", "b", 4),
    ]
    settings = PlanSettings(**{**SMALL.__dict__, "max_file_size": 80 * MB})
    plan = plan_clustering(slices, {("p", "held")}, settings, hour=0)
    assert _ids(plan) == [["logs", "a", "b"]]
    assert plan is not None and plan.groups[0].metrics["TOTAL_LOG_FILES"] == 2.0


def test_a_last_group_of_one_slice_needs_sort_columns_or_single_group_clustering():
    slices = [
        _slice("p", "a", 30),
        _slice("p", "b", 30),
        _slice("p", "c", 30),
        _slice("p", "d", 30),
    ]
    # 30+30+30 = 90; d alone in the last group.
    assert _ids(plan_clustering(slices, set(), SMALL, 0)) == [["a", "b", "c"], ["d"]]
    single_off = PlanSettings(**{**SMALL.__dict__, "single_group": False})
    assert _ids(plan_clustering(slices, set(), single_off, 0)) == [["a", "b", "c"]]
    sorted_off = PlanSettings(**{**single_off.__dict__, "sort_columns": "x,y"})
    plan = plan_clustering(slices, set(), sorted_off, 0)
    assert _ids(plan) == [["a", "b", "c"], ["d"]]
    assert plan is not None
    assert plan.strategy_params == {"hoodie.clustering.plan.strategy.sort.columns": "x,y"}


def test_no_candidate_means_no_plan_and_the_group_count_is_capped():
    assert plan_clustering([_slice("p", "big", 60)], set(), SMALL, 0) is None
    many = [_slice(f"p{i}", "a", 10) for i in range(5)]
    capped = PlanSettings(**{**SMALL.__dict__, "max_num_groups": 3})
    assert _ids(plan_clustering(many, set(), capped, 0)) == [["a"], ["a"], ["a"]]


DAYS = ["2024/01/01", "2024/01/02", "2024/01/03", "2024/01/04", "2024/01/05"]


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (PlanSettings(), DAYS),
        (PlanSettings(filter_mode="RECENT_DAYS"), ["2024/01/05", "2024/01/04"]),
        (
            PlanSettings(filter_mode="RECENT_DAYS", lookback_partitions=2, skip_from_latest=1),
            ["2024/01/04", "2024/01/03"],
        ),
        (
            PlanSettings(
                filter_mode="SELECTED_PARTITIONS",
                begin_partition="2024/01/02",
                end_partition="2024/01/04",
            ),
            ["2024/01/02", "2024/01/03", "2024/01/04"],
        ),
        (
            PlanSettings(filter_mode="SELECTED_PARTITIONS", begin_partition="2024/01/04"),
            ["2024/01/04", "2024/01/05"],
        ),
        (PlanSettings(regex=r"2024/01/0[13]"), ["2024/01/01", "2024/01/03"]),
        (PlanSettings(regex=r"2024/01"), []),  # the whole path must match
        (
            PlanSettings(selected=("2024/01/05", "2024/01/02"), regex="nothing"),
            ["2024/01/05", "2024/01/02"],
        ),
    ],
)
def test_partition_filters(settings, expected):
    assert partitions_to_cluster(DAYS, settings, hour=0) == expected


def test_day_rolling_takes_the_partitions_of_this_hour():
    days = [f"2024/01/{d:02d}" for d in range(1, 31)]  # 30 partitions
    rolling = PlanSettings(filter_mode="DAY_ROLLING")
    assert partitions_to_cluster(days, rolling, hour=3) == ["2024/01/04", "2024/01/28"]
    assert partitions_to_cluster(days, rolling, hour=23) == ["2024/01/24"]
    covered = [p for hour in range(24) for p in partitions_to_cluster(days, rolling, hour)]
    assert sorted(covered) == days, "a day of hourly runs covers every partition once"


def test_bad_filter_settings_are_refused_by_name():
    with pytest.raises(InvalidOptionError, match="filter.mode='LATEST'"):
        PlanSettings(filter_mode="LATEST")
    with pytest.raises(InvalidOptionError, match="regex.pattern='2024/\\('"):
        partitions_to_cluster(DAYS, PlanSettings(regex="2024/("), hour=0)


def test_the_plan_round_trips_through_the_requested_file(tmp_path):
    slices = [_slice("p", f"f{i}", 10, logs=1) for i in range(3)]
    plan = plan_clustering(slices, set(), SMALL, hour=0)
    assert plan is not None
    data = plan.to_requested_bytes(Storage(str(tmp_path)))
    assert ClusteringPlan.from_requested_bytes(data) == plan
