"""The write planner decides, per operation, what both engines do with a batch."""

from __future__ import annotations

import pytest

from hudi_core import InvalidOptionError, PartitionPathError, WriteOperation
from hudi_core.read.file_system_view import FileSystemView
from hudi_core.timeline.instant import COMMIT, DELTA_COMMIT, REPLACE_COMMIT
from hudi_core.write.client import WriteClient
from hudi_core.write.operation import KeyLookup
from hudi_core.write.planner import BatchCount
from tests import datagen
from tests.tables import create_trips_table

SF, NY = datagen.CITIES[0], datagen.CITIES[1]


@pytest.fixture
def table(tmp_path):
    _, table = create_trips_table(tmp_path, "MERGE_ON_READ")
    table.write(datagen.trips(list(range(8)), seed=1, ts=1), "insert")
    return table


def _planner(table, operation, options=None):
    job = WriteClient(table.storage, table.config, table.engine).start(operation, options)
    return job.planner, FileSystemView(table.storage, job.timeline)


def _groups(view, partitions):
    return {
        p: sorted(s.file_id for s in view.latest_slices() if s.partition_path == p)
        for p in partitions
    }


def test_upserts_and_deletes_tag_rows_against_the_base_files_of_touched_partitions(table):
    for operation in ("upsert", "delete"):
        planner, view = _planner(table, operation)
        lookup = planner.lookup(view.latest_slices(), {SF})
        assert lookup.kind is KeyLookup.TAG and lookup.tags
        assert {s.partition_path for s in lookup.slices} == {SF}
        assert planner.replaced(view.latest_slices(), {SF}) is None
        assert planner.action == DELTA_COMMIT


def test_a_global_lookup_looks_in_every_partition(table):
    planner, view = _planner(table, "upsert", {"hoodie.index.type": "GLOBAL_SIMPLE"})
    lookup = planner.lookup(view.latest_slices(), {SF}, every_partition=True)
    assert lookup.tags
    assert {s.partition_path for s in lookup.slices} == set(datagen.CITIES)
    insert, view = _planner(table, "insert")
    assert insert.lookup(view.latest_slices(), {SF}, every_partition=True).slices == []


def test_inserts_look_keys_up_only_to_drop_duplicates(table):
    planner, view = _planner(table, "insert")
    assert planner.lookup(view.latest_slices(), {SF}).kind is KeyLookup.NONE
    assert planner.lookup(view.latest_slices(), {SF}).slices == []
    dropping, view = _planner(
        table, "insert", {"hoodie.datasource.write.insert.drop.duplicates": True}
    )
    lookup = dropping.lookup(view.latest_slices(), {SF, NY})
    assert lookup.drops_stored and not lookup.tags and len(lookup.slices) == 2
    merging, _ = _planner(table, "insert", {"hoodie.merge.allow.duplicate.on.inserts": "false"})
    assert merging.matches_keys, "a merge into a small file replaces the stored row of a key"
    assert not planner.matches_keys, "Apache Hudi's default keeps both rows"
    assert _planner(table, "upsert")[0].matches_keys


def test_overwrites_replace_the_touched_partitions_or_the_whole_table(table):
    planner, view = _planner(table, "insert_overwrite")
    slices = view.latest_slices()
    assert planner.replaced(slices, {SF}) == _groups(view, [SF])
    assert planner.lookup(slices, {SF}).slices == []
    assert not planner.tops_up_small_files
    assert planner.action == REPLACE_COMMIT
    whole, _ = _planner(table, WriteOperation.INSERT_OVERWRITE_TABLE)
    assert whole.replaced(slices, {SF}) == _groups(view, datagen.CITIES)


def test_delete_partition_takes_listed_partitions_before_the_rows(table):
    listed, view = _planner(
        table, "delete_partition", {"hoodie.datasource.write.partitions.to.delete": f"{NY}, {SF}"}
    )

    def rows_must_not_be_asked() -> list[str]:
        raise AssertionError("the listed partitions come first")

    partitions = listed.partitions_to_delete(rows_must_not_be_asked)
    assert partitions == {SF, NY}
    assert listed.replaced(view.latest_slices(), partitions) == _groups(view, [SF, NY])
    by_rows, _ = _planner(table, "delete_partition")
    assert by_rows.partitions_to_delete(lambda: [NY]) == {NY}
    with pytest.raises(InvalidOptionError, match="delete_partition needs"):
        by_rows.partitions_to_delete(lambda: [])
    unsafe, _ = _planner(
        table, "delete_partition", {"hoodie.datasource.write.partitions.to.delete": "../x"}
    )
    with pytest.raises(PartitionPathError):
        unsafe.partitions_to_delete(lambda: [])


def test_empty_batches_and_pre_combining_follow_the_operation(tmp_path):
    _, table = create_trips_table(tmp_path, "COPY_ON_WRITE")
    assert _planner(table, "bulk_insert")[0].skips_empty_batch
    assert not _planner(table, "delete_partition")[0].skips_empty_batch
    assert not _planner(table, "upsert")[0].skips_empty_batch
    no_empty = {"hoodie.allow.empty.commit": "false"}
    assert _planner(table, "upsert", no_empty)[0].skips_empty_batch
    assert _planner(table, "upsert")[0].combine
    assert not _planner(table, "insert")[0].combine
    assert _planner(table, "insert", {"hoodie.combine.before.insert": "true"})[0].combine
    assert _planner(table, "upsert")[0].action == COMMIT
    deleting = "org.apache.hudi.common.model.EmptyHoodieRecordPayload"
    options = {"hoodie.datasource.write.payload.class": deleting}
    assert _planner(table, "upsert", options)[0].combine, "deletes combine by default"
    options["hoodie.combine.before.delete"] = "false"
    assert not _planner(table, "upsert", options)[0].combine


def test_counts_plan_the_same_file_groups_rows_would(table):
    """The Spark writer's counts and the local engine's rows meet in one bucketing."""
    planner, view = _planner(table, "upsert")
    job = WriteClient(table.storage, table.config, table.engine).start("upsert", None)
    slice_ = next(s for s in view.latest_slices() if s.partition_path == SF)
    counts = [
        BatchCount(SF, slice_.file_id, False, 3),
        BatchCount(NY, None, False, 5),
        BatchCount(NY, None, True, 2),  # deletes of keys the table lacks: no work
    ]
    plan = planner.buckets_for_counts(counts, view, job.sizing)
    updates = [b for b in plan.buckets if b.updates]
    assert [(b.partition_path, b.file_id, b.append, b.updates) for b in updates] == [
        (SF, slice_.file_id, True, 3)
    ]
    assert sum(b.inserts for b in plan.buckets) == 5
    assert {b.partition_path for b in plan.buckets if b.inserts} == {NY}
