"""Clustering end to end in one process: a copy-on-write table of many small commits and a
merge-on-read table with logs are clustered; the file groups drop to what the plan says,
every reader (ours, hudi-rs: snapshot, time travel, incremental) agrees with the model of the
writes, commit times are kept; z-order and Hilbert layouts order the rows along the curve
(against reference curves written here) and let a filter on both sort columns skip files."""

from __future__ import annotations

import json
from pathlib import Path

import fastavro
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_core import HudiTable, InvalidOptionError, ServiceError, WriteConflictError
from hudi_core.model.commit_metadata import CommitMetadata
from hudi_core.read.file_system_view import FileSystemView, clustering_plan
from hudi_core.timeline import ActiveTimeline
from tests import datagen, oracle
from tests.tables import create_trips_table, data_files, request_clustering
from tests.unit.test_space_curves import _reference_hilbert, _reference_z

SMALL_FILES = {"hoodie.parquet.small.file.limit": "0"}  # every insert makes a new file group
META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key"]


def _small_commits(tmp_path: Path, table_type: str, commits: int):
    """A trips table of `commits` small commits (4 new keys, one per city, and updates of 2
    earlier ones each); returns the path, table, the model rows by key and the instants."""
    path, table = create_trips_table(tmp_path, table_type, SMALL_FILES)
    model: dict[str, dict] = {}
    instants = []
    for i in range(commits):
        keys = list(range(4 * i, 4 * i + 4)) + ([4 * (i - 1), 4 * (i - 2) + 1] if i > 1 else [])
        batch = datagen.trips(keys, seed=i, ts=i)
        instants.append(table.write(batch))
        model.update({row["uuid"]: row for row in batch.to_pylist()})
    return path, table, model, instants


def _latest_slices(table: HudiTable) -> list:
    return FileSystemView(table.storage, ActiveTimeline.load(table.storage)).latest_slices()


def _by_key(rows: pa.Table, columns: list[str]) -> dict[str, dict]:
    return {r["_hoodie_record_key"]: {c: r[c] for c in columns} for r in rows.to_pylist()}


@pytest.mark.parametrize(("table_type", "commits"), [("COPY_ON_WRITE", 30), ("MERGE_ON_READ", 8)])
def test_clustering_rewrites_small_file_groups_and_every_reader_agrees(
    tmp_path, table_type, commits
):
    path, table, model, instants = _small_commits(tmp_path, table_type, commits)
    if table_type == "MERGE_ON_READ":
        assert any(s.log_files for s in _latest_slices(table))  # updates went to logs
    before = table.read()
    slices_before = _latest_slices(table)

    planned = table.clustering.schedule()
    assert table.clustering.pending() == [planned]
    plan = clustering_plan(ActiveTimeline.load(table.storage), planned)
    assert plan is not None and plan.preserve_hoodie_metadata
    assert plan.file_groups() == {(s.partition_path, s.file_id) for s in slices_before}
    assert table.clustering.run() == planned
    assert table.clustering.pending() == []

    slices_after = _latest_slices(table)
    assert len(slices_after) == sum(g.num_output_file_groups for g in plan.groups) == 4
    assert len(slices_before) > 4 * 4
    assert all(not s.log_files for s in slices_after)
    after = table.read()
    data = after.drop_columns([c for c in after.column_names if c.startswith("_hoodie_")])
    assert oracle.sorted_rows(data) == oracle.sorted_rows(
        pa.Table.from_pylist(list(model.values()), schema=datagen.SCHEMA)
    )
    assert _by_key(after, META) == _by_key(before, META)  # commit times and seqnos kept
    oracle.assert_same_table(after, oracle.snapshot(path), "after clustering (hudi-rs)")
    assert oracle.completed_commit_times(path) == [*instants, planned]
    # time travel to the first commit, midway and to just before the clustering; incremental
    # reads over ranges that end before, at and after it
    for instant in (instants[0], instants[len(instants) // 2], instants[-1]):
        ours, theirs = table.read(as_of=instant), oracle.snapshot(path, as_of=instant)
        oracle.assert_same_table(ours, theirs, f"as of {instant}")
    sample = [instants[len(instants) // 2], instants[-2], instants[-1], planned]
    oracle.assert_incrementals_match(table, path, sample, "clustered")
    assert table.read(query_type="incremental", begin=instants[-1]).num_rows == 0

    metadata = CommitMetadata.from_json_bytes(_completed_bytes(table, planned))
    replaced = metadata.partition_to_replace_file_ids
    assert {(p, f) for p, ids in replaced.items() for f in ids} == plan.file_groups()
    assert metadata.operation_type == "CLUSTER"
    assert sum(s.num_writes for s in metadata.write_stats()) == len(model)


def _completed_bytes(table: HudiTable, instant_time: str) -> bytes:
    timeline = ActiveTimeline.load(table.storage)
    found = timeline.find(instant_time)
    assert found is not None and found.is_completed
    return timeline.read_bytes(found)


# ---- layouts


def _points_table(tmp_path: Path, options: dict):
    """A table of 16 commits of 400 random (x, y) points over [0, 2**32), both ends present:
    the curves' coordinates are the values themselves (see test_space_curves)."""
    path = str(tmp_path / "points")
    table = HudiTable.create(path, "points", "COPY_ON_WRITE", ["uuid"], [], "ts", options)
    rng = np.random.default_rng(7)
    instants = []
    for commit in range(16):
        x, y = (rng.integers(0, 2**32, 400, dtype=np.int64) for _ in range(2))
        if commit == 0:
            x[:2], y[:2] = (0, 2**32 - 1), (2**32 - 1, 0)
        keys = [f"p{commit}-{i}" for i in range(400)]
        batch = pa.table({"uuid": keys, "x": x, "y": y, "ts": [commit] * 400})
        instants.append(table.write(batch, "insert"))
    return path, table, instants


CURVES = {"z-order": _reference_z, "hilbert": _reference_hilbert}


@pytest.mark.parametrize("strategy", sorted(CURVES))
def test_curve_layouts_order_rows_along_the_curve_and_let_filters_skip(tmp_path, strategy):
    options = {
        **SMALL_FILES,
        "hoodie.parquet.block.size": str(12 << 10),
        "hoodie.clustering.plan.strategy.target.file.max.bytes": str(1800 << 10),
        "hoodie.clustering.plan.strategy.sort.columns": "x,y",
        "hoodie.layout.optimize.strategy": strategy,
    }
    path, table, instants = _points_table(tmp_path, options)
    planned = table.clustering.schedule()
    table.clustering.run(planned)

    reference = CURVES[strategy]
    ranges = []
    slices = _latest_slices(table)
    assert len(slices) > 1
    for file_slice in slices:
        points = pq.read_table(Path(path) / file_slice.base_file.path, columns=["x", "y"])
        keys = [reference(p, 32) for p in zip(*points.to_pydict().values(), strict=True)]
        assert keys == sorted(keys), f"{file_slice.base_file.name} is not in curve order"
        ranges.append((keys[0], keys[-1]))
    ranges.sort()
    assert all(a[1] <= b[0] for a, b in zip(ranges, ranges[1:], strict=False))  # disjoint

    low, high = 2**31, 2**30  # a box of 1/16 of each column's range
    box = [
        ("x", ">=", str(low)),
        ("x", "<", str(low + 2**28)),
        ("y", ">=", str(high)),
        ("y", "<", str(high + 2**28)),
    ]
    clustered, after = table.read_with_statistics(filters=box)
    unclustered, before = table.read_with_statistics(filters=box, as_of=instants[-1])
    assert clustered.num_rows > 0
    assert oracle.sorted_rows(clustered.drop_columns(["_hoodie_file_name"])) == oracle.sorted_rows(
        unclustered.drop_columns(["_hoodie_file_name"])
    )
    oracle.assert_same_table(clustered, oracle.snapshot(path, filters=box), "box (hudi-rs)")
    assert before.files_read == before.files == 16
    assert before.row_groups_read == before.row_groups  # random points: every group may match
    assert after.files_read < after.files
    assert after.row_groups_read * 4 < before.row_groups_read


# ---- plans, writers and options


def test_a_plan_in_apache_hudis_layout_executes_here(tmp_path):
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE", SMALL_FILES)
    for i in range(3):
        table.write(datagen.trips(list(range(8 * i, 8 * i + 8)), seed=i, ts=i))
    before = _by_key(table.read(), [*META, "_hoodie_file_name"])
    # One slice, only the fields Apache Hudi always sets: no preserveHoodieMetadata, so
    # (as Apache Hudi reads such a plan) its rows take the clustering's commit time.
    planned = request_clustering(path, datagen.CITIES[0])
    plan = clustering_plan(ActiveTimeline.load(table.storage), planned)
    ((_, file_id),) = plan.file_groups()
    assert table.clustering.pending() == [planned]
    assert table.clustering.run(planned) == planned

    after = table.read()
    moved = {k for k, row in before.items() if row["_hoodie_file_name"].startswith(file_id)}
    assert moved
    for key, row in _by_key(after, META).items():
        if key in moved:
            assert row["_hoodie_commit_time"] == planned
        else:
            assert row["_hoodie_commit_time"] == before[key]["_hoodie_commit_time"]
    assert after.num_rows == len(before)
    oracle.assert_same_table(after, oracle.snapshot(path), "hudi plan executed (hudi-rs)")


def test_an_update_to_a_file_group_under_our_plan_fails_until_it_ran(tmp_path):
    path, table, model, _ = _small_commits(tmp_path, "COPY_ON_WRITE", 4)
    planned = table.clustering.schedule()
    rows, timeline = table.read(), table.timeline()
    update = datagen.trips([0], seed=99, ts=99)
    with pytest.raises(WriteConflictError, match="pending clustering rewrites"):
        table.write(update)
    assert table.read() == rows
    assert [i for i in table.timeline() if i.action != "rollback"] == timeline
    table.clustering.run(planned)
    table.write(update)
    assert table.read(filters=[("uuid", "=", "key-000000")]).column("ts").to_pylist() == [99]
    oracle.assert_same_table(table.read(), oracle.snapshot(path))


def test_clustering_without_preserving_commit_metadata_stamps_its_instant(tmp_path):
    path, table, _, instants = _small_commits(tmp_path, "COPY_ON_WRITE", 3)
    planned = table.clustering.schedule({"hoodie.clustering.preserve.commit.metadata": "false"})
    table.clustering.run(planned)
    rows = table.read()
    assert set(rows.column("_hoodie_commit_time").to_pylist()) == {planned}
    seqnos = rows.column("_hoodie_commit_seqno").to_pylist()
    assert len(set(seqnos)) == len(seqnos) and all(s.startswith(planned) for s in seqnos)
    assert table.read(query_type="incremental", begin=instants[-1]).num_rows == len(seqnos)
    oracle.assert_same_table(rows, oracle.snapshot(path))


def test_inline_clustering_runs_every_max_commits_writes(tmp_path):
    inline = {
        **SMALL_FILES,
        "hoodie.clustering.inline": "true",
        "hoodie.clustering.inline.max.commits": "3",
    }
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE", inline)
    for i in range(7):
        table.write(datagen.trips(list(range(4 * i, 4 * i + 4)), seed=i, ts=i))
    actions = [i.action for i in table.timeline() if i.is_completed]
    assert actions == ["commit"] * 3 + ["replacecommit"] + ["commit"] * 3 + ["replacecommit"] + [
        "commit"
    ]
    oracle.assert_same_table(table.read(), oracle.snapshot(path))


def test_scheduling_inline_only_plans(tmp_path):
    options = {
        **SMALL_FILES,
        "hoodie.clustering.schedule.inline": "true",
        "hoodie.clustering.inline.max.commits": "2",
    }
    path, table = create_trips_table(tmp_path, "MERGE_ON_READ", options)
    for i in range(2):
        table.write(datagen.trips(list(range(4 * i, 4 * i + 4)), seed=i, ts=i))
    assert len(table.clustering.pending()) == 1
    assert table.clustering.run() is not None
    assert table.clustering.pending() == []


def test_nothing_to_cluster_plans_nothing(tmp_path):
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE")
    assert table.clustering.schedule() is None
    table.write(datagen.trips(list(range(8)), seed=1, ts=1))
    assert (
        table.clustering.schedule({"hoodie.clustering.plan.strategy.small.file.limit": "1"}) is None
    )
    assert table.clustering.run() is None
    assert [i.action for i in table.timeline()] == ["commit"]


def test_bad_clustering_requests_are_refused_by_name(tmp_path):
    path, table = create_trips_table(
        tmp_path,
        "MERGE_ON_READ",
        {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"},
    )
    table.write(datagen.trips(list(range(8)), seed=1, ts=1))
    with pytest.raises(ServiceError, match="bucket index"):
        table.clustering.schedule()
    _, plain = create_trips_table(tmp_path / "plain", "COPY_ON_WRITE")
    plain.write(datagen.trips(list(range(8)), seed=1, ts=1))
    for key, value, message in [
        (
            "hoodie.clustering.plan.strategy.class",
            "x.SparkSingleFileSortPlanStrategy",
            "size-based",
        ),
        ("hoodie.clustering.plan.partition.filter.mode", "WEEKLY", "filter.mode"),
        ("hoodie.layout.optimize.strategy", "spiral", "layout.optimize.strategy"),
    ]:
        with pytest.raises(InvalidOptionError, match=message):
            plain.clustering.schedule({key: value})
    assert plain.clustering.pending() == []
    planned = plain.clustering.schedule({"hoodie.clustering.plan.strategy.sort.columns": "nope"})
    with pytest.raises(InvalidOptionError, match="nope"):
        plain.clustering.run(planned)
    assert plain.clustering.pending() == [planned]  # the failed attempt kept its plan
    with pytest.raises(InvalidOptionError, match="updates.strategy"):
        plain.write(
            datagen.trips([1], seed=2, ts=2),
            options={"hoodie.clustering.updates.strategy": "x.SparkAllowUpdateStrategy"},
        )
    with pytest.raises(ServiceError, match="no clustering planned at 2001"):
        plain.clustering.run("20010101000000000")


def _record_names(schema) -> set[str]:
    """Every named record of an Avro schema (as fastavro parsed it)."""
    if isinstance(schema, list):
        return set().union(*(_record_names(s) for s in schema))
    if isinstance(schema, dict):
        names = {schema["name"]} if schema.get("type") == "record" else set()
        children = [f["type"] for f in schema.get("fields") or []]
        children += [schema[key] for key in ("items", "values") if key in schema]
        return names.union(*(_record_names(child) for child in children))
    return set()


def test_our_plan_and_commit_carry_apache_hudis_record_names_and_fields(tmp_path):
    path, table, _, _ = _small_commits(tmp_path, "COPY_ON_WRITE", 3)
    planned = table.clustering.schedule({"hoodie.clustering.plan.strategy.sort.columns": "fare"})
    hoodie = Path(path) / ".hoodie"
    with open(hoodie / f"{planned}.replacecommit.requested", "rb") as requested:
        reader = fastavro.reader(requested)
        record = next(iter(reader))
        names = _record_names(reader.writer_schema)
    assert {
        "org.apache.hudi.avro.model.HoodieRequestedReplaceMetadata",
        "org.apache.hudi.avro.model.HoodieClusteringPlan",
        "org.apache.hudi.avro.model.HoodieClusteringGroup",
        "org.apache.hudi.avro.model.HoodieSliceInfo",
        "org.apache.hudi.avro.model.HoodieClusteringStrategy",
    } <= names
    assert set(record) == {"operationType", "clusteringPlan", "extraMetadata", "version"}
    plan = record["clusteringPlan"]
    assert set(plan) == {
        "inputGroups",
        "strategy",
        "extraMetadata",
        "version",
        "preserveHoodieMetadata",
    }
    assert set(plan["inputGroups"][0]) == {
        "slices",
        "metrics",
        "numOutputFileGroups",
        "extraMetadata",
        "version",
    }
    assert set(plan["inputGroups"][0]["slices"][0]) == {
        "dataFilePath",
        "deltaFilePaths",
        "fileId",
        "partitionPath",
        "bootstrapFilePath",
        "version",
    }
    assert plan["strategy"]["strategyParams"] == {
        "hoodie.clustering.plan.strategy.sort.columns": "fare"
    }

    table.clustering.run(planned)
    completed = json.loads((hoodie / f"{planned}.replacecommit").read_text())
    assert {"partitionToWriteStats", "partitionToReplaceFileIds", "compacted"} <= set(completed)
    assert (completed["operationType"], completed["compacted"]) == ("CLUSTER", False)
    assert "schema" in completed["extraMetadata"]
    stat = next(iter(completed["partitionToWriteStats"].values()))[0]
    assert stat["prevCommit"] == "null" and stat["numInserts"] == stat["numWrites"] > 0
    assert stat["path"].endswith(f"_{planned}.parquet")


def test_cleaning_deletes_the_replaced_file_groups_once_out_of_the_window(tmp_path):
    path, table, _, _ = _small_commits(tmp_path, "COPY_ON_WRITE", 6)
    replaced = {s.base_file.path for s in _latest_slices(table)}
    planned = table.clustering.schedule()
    table.clustering.run(planned)
    rows = table.read()
    retain = {"hoodie.cleaner.commits.retained": "1"}
    table.clean(retain)
    assert replaced <= data_files(path)  # the clustering is the last commit: still retained
    table.write(datagen.trips([1000], seed=7, ts=7), "insert")
    table.write(datagen.trips([1001], seed=8, ts=8), "insert")
    assert table.clean(retain) is not None
    assert not replaced & data_files(path)
    assert table.read().num_rows == rows.num_rows + 2
    oracle.assert_same_table(table.read(), oracle.snapshot(path), "cleaned after clustering")
