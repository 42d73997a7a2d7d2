"""A manual run of `<table>_ingest` with params: another source folder, another operation,
and a modification-date range (a backfill) that picks only some of the files."""

from __future__ import annotations

import os
from datetime import UTC, datetime

import pyarrow.parquet as pq
import pytest

from hudi_airflow import local_run
from hudi_core import HudiTable
from hudi_core.model.commit_metadata import CommitMetadata
from hudi_core.timeline import ActiveTimeline
from tests.airflow.conftest import table_entry
from tests.datagen import trips

pytestmark = [pytest.mark.airflow, pytest.mark.spark, pytest.mark.slow]


def _land(folder, name: str, keys: list[int], day: str) -> None:
    """A parquet file of trips whose modification time is noon of `day` (UTC)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.parquet"
    pq.write_table(trips(keys, seed=len(keys), ts=1), path)
    noon = datetime.fromisoformat(f"{day}T12:00:00").replace(tzinfo=UTC).timestamp()
    os.utime(path, (noon, noon))


def test_manual_run_params_choose_source_operation_and_date_range(
    airflow_db, tables_file, tmp_path
):
    default_source, backfill_source = tmp_path / "landing", tmp_path / "archive"
    _land(default_source, "not-this-one", [900], "2026-11-01")
    _land(backfill_source, "oct-30", [1, 2, 3], "2026-10-30")
    _land(backfill_source, "nov-01", [4, 5], "2026-11-01")
    _land(backfill_source, "nov-03", [6], "2026-11-03")
    base_path = tmp_path / "trips"
    tables_file([table_entry("trips", base_path, default_source)])

    run = local_run.run_dag(
        "trips_ingest",
        conf={
            "source_path": str(backfill_source),
            "operation": "insert",
            "from_date": "2026-10-31",
            "to_date": "2026-11-02",
        },
    )

    assert str(run.state) == "success", local_run.task_states(run)
    table = HudiTable.open(str(base_path))
    assert sorted(table.read(columns=["uuid"]).column("uuid").to_pylist()) == sorted(
        trips([4, 5], seed=2, ts=1).column("uuid").to_pylist()
    )
    timeline = ActiveTimeline.load(table.storage)
    (commit,) = timeline.completed_writes()
    assert CommitMetadata.from_json_bytes(timeline.read_bytes(commit)).operation_type == "INSERT"
    assert local_run.task_xcom(run, "ingest", "instant_time") == commit.timestamp
