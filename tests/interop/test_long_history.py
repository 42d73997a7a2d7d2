"""A merge-on-read table through 200 commits with its services on a schedule: compaction
every 5 delta commits, cleaning and archival every 10 commits. The active timeline stays
within hoodie.keep.min/max.commits, no file slice outlives the cleaner's retention rule, and
the rows stay what an in-memory model says (and what hudi-rs reads)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from hudi_core import HudiTable
from hudi_core.read.file_system_view import FileSystemView
from hudi_core.services.retention import last_clean_retained
from hudi_core.timeline import ActiveTimeline
from hudi_core.timeline.instant import WRITE_ACTIONS
from tests import datagen, oracle

COMMITS = 200
KEEP_MIN, KEEP_MAX, RETAINED = 12, 16, 8
OPTIONS = {
    "hoodie.compact.inline.max.delta.commits": "5",
    "hoodie.cleaner.commits.retained": str(RETAINED),
    "hoodie.keep.min.commits": str(KEEP_MIN),
    "hoodie.keep.max.commits": str(KEEP_MAX),
}


def test_two_hundred_commits_with_scheduled_services(tmp_path):
    path = str(tmp_path / "trips")
    table = HudiTable.create(
        path, "trips", "MERGE_ON_READ", ["uuid"], ["city"], "ts", options=OPTIONS
    )
    rng = np.random.default_rng(7)
    model: dict[str, dict] = {}
    compactions = 0
    for number in range(1, COMMITS + 1):
        keys = sorted(rng.choice(400, 25, replace=False).tolist())
        if number % 9 == 0:
            batch = datagen.trips(keys[:5], seed=number, ts=number).select(["uuid", "city"])
            table.write(batch, operation="delete")
            for key in batch.column("uuid").to_pylist():
                model.pop(key, None)
        else:
            batch = datagen.trips(keys, seed=number, ts=number)
            table.write(batch)
            model.update({row["uuid"]: row for row in batch.to_pylist()})
        if table.compaction.schedule() is not None:
            table.compaction.run()
            compactions += 1
        if number % 10 == 0:
            table.clean()
            archived = table.archive()
            _assert_timeline_within_bounds(table, archived_some=bool(archived))
            _assert_retention_respected(table)
        if number % 50 == 0:
            _assert_rows(table, path, model)
    assert compactions >= COMMITS // 6, "a compaction every 5 delta commits"
    assert len(table.timeline(archived=True)) > len(table.timeline()) + COMMITS // 2


def _assert_timeline_within_bounds(table: HudiTable, archived_some: bool) -> None:
    active = ActiveTimeline.load(table.storage)
    commits = active.completed(WRITE_ACTIONS)
    assert len(commits) <= KEEP_MAX, f"{len(commits)} completed commits active"
    if archived_some:
        assert len(commits) >= KEEP_MIN, f"archival went below {KEEP_MIN}: {len(commits)}"
    assert not active.pending(), f"nothing is left pending: {active.pending()}"


def _assert_retention_respected(table: HudiTable) -> None:
    """Per file group, at most one slice older than the earliest commit the last clean
    retained (the one a query at that commit reads)."""
    timeline = ActiveTimeline.load(table.storage)
    earliest = last_clean_retained(timeline)
    assert earliest is not None, "ten commits are enough for the cleaner to set a window"
    view = FileSystemView(table.storage, timeline)
    for (partition, file_id), group in view.file_groups.items():
        older = [t for t in group.slices if t < earliest]
        assert len(older) <= 1, f"{partition}/{file_id} keeps slices {sorted(older)} < {earliest}"


def _assert_rows(table: HudiTable, path: str, model: dict[str, dict]) -> None:
    ours = table.read()
    expected = pa.Table.from_pylist(list(model.values()), schema=datagen.SCHEMA)
    assert oracle.sorted_rows(ours.select(datagen.SCHEMA.names)) == oracle.sorted_rows(expected)
    oracle.assert_same_table(ours, oracle.snapshot(path), "hudi-rs snapshot")
