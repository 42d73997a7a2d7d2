"""Clustering plans in `<ts>.replacecommit.requested` as Apache Hudi writes and reads them:
full file locations in the slices, the execution strategy and its parameters, the plan
inside requested replace metadata of operation CLUSTER; and Apache Hudi's own plans read."""

from __future__ import annotations

import pytest

from hudi_core.errors import CorruptFileError
from hudi_core.model.clustering_plan import (
    SORT_AND_SIZE_EXECUTION,
    ClusteringGroup,
    ClusteringPlan,
    ClusteringSlice,
)
from hudi_core.model.file_group import BaseFile, FileSlice, LogFile
from hudi_core.storage import Storage
from hudi_core.timeline import avro_metadata

BASE = "abc-0_1-0-1_20240101000000000.parquet"
LOG = ".abc-0_20240101000000000.log.1_1-0-1"


def _plan() -> ClusteringPlan:
    file_slice = FileSlice("p=1", "abc-0", "20240101000000000", BaseFile(f"p=1/{BASE}", 10))
    with_log = file_slice.with_log_files([LogFile(f"p=1/{LOG}", 5)])
    group = ClusteringGroup(
        (ClusteringSlice.of(with_log), ClusteringSlice("p=1", "def-0", "def.parquet")),
        num_output_file_groups=2,
        metrics={"TOTAL_IO_MB": 3.0},
    )
    params = {"hoodie.clustering.plan.strategy.sort.columns": "a,b"}
    return ClusteringPlan([group], strategy_params=params)


def test_a_plan_round_trips_inside_requested_replace_metadata(tmp_path):
    storage = Storage(str(tmp_path))
    data = _plan().to_requested_bytes(storage)
    assert ClusteringPlan.from_requested_bytes(data) == _plan()

    record = avro_metadata.deserialize(data)
    assert record["operationType"] == "CLUSTER"
    plan = record["clusteringPlan"]
    assert plan["strategy"]["strategyClassName"] == SORT_AND_SIZE_EXECUTION
    assert plan["strategy"]["strategyParams"] == _plan().strategy_params
    assert plan["preserveHoodieMetadata"] is True
    assert plan["version"] == 1
    (group,) = plan["inputGroups"]
    assert group["numOutputFileGroups"] == 2
    first = group["slices"][0]
    # Apache Hudi's plan strategies record full locations, as Hadoop prints them.
    assert first["dataFilePath"] == f"file:{tmp_path}/p=1/{BASE}"
    assert first["deltaFilePaths"] == [f"file:{tmp_path}/p=1/{LOG}"]
    assert (first["fileId"], first["partitionPath"], first["bootstrapFilePath"]) == (
        "abc-0",
        "p=1",
        "",
    )


def test_a_plan_apache_hudi_wrote_is_read_by_file_names():
    slice_info = {
        "dataFilePath": f"hdfs://nn:8020/warehouse/t/p=1/{BASE}",
        "deltaFilePaths": [f"hdfs://nn:8020/warehouse/t/p=1/{LOG}"],
        "fileId": "abc-0",
        "partitionPath": "p=1",
        "bootstrapFilePath": "",
        "version": 1,
    }
    no_base = {**slice_info, "dataFilePath": "", "deltaFilePaths": [], "fileId": "xyz-0"}
    group = {"slices": [slice_info, no_base], "metrics": {}, "numOutputFileGroups": 1}
    requested = {
        "operationType": "CLUSTER",
        "clusteringPlan": {
            "inputGroups": [group],
            "strategy": {"strategyClassName": "my.Strategy", "strategyParams": {}},
            "extraMetadata": {},
            "version": 1,
            "preserveHoodieMetadata": None,
        },
        "extraMetadata": {},
        "version": 1,
    }
    data = avro_metadata.serialize("HoodieRequestedReplaceMetadata", requested)
    plan = ClusteringPlan.from_requested_bytes(data)
    assert plan is not None
    first, second = plan.groups[0].slices
    assert (first.base_file, first.log_files) == (BASE, (LOG,))
    assert (second.base_file, second.log_files) == (None, ())
    assert plan.file_groups() == {("p=1", "abc-0"), ("p=1", "xyz-0")}
    assert plan.strategy_class == "my.Strategy"
    assert plan.preserve_hoodie_metadata is False, "absent from a plan: not kept"


def test_a_replace_that_is_no_clustering_has_no_plan():
    overwrite = {"operationType": "INSERT_OVERWRITE", "clusteringPlan": None, "version": 1}
    data = avro_metadata.serialize("HoodieRequestedReplaceMetadata", overwrite)
    assert ClusteringPlan.from_requested_bytes(data) is None


def test_a_slice_without_a_file_id_is_a_corrupt_plan():
    bad = {"fileId": None, "partitionPath": "p", "version": 1}
    plan = {"inputGroups": [{"slices": [bad]}], "version": 1}
    requested = {"operationType": "CLUSTER", "clusteringPlan": plan, "version": 1}
    data = avro_metadata.serialize("HoodieRequestedReplaceMetadata", requested)
    with pytest.raises(CorruptFileError, match="clustering input slice"):
        ClusteringPlan.from_requested_bytes(data, "20240101.replacecommit.requested")
