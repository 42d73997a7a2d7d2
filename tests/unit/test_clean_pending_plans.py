"""Cleaning beside pending compaction and clustering plans: a clean never deletes what a plan
still reads, even in file groups an insert_overwrite replaced since; a run whose planned file
is gone anyway fails naming it, except in a replaced file group, which no snapshot reads any
more and whose operation is skipped so that the plan completes."""

from __future__ import annotations

from pathlib import Path

import pytest

from hudi_core import HudiTable
from hudi_core.errors import MissingDataFileError
from hudi_core.model.compaction_plan import read_plan
from hudi_core.model.file_names import BaseFileName, LogFileName
from hudi_core.read.file_system_view import clustering_plan
from hudi_core.timeline import ActiveTimeline
from tests import datagen, oracle
from tests.tables import create_trips_table, data_files

CITY = "san_francisco"
KEYS = list(range(0, 80, 4))
ELSEWHERE = "chennai"
OTHER_KEYS = list(range(1003, 1043, 4))
ONE_VERSION = {
    "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
    "hoodie.cleaner.fileversions.retained": 1,
}
EVERY_DELTA_COMMIT = {"hoodie.compact.inline.max.delta.commits": 1}
ARCHIVE = {
    "hoodie.keep.min.commits": 2,
    "hoodie.keep.max.commits": 3,
    "hoodie.cleaner.commits.retained": 1,
}


def _write(
    table: HudiTable,
    model: dict[str, int],
    seed: int,
    keys: list[int] = KEYS,
    city: str = CITY,
    operation: str = "upsert",
) -> str:
    """Writes rows of `keys` with ts=seed, and applies the write to `model` (uuid -> ts)."""
    batch = datagen.trips(keys, seed=seed, ts=seed, cities=[city])
    if operation == "insert_overwrite":  # the partition's rows are these only
        for uuid in [u for u in model if u.startswith(city)]:
            del model[uuid]
    model.update({f"{city}/{u}": seed for u in batch.column("uuid").to_pylist()})
    return table.write(batch, operation=operation)


def _assert_reads(table: HudiTable, path: str, model: dict[str, int], context: str) -> None:
    """Our read holds exactly the model's rows (each key once, its latest ts), as hudi-rs's."""
    ours = table.read()
    rows = zip(
        ours.column("city").to_pylist(),
        ours.column("uuid").to_pylist(),
        ours.column("ts").to_pylist(),
        strict=True,
    )
    assert sorted(f"{c}/{u}={t}" for c, u, t in rows) == sorted(
        f"{k}={t}" for k, t in model.items()
    ), context
    oracle.assert_same_table(ours, oracle.snapshot(path), f"hudi-rs {context}")


def _planned_compaction_files(path: str, instant_time: str) -> set[str]:
    timeline = ActiveTimeline.load(HudiTable.open(path).storage)
    files = set()
    for op in read_plan(timeline, instant_time).operations:
        names = [*op.log_files] if op.base_file is None else [op.base_file, *op.log_files]
        files |= {f"{op.partition_path}/{name}" for name in names}
    return files


def _file_id(name: str) -> str | None:
    parsed = BaseFileName.parse(name) or LogFileName.parse(name)
    return parsed.file_id if parsed is not None else None


def _files_of_group(path: str, file_id: str) -> set[str]:
    return {f for f in data_files(path) if _file_id(f.rsplit("/", 1)[-1]) == file_id}


def _archived(table: HudiTable) -> list[str]:
    return [i.timestamp for i in table.archive(ARCHIVE)]


# ---- what a clean keeps


def test_clean_keeps_a_replaced_file_group_a_pending_compaction_reads(tmp_path):
    path, table = create_trips_table(
        tmp_path, "MERGE_ON_READ", {**ONE_VERSION, **EVERY_DELTA_COMMIT}
    )
    model: dict[str, int] = {}
    _write(table, model, 1)
    _write(table, model, 2)  # a log on the slice
    compaction = table.compaction.schedule()
    planned = _planned_compaction_files(path, compaction)
    (retired_group,) = {_file_id(f.rsplit("/", 1)[-1]) for f in planned}
    _write(table, model, 3, operation="insert_overwrite")  # replaces the planned group
    for seed in range(4, 7):
        _write(table, model, seed, KEYS[:5])

    table.clean()

    assert planned <= data_files(path)  # Apache Hudi's cleaner would delete them all
    _assert_reads(table, path, model, "after the clean")
    assert table.compaction.run() == compaction
    assert table.compaction.pending() == []
    _assert_reads(table, path, model, "after the compaction")
    # Done, the compaction no longer pins the retired group: the next clean takes it whole.
    _write(table, model, 7, KEYS[:3])
    assert table.clean() is not None
    assert _files_of_group(path, retired_group) == set()
    _assert_reads(table, path, model, "after the next clean")
    assert compaction in _archived(table)  # archival is no longer held up
    _assert_reads(table, path, model, "after archiving")


def test_clean_keeps_a_replaced_file_group_a_pending_clustering_reads(tmp_path):
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE", ONE_VERSION)
    model: dict[str, int] = {}
    _write(table, model, 1)
    _write(table, model, 2, KEYS[:5])
    clustering = table.clustering.schedule()
    timeline = ActiveTimeline.load(table.storage)
    plan = clustering_plan(timeline, clustering)
    assert plan is not None
    planned = {
        s.path_of(s.base_file) for g in plan.groups for s in g.slices if s.base_file is not None
    }
    assert planned
    _write(table, model, 3, operation="insert_overwrite")  # replaces the planned group
    _write(table, model, 4, KEYS[:5])

    table.clean()

    assert planned <= data_files(path)
    assert table.clustering.pending() == [clustering]
    _assert_reads(table, path, model, "after the clean")


# ---- runs whose planned files are gone


@pytest.mark.parametrize("lost", ["base", "log"])
def test_a_compaction_whose_planned_file_is_gone_fails_naming_it(tmp_path, lost):
    path, table = create_trips_table(tmp_path, "MERGE_ON_READ", EVERY_DELTA_COMMIT)
    model: dict[str, int] = {}
    _write(table, model, 1)
    _write(table, model, 2, KEYS[:5])
    compaction = table.compaction.schedule()
    (op,) = read_plan(ActiveTimeline.load(table.storage), compaction).operations
    name = op.base_file if lost == "base" else op.log_files[0]
    assert name is not None
    Path(path, op.partition_path, name).unlink()  # deleted outside Hudi
    before = data_files(path)

    with pytest.raises(MissingDataFileError, match=f"compaction {compaction}.*{name}"):
        table.compaction.run()

    assert table.compaction.pending() == [compaction]  # the plan is kept
    assert data_files(path) == before  # the failed attempt was rolled back


def test_a_plan_whose_replaced_file_group_lost_its_files_completes(tmp_path):
    """As an earlier cleaner left it: a pending compaction of a file group an insert_overwrite
    replaced, whose files that clean deleted. No snapshot reads the group any more: its
    operation is skipped, the rest of the plan runs, and archival goes on."""
    path, table = create_trips_table(tmp_path, "MERGE_ON_READ", EVERY_DELTA_COMMIT)
    model: dict[str, int] = {}
    _write(table, model, 1)
    _write(table, model, 1, OTHER_KEYS, ELSEWHERE)
    _write(table, model, 2, KEYS[:5])
    _write(table, model, 2, OTHER_KEYS[:5], ELSEWHERE)
    compaction = table.compaction.schedule()
    planned = _planned_compaction_files(path, compaction)
    assert {f.split("/")[0] for f in planned} == {CITY, ELSEWHERE}
    (retired_group,) = {_file_id(f.rsplit("/", 1)[-1]) for f in planned if f.startswith(CITY)}
    _write(table, model, 3, operation="insert_overwrite")
    for file in _files_of_group(path, retired_group):
        Path(path, file).unlink()  # what the earlier clean did
    _write(table, model, 4, KEYS[:5])
    _assert_reads(table, path, model, "before the compaction")

    assert table.compaction.run() == compaction

    assert table.compaction.pending() == []
    compacted = {
        f
        for f in data_files(path)
        if (b := BaseFileName.parse(f.rsplit("/", 1)[-1])) is not None
        and b.instant_time == compaction
    }
    assert [f.split("/")[0] for f in compacted] == [ELSEWHERE]  # nothing for the lost group
    _assert_reads(table, path, model, "after the compaction")
    _write(table, model, 5, OTHER_KEYS[:3], ELSEWHERE)
    assert compaction in _archived(table)
    _assert_reads(table, path, model, "after archiving")


def test_a_clustering_whose_planned_file_is_gone_fails_naming_it(tmp_path):
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE")
    model: dict[str, int] = {}
    _write(table, model, 1)
    clustering = table.clustering.schedule()
    plan = clustering_plan(ActiveTimeline.load(table.storage), clustering)
    assert plan is not None
    planned = plan.groups[0].slices[0]
    assert planned.base_file is not None
    Path(path, planned.path_of(planned.base_file)).unlink()  # deleted outside Hudi

    with pytest.raises(MissingDataFileError, match=planned.base_file):
        table.clustering.run()

    assert table.clustering.pending() == [clustering]
