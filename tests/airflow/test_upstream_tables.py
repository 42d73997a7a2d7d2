"""Tables fed by another table of the tables file (`upstream_table`): the entries' checks, the
`<table>_ingest` DAG they get (a deferrable sensor waiting for new upstream commits, then the
ingest of them, then the Hive sync), and the sensor on tables hudi_core writes (no Spark):
it fires for an upstream commit newer than the checkpoint the downstream's last ingest
recorded, and only then."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from airflow.sdk.bases.sensor import PokeReturnValue
from airflow.sdk.exceptions import TaskDeferred

from hudi_airflow import local_run
from hudi_airflow.operators import HudiIngestOperator
from hudi_airflow.sensors import HudiInstantSensor
from hudi_airflow.tables_config import EntryError, TablesConfigError, load_tables, read_tables
from hudi_core import HudiTable, InvalidOptionError
from spark_jobs import ingest
from tests.airflow.conftest import table_entry
from tests.datagen import trips
from tests.tables import create_trips_table

CLEANED_SQL = "SELECT uuid, city, ts, fare FROM <SRC> WHERE fare > 0"


def _dag_bag():
    from airflow.dag_processing.dagbag import DagBag

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DagBag(dag_folder=str(local_run.DAGS_FOLDER))


def chained(name: str, tmp_path: Path, upstream: str, **extra: Any) -> dict[str, Any]:
    """An entry fed by `upstream` (no source_path, no source_format)."""
    entry = table_entry(name, tmp_path / name, tmp_path / "unused", upstream_table=upstream)
    del entry["source_path"], entry["source_format"]
    return {**entry, **extra}


# ---- the entries


def test_an_upstream_entry_reads_the_upstreams_base_path_in_any_order(tables_file, tmp_path):
    path = tables_file(
        [
            chained("aggregated", tmp_path, "cleaned", transformer_sql=CLEANED_SQL),
            chained("cleaned", tmp_path, "raw"),
            table_entry("raw", tmp_path / "raw", tmp_path / "landing"),
        ]
    )
    aggregated, cleaned, raw = load_tables(path)
    assert (cleaned.source_path, cleaned.source_format) == (raw.base_path, "hudi")
    assert (aggregated.source_path, aggregated.source_format) == (cleaned.base_path, "hudi")
    assert aggregated.transformer_sql == CLEANED_SQL and cleaned.transformer_sql is None
    assert aggregated.has_upstream and not raw.has_upstream
    assert aggregated.dag_ids[0] == "aggregated_ingest"


BAD = [
    ({"upstream_table": "rawx"}, "key 'upstream_table': table 'rawx' is not in the file"),
    ({"upstream_table": "cleaned"}, "key 'upstream_table' names the table itself"),
    ({"upstream_table": " "}, "key 'upstream_table' must name a table"),
    ({"source_path": "/in"}, "keys 'upstream_table' and 'source_path' do not go together"),
    ({"source_format": "json"}, "keys 'upstream_table' and 'source_format' do not go together"),
    ({"sources": []}, "keys 'upstream_table' and 'sources' do not go together"),
    ({"transformer_sql": "SELECT * FROM raw"}, "key 'transformer_sql' must read <SRC>"),
]


@pytest.mark.parametrize(("change", "message"), BAD)
def test_a_bad_upstream_entry_is_reported_naming_it_and_the_key(
    tables_file, tmp_path, change, message
):
    path = tables_file(
        [
            table_entry("raw", tmp_path / "raw", tmp_path / "landing"),
            {**chained("cleaned", tmp_path, "raw"), **change},
        ]
    )
    tables = read_tables(path)
    assert [entry.name for entry in tables.entries] == ["raw"]
    (error,) = tables.errors
    assert (error.number, error.name) == (2, "cleaned")
    assert "table entry #2 ('cleaned')" in error.message and message in error.message
    with pytest.raises(TablesConfigError, match="table entry #2"):
        load_tables(path)


def test_loops_and_bad_links_in_a_chain_make_every_entry_of_it_bad(tables_file, tmp_path):
    path = tables_file(
        [
            chained("a", tmp_path, "b"),
            chained("b", tmp_path, "a"),  # a loop
            {**table_entry("broken", tmp_path / "x", tmp_path / "in"), "table_type": "X"},
            chained("c", tmp_path, "broken"),  # fed by a bad entry
            chained("d", tmp_path, "c"),  # and further down
            {**table_entry("e", tmp_path / "e", tmp_path / "in"), "transformer_sql": CLEANED_SQL},
        ]
    )
    tables = read_tables(path)
    assert [entry.name for entry in tables.entries] == ["e"]  # files rewritten by a query
    messages = {error.name: error.message for error in tables.errors}
    assert isinstance(tables.items[0], EntryError)
    assert "the chain of upstream tables loops: a -> b -> a" in messages["a"]
    assert "loops: b -> a -> b" in messages["b"]
    assert "table 'broken' is a bad entry" in messages["c"]
    assert "table 'broken' (its chain: d -> c) is a bad entry" in messages["d"]
    bag = _dag_bag()
    assert sorted(bag.dag_ids) == ["e_compaction", "e_ingest", "e_maintenance"]
    errors = " ".join(str(e) for e in bag.import_errors.values())
    assert "5 bad table entries" in errors and "key 'upstream_table'" in errors


def test_a_transformer_query_does_not_go_with_sources(tables_file, tmp_path):
    entry = table_entry("profiles", tmp_path / "p", tmp_path / "in", transformer_sql=CLEANED_SQL)
    del entry["source_path"], entry["source_format"]
    entry["sources"] = [{"name": "a", "source_path": str(tmp_path), "source_format": "json"}]
    (error,) = read_tables(tables_file([entry])).errors
    assert "key 'transformer_sql' goes with 'source_path' or 'upstream_table'" in error.message


# ---- the DAG


def test_the_ingest_dag_of_an_upstream_entry_waits_for_new_upstream_commits(tables_file, tmp_path):
    hive = {"hoodie.datasource.hive_sync.enable": True}
    tables_file(
        [
            table_entry("raw", tmp_path / "raw", tmp_path / "landing"),
            chained("cleaned", tmp_path, "raw", transformer_sql=CLEANED_SQL, options=hive),
        ]
    )
    bag = _dag_bag()
    assert bag.import_errors == {}
    dag = bag.dags["cleaned_ingest"]
    assert [task.task_id for task in dag.topological_sort()] == [
        "wait_for_upstream",
        "ingest",
        "hive_sync",
    ]
    assert dag.task_dict["wait_for_upstream"].downstream_task_ids == {"ingest"}
    assert dag.task_dict["ingest"].downstream_task_ids == {"hive_sync"}
    sensor = dag.task_dict["wait_for_upstream"]
    assert isinstance(sensor, HudiInstantSensor)
    assert sensor.deferrable and sensor.soft_fail
    assert sensor.base_path == str(tmp_path / "raw")
    assert sensor.after_checkpoint_of == str(tmp_path / "cleaned")
    assert set(sensor.action) == {"commit", "deltacommit", "replacecommit"}
    assert sensor.state == "COMPLETED" and sensor.poke_interval == 60
    run = dag.task_dict["ingest"]
    assert isinstance(run, HudiIngestOperator)
    assert run.source_format == "hudi" and run.transformer_sql == CLEANED_SQL
    assert not run.modified_since and not run.modified_until  # no backfill of commits
    assert set(dag.params) == {"source_path", "operation"}
    assert dag.params["source_path"] == str(tmp_path / "raw")
    for task in dag.tasks:
        assert task.retries >= 1 and task.owner not in ("", "airflow"), task.task_id
    # The upstream's own DAG is as before.
    assert list(bag.dags["raw_ingest"].task_dict) == ["ingest"]
    arguments = run.job_arguments({})
    assert arguments[arguments.index("--transformer-sql") + 1] == CLEANED_SQL
    assert arguments[arguments.index("--source-format") + 1] == "hudi"


# ---- the sensor on real tables


def _upstream_and_downstream(tmp_path: Path) -> tuple[str, HudiTable, str, HudiTable]:
    up_path, up = create_trips_table(tmp_path / "up", "MERGE_ON_READ")
    down_path, down = create_trips_table(tmp_path / "down", "COPY_ON_WRITE")
    return up_path, up, down_path, down


def _consumed(down: HudiTable, upstream_instant: str) -> None:
    """A downstream ingest that consumed the upstream up to `upstream_instant`."""
    extra = {ingest.CHECKPOINT_KEY: upstream_instant}
    down.write(pa.table({"uuid": ["x"], "city": ["c"], "ts": [1]}), extra_metadata=extra)


def _sensor(up_path: str, down_path: str, **extra: Any) -> HudiInstantSensor:
    return HudiInstantSensor(
        task_id="wait_for_upstream",
        base_path=up_path,
        action=["commit", "deltacommit", "replacecommit"],
        after_checkpoint_of=down_path,
        **extra,
    )


def test_the_sensor_waits_for_an_upstream_commit_newer_than_the_checkpoint(tmp_path):
    up_path, up, down_path, down = _upstream_and_downstream(tmp_path)
    sensor = _sensor(up_path, down_path)
    assert sensor.poke({}) is False  # no upstream commit at all
    first = up.write(trips([1, 2], seed=1, ts=1))
    found = sensor.poke({})  # no downstream table's checkpoint yet: any commit
    assert isinstance(found, PokeReturnValue) and found.xcom_value == first

    _consumed(down, first)
    assert sensor.poke({}) is False  # nothing the downstream has not read
    second = up.write(trips([3], seed=2, ts=2))
    found = sensor.poke({})
    assert isinstance(found, PokeReturnValue) and found.xcom_value == second

    # after_instant, given instead, works alike.
    given = HudiInstantSensor(task_id="w", base_path=up_path, after_instant=second)
    assert given.poke({}) is False
    assert isinstance(HudiInstantSensor(task_id="w", base_path=up_path).poke({}), PokeReturnValue)
    with pytest.raises(InvalidOptionError, match="not both"):
        _sensor(up_path, down_path, after_instant=first)


def test_the_deferred_wait_starts_after_the_downstream_checkpoint(tmp_path):
    up_path, up, down_path, down = _upstream_and_downstream(tmp_path)
    first = up.write(trips([1, 2], seed=1, ts=1))
    _consumed(down, first)
    sensor = _sensor(up_path, down_path, deferrable=True, poke_interval=5)
    with pytest.raises(TaskDeferred) as deferred:
        sensor.execute({})
    classpath, kwargs = deferred.value.trigger.serialize()
    assert classpath == "hudi_airflow.triggers.HudiInstantTrigger"
    assert kwargs["after_instant"] == first and kwargs["poll_interval"] == 5
    assert kwargs["action"] == ["commit", "deltacommit", "replacecommit"]
    second = up.write(trips([3], seed=2, ts=2))
    assert sensor.execute({}) == second  # found at once: no deferral
