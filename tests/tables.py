"""Test tables: the trips table every service test starts from, and what lies in it."""

from __future__ import annotations

from pathlib import Path

from hudi_core import HudiTable
from hudi_core.model.file_names import BaseFileName
from hudi_core.timeline import ActiveTimeline, avro_metadata


def create_trips_table(
    folder: Path, table_type: str, options: dict | None = None
) -> tuple[str, HudiTable]:
    """A table of datagen.trips at `folder`/trips: keyed by uuid, partitioned by city,
    ts as the precombine field."""
    path = str(folder / "trips")
    table = HudiTable.create(
        path,
        "trips",
        table_type=table_type,
        record_key_fields=["uuid"],
        partition_fields=["city"],
        precombine_field="ts",
        options=options,
    )
    return path, table


def data_files(path: str) -> set[str]:
    """Relative paths of every base and log file of the table at `path`."""
    root = Path(path)
    return {
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file()
        and ".hoodie" not in p.relative_to(root).parts
        and not p.name.startswith(".hoodie_partition_metadata")
    }


def request_clustering(path: str, partition: str) -> str:
    """A clustering plan over the partition's (first) file group, requested as Apache Hudi
    requests one; returns its instant time."""
    base = sorted((Path(path) / partition).glob("*.parquet"))[0].name
    timeline = ActiveTimeline.load(HudiTable.open(path).storage)
    instant = timeline.new_instant_time()
    input_slice = {
        "dataFilePath": f"{partition}/{base}",
        "fileId": BaseFileName.parse(base).file_id,
        "partitionPath": partition,
    }
    plan = {"inputGroups": [{"slices": [input_slice]}]}
    content = avro_metadata.serialize(
        "HoodieRequestedReplaceMetadata", {"operationType": "CLUSTER", "clusteringPlan": plan}
    )
    timeline.create_requested("replacecommit", instant, content)
    return instant
