"""An incremental pipeline of three tables, defined in a tables file and run by its Airflow
DAGs through dag.test(): `raw` ingests landed JSON files; `cleaned` (upstream_table: raw)
ingests raw's new commits through a transformer query that filters and renames/derives
columns; `aggregated` (upstream_table: cleaned) ingests cleaned's new commits through a
GROUP BY keyed by the group (the city).

Each round, each downstream table reads only its upstream's commits since its checkpoint
(Apache Hudi's HoodieIncrSource), so the chain computes per round: cleaned upserts the
transformed rows of the raw records changed in the round (a record the filter now drops
keeps its earlier row: an upsert deletes nothing), and aggregated upserts, per city, the
aggregate of the cleaned rows written in the round. A model computes the same here; after
each round the three tables equal it, each downstream's checkpoint is the upstream instant
it consumed, and hudi-rs reads all three as we do.

Seven DAG runs: round 1 (a drop; raw, cleaned, aggregated), round 2 (two drops, each its own
raw run; then cleaned takes raw's two commits in one run, and aggregated)."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hudi_airflow import local_run
from hudi_core import HudiTable
from hudi_core.schema.meta_fields import is_meta_field
from spark_jobs import ingest
from tests import oracle

pytestmark = [pytest.mark.airflow, pytest.mark.spark, pytest.mark.slow]

DROPPED_AT = 1_767_225_600  # 2026-01-01: drop files' modification times start here (seconds)
CLEANED_SQL = (
    "SELECT uuid, city, ts, upper(rider) AS rider_name, fare AS fare_usd, "
    "CAST(fare * 9 DIV 10 AS BIGINT) AS fare_eur FROM <SRC> "
    "WHERE status = 'completed' AND fare > 0"
)
AGGREGATED_SQL = (
    "SELECT city, count(*) AS trips_in_batch, sum(fare_usd) AS revenue_in_batch, "
    "max(ts) AS last_ts FROM <SRC> GROUP BY city"
)


def trip(uuid: str, city: str, ts: int, rider: str, fare: int, status: str) -> dict[str, Any]:
    return {"uuid": uuid, "city": city, "ts": ts, "rider": rider, "fare": fare, "status": status}


# The drops, by round. ts grows from drop to drop (later versions win every merge).
ROUNDS: list[list[list[dict[str, Any]]]] = [
    [
        [
            trip("t1", "sf", 100, "ana", 1200, "completed"),
            trip("t2", "sf", 100, "bo", 800, "completed"),
            trip("t3", "nyc", 100, "cy", 2500, "completed"),
            trip("t4", "nyc", 100, "di", 0, "completed"),  # no fare: filtered out
            trip("t5", "chennai", 100, "eli", 300, "cancelled"),  # filtered out
        ]
    ],
    [
        [
            trip("t1", "sf", 200, "ana", 1500, "completed"),  # a new fare
            trip("t3", "nyc", 200, "cy", 2500, "cancelled"),  # now filtered: cleaned keeps t3
            trip("t6", "chennai", 200, "fu", 450, "completed"),
        ],
        [
            trip("t5", "chennai", 300, "eli", 350, "completed"),  # now completed
            trip("t7", "nyc", 300, "gu", 900, "completed"),
            trip("t2", "sf", 300, "bo", 800, "refunded"),  # filtered: cleaned keeps t2
        ],
    ],
]


# ---- the model: what the chain computes round by round


def cleaned_rows(raw_changed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """CLEANED_SQL over the raw rows a round read."""
    return [
        {
            "uuid": r["uuid"],
            "city": r["city"],
            "ts": r["ts"],
            "rider_name": r["rider"].upper(),
            "fare_usd": r["fare"],
            "fare_eur": r["fare"] * 9 // 10,
        }
        for r in raw_changed
        if r["status"] == "completed" and r["fare"] > 0
    ]


def aggregated_rows(cleaned_changed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """AGGREGATED_SQL over the cleaned rows a round read."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in cleaned_changed:
        groups[row["city"]].append(row)
    return [
        {
            "city": city,
            "trips_in_batch": len(rows),
            "revenue_in_batch": sum(r["fare_usd"] for r in rows),
            "last_ts": max(r["ts"] for r in rows),
        }
        for city, rows in groups.items()
    ]


class ChainModel:
    """The three tables' rows by key, advanced one round (all its drops) at a time."""

    def __init__(self) -> None:
        self.raw: dict[str, dict] = {}
        self.cleaned: dict[str, dict] = {}
        self.aggregated: dict[str, dict] = {}

    def round(self, drops: list[list[dict[str, Any]]]) -> None:
        for drop in drops:
            self.raw.update({row["uuid"]: row for row in drop})
        # cleaned reads the raw records the round's commits wrote, as they are now.
        changed = sorted({row["uuid"] for drop in drops for row in drop})
        written = cleaned_rows([self.raw[key] for key in changed])
        self.cleaned.update({row["uuid"]: row for row in written})
        # aggregated reads the cleaned rows written in the round.
        self.aggregated.update({row["city"]: row for row in aggregated_rows(written)})


# ---- the tables file and the runs


def _entry(name: str, tmp_path: Path, **source: Any) -> dict[str, Any]:
    return {
        "name": name,
        "base_path": str(tmp_path / "lake" / name),
        "table_type": "MERGE_ON_READ",
        "record_key_field": "uuid",
        "partition_path_field": "city",
        "precombine_field": "ts",
        "retries": 0,  # a failure shows at once
        **source,
    }


def _entries(tmp_path: Path) -> list[dict[str, Any]]:
    landing = str(tmp_path / "landing")
    aggregated = _entry("aggregated", tmp_path, upstream_table="cleaned")
    aggregated.update(
        table_type="COPY_ON_WRITE",
        record_key_field="city",
        precombine_field="last_ts",
        transformer_sql=AGGREGATED_SQL,
    )
    del aggregated["partition_path_field"]  # non-partitioned: one row per city
    return [
        _entry("raw", tmp_path, source_path=landing, source_format="json"),
        _entry("cleaned", tmp_path, upstream_table="raw", transformer_sql=CLEANED_SQL),
        aggregated,
    ]


def _land(tmp_path: Path, number: int, rows: list[dict[str, Any]]) -> None:
    """Drop `number` as JSON lines, modified `number` minutes after DROPPED_AT."""
    folder = tmp_path / "landing"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"drop-{number:02d}.json"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    moment = DROPPED_AT + 60 * number
    os.utime(path, (moment, moment))


def _run(dag_id: str, tasks: dict[str, str]):
    run = local_run.run_dag(dag_id)
    states = local_run.task_states(run)
    assert str(run.state) == "success" and states == tasks, states
    return run


def _path(tmp_path: Path, name: str) -> str:
    return str(tmp_path / "lake" / name)


def _latest_write(path: str) -> str:
    writes = [i for i in HudiTable.open(path).inspect.timeline() if i.is_write and i.is_completed]
    return writes[-1].timestamp


def _check_table(path: str, expected: dict[str, dict], step: str) -> None:
    """Our read equals the model (data columns, any order) and hudi-rs's read equals ours."""
    ours = HudiTable.open(path).read()
    data = ours.select([name for name in ours.column_names if not is_meta_field(name)])
    wanted = pa.Table.from_pylist(list(expected.values()))
    assert oracle.sorted_rows(data.select(wanted.column_names)) == oracle.sorted_rows(wanted), (
        f"{step}: {path} differs from the model"
    )
    assert sorted(data.column_names) == sorted(wanted.column_names), step
    oracle.assert_same_table(ours, oracle.snapshot(path), f"{step}: hudi-rs, {path}")


CHAINED_TASKS = {"wait_for_upstream": "success", "ingest": "success"}


def test_a_three_table_chain_follows_its_upstreams_round_by_round(
    airflow_db, tables_file, tmp_path
):
    tables_file(_entries(tmp_path))
    raw, cleaned, aggregated = (_path(tmp_path, n) for n in ("raw", "cleaned", "aggregated"))
    model = ChainModel()
    number = 0
    for index, drops in enumerate(ROUNDS, 1):
        for drop in drops:
            number += 1
            _land(tmp_path, number, drop)
            _run("raw_ingest", {"ingest": "success"})
        model.round(drops)
        raw_end = _latest_write(raw)

        run = _run("cleaned_ingest", CHAINED_TASKS)
        # The sensor found raw's newest commit; the ingest took every one since the last run.
        assert local_run.task_xcom(run, "wait_for_upstream") == raw_end
        result = local_run.task_xcom(run, "ingest")
        assert result["counts"]["commits"] == len(drops)
        assert ingest.last_checkpoint(HudiTable.open(cleaned)) == raw_end
        cleaned_end = _latest_write(cleaned)

        _run("aggregated_ingest", CHAINED_TASKS)
        assert ingest.last_checkpoint(HudiTable.open(aggregated)) == cleaned_end

        step = f"round {index}"
        _check_table(raw, model.raw, step)
        _check_table(cleaned, model.cleaned, step)
        _check_table(aggregated, model.aggregated, step)

    # What the filter dropped later kept its earlier cleaned row; the groups are the last
    # round's batches.
    assert model.cleaned["t3"]["fare_usd"] == 2500 and model.cleaned["t2"]["ts"] == 100
    assert model.aggregated["chennai"]["trips_in_batch"] == 2
    assert model.aggregated["sf"] == {
        "city": "sf",
        "trips_in_batch": 1,
        "revenue_in_batch": 1500,
        "last_ts": 200,
    }
