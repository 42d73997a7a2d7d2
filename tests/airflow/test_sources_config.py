"""tables.yaml entries with several `sources` (a multi-stream wide table): how they parse, the
DAGs they get (one ingest DAG per source, the table's services once) and what each source's
ingest task hands its Spark job; the errors bad `sources` raise. No Spark, no DAG runs
(tests/airflow/test_multi_source.py runs them)."""

from __future__ import annotations

import warnings

import pytest
import yaml

from hudi_airflow import local_run
from hudi_airflow.dag_factory import LOG_SUFFIX_OPTION, build_dags
from hudi_airflow.operators import HudiIngestOperator
from hudi_airflow.tables_config import (
    SourceEntry,
    TableEntry,
    TablesConfigError,
    load_tables,
    read_tables,
)
from tests.airflow.conftest import table_entry

PARTIAL_UPDATE = "org.apache.hudi.common.model.PartialUpdateAvroPayload"
OPTIONS = {
    "hoodie.index.type": "BUCKET",
    "hoodie.bucket.index.num.buckets": "4",
    "hoodie.datasource.write.payload.class": PARTIAL_UPDATE,
    "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.InProcessLockProvider",
}


def profiles(tmp_path, sources=None, **extra) -> dict:
    """A multi-stream table entry: source `orders` (name, price) and `users` (age)."""
    entry = table_entry("profiles", tmp_path / "profiles", tmp_path / "unused", **extra)
    del entry["source_path"], entry["source_format"]
    entry["precombine_field"] = "_ts1:name,price;_ts2:age"
    entry.setdefault("options", OPTIONS)
    entry["sources"] = (
        sources
        if sources is not None
        else [
            {
                "name": "orders",
                "source_path": str(tmp_path / "landing" / "orders"),
                "source_format": "json",
                "schedule": "@hourly",
                "columns": ["name", "price", "_ts1"],
            },
            {
                "name": "user_events",
                "source_path": str(tmp_path / "landing" / "users"),
                "source_format": "PARQUET",
            },
        ]
    )
    return entry


def test_sources_parse_with_their_schedules_columns_and_formats(tables_file, tmp_path):
    (table,) = load_tables(tables_file([profiles(tmp_path, schedule="@daily")]))
    assert table.has_sources and table.source_path is None and table.source_format is None
    assert table.sources == (
        SourceEntry(
            name="orders",
            source_path=str(tmp_path / "landing" / "orders"),
            source_format="json",
            schedule="@hourly",
            columns=("name", "price", "_ts1"),
        ),
        SourceEntry(
            name="user_events",
            source_path=str(tmp_path / "landing" / "users"),
            source_format="parquet",
            schedule="@daily",  # the table's, as it gave none
            columns=None,  # every column of its drops
        ),
    )
    assert table.dag_ids == [
        "profiles_ingest_orders",
        "profiles_ingest_user_events",
        "profiles_compaction",
        "profiles_maintenance",
    ]


def test_a_source_schedule_of_null_is_manual_and_columns_may_be_comma_separated(tmp_path):
    sources = [
        {
            "name": "a",
            "source_path": "landing/a",  # relative: from the tables file's folder
            "source_format": "json",
            "schedule": None,
            "columns": "name, price,_ts1",
        },
        {"name": "B_2", "source_path": "s3://landing/b", "source_format": "csv"},
    ]
    path = tmp_path / "conf" / "tables.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump({"tables": [profiles(tmp_path, sources, schedule="@hourly")]}))
    (table,) = load_tables(path)
    a, b = table.sources
    assert (a.schedule, a.columns) == (None, ("name", "price", "_ts1"))
    assert a.source_path == str(tmp_path / "conf" / "landing" / "a")
    assert (b.schedule, b.source_path) == ("@hourly", "s3://landing/b")


def _ingest(dags, dag_id: str) -> HudiIngestOperator:
    task = dags[dag_id].task_dict["ingest"]
    assert isinstance(task, HudiIngestOperator)
    return task


def _flag(arguments: list[str], flag: str) -> str | None:
    return arguments[arguments.index(flag) + 1] if flag in arguments else None


def test_each_source_gets_an_ingest_dag_the_table_its_services_once(tables_file, tmp_path):
    entry = profiles(
        tmp_path,
        schedule="@daily",
        options={**OPTIONS, "hoodie.datasource.hive_sync.enable": True},
    )
    dags = build_dags(load_tables(tables_file([entry])))
    assert sorted(dags) == [
        "profiles_compaction",
        "profiles_hive_sync",
        "profiles_ingest_orders",
        "profiles_ingest_user_events",
        "profiles_maintenance",
    ]
    orders, users = dags["profiles_ingest_orders"], dags["profiles_ingest_user_events"]
    # Runs with data intervals, for backfills (dag_factory._interval_schedule).
    assert (orders.timetable.expression, users.timetable.expression) == ("0 * * * *", "0 0 * * *")
    assert set(orders.tags) == {"hudi", "profiles", "ingest", "orders"}
    assert orders.params["source_path"] == str(tmp_path / "landing" / "orders")
    assert users.params["source_path"] == str(tmp_path / "landing" / "users")
    for dag in (orders, users):
        assert dag.max_active_runs == 1
        assert set(dag.task_dict["ingest"].downstream_task_ids) == {"hive_sync"}
    order_args = _ingest(dags, "profiles_ingest_orders").job_arguments({})
    user_args = _ingest(dags, "profiles_ingest_user_events").job_arguments({})
    assert _flag(order_args, "--source-id") == "orders"
    assert _flag(order_args, "--source-columns") == "name,price,_ts1"
    assert _flag(order_args, "--source-format") == "json"
    assert _flag(user_args, "--source-id") == "user_events"
    assert _flag(user_args, "--source-columns") is None  # every column
    assert _flag(user_args, "--source-format") == "parquet"
    for arguments in (order_args, user_args):
        assert _flag(arguments, "--precombine-field") == "_ts1:name,price;_ts2:age"
        assert _flag(arguments, "--record-key-field") == "uuid"


def test_each_source_writes_its_own_log_suffix_with_the_tables_options(tables_file, tmp_path):
    """The table's options (its lock among them) reach every source's writes; the log suffix
    is each source's own, even over one the table's options set."""
    options = {**OPTIONS, LOG_SUFFIX_OPTION: "shared"}
    dags = build_dags(load_tables(tables_file([profiles(tmp_path, options=options)])))
    orders = _ingest(dags, "profiles_ingest_orders").hoodie_options
    users = _ingest(dags, "profiles_ingest_user_events").hoodie_options
    assert orders[LOG_SUFFIX_OPTION] == "orders"
    assert users[LOG_SUFFIX_OPTION] == "user-events"  # a log suffix holds no '_'
    for options_of_a_source in (orders, users):
        for key, value in OPTIONS.items():
            assert options_of_a_source[key] == value
    compaction = dags["profiles_compaction"].task_dict["execute_compaction"]
    assert compaction.hoodie_options.get(LOG_SUFFIX_OPTION) == "shared"  # the table's own


def test_a_single_source_table_keeps_its_one_ingest_dag_unchanged(tables_file, tmp_path):
    entry = table_entry("rides", tmp_path / "rides", tmp_path / "in", schedule="@hourly")
    (table,) = load_tables(tables_file([entry]))
    assert not table.has_sources and table.sources == ()
    dags = build_dags([table])
    assert sorted(dags) == ["rides_compaction", "rides_ingest", "rides_maintenance"]
    ingest = _ingest(dags, "rides_ingest")
    arguments = ingest.job_arguments({})
    assert "--source-id" not in arguments and "--source-columns" not in arguments
    assert LOG_SUFFIX_OPTION not in ingest.hoodie_options
    assert set(dags["rides_ingest"].tags) == {"hudi", "rides", "ingest"}
    assert dags["rides_ingest"].timetable.expression == "0 * * * *"  # @hourly, with intervals


def test_log_suffixes_of_distinct_names_are_distinct():
    names = ["a_b", "ab", "a_b_", "A_B", "a__b"]
    suffixes = [SourceEntry(n, "/in", "json").log_suffix for n in names]
    assert len(set(suffixes)) == len(names)
    assert all(set(s) <= set("abAB-") for s in suffixes)


def _source(**change) -> dict:
    source = {"name": "users", "source_path": "/landing/users", "source_format": "json"}
    return {k: v for k, v in {**source, **change}.items() if v != "<absent>"}


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (
            {"source_path": "/landing/profiles"},
            "keys 'source_path' and 'sources' do not go together",
        ),
        (
            {"source_format": "json"},
            "keys 'source_format' and 'sources' do not go together",
        ),
        ({"sources": []}, "key 'sources' must be a non-empty list"),
        ({"sources": None}, "key 'sources' must be a non-empty list"),
        ({"sources": {"name": "users"}}, "key 'sources' must be a non-empty list"),
        ({"sources": ["users"]}, "key 'sources' #1: must be a mapping"),
        ({"sources": [_source(name="<absent>")]}, "key 'sources' #1: key 'name' is required"),
        (
            {"sources": [_source(source_path="<absent>")]},
            "key 'sources' #1 ('users'): key 'source_path' is required",
        ),
        (
            {"sources": [_source(source_format=None)]},
            "key 'sources' #1 ('users'): key 'source_format' is required",
        ),
        (
            {"sources": [_source(source_format="xml")]},
            "key 'sources' #1 ('users'): key 'source_format' must be one of",
        ),
        (
            {"sources": [_source(name="user-events")]},
            "key 'sources' #1 ('user-events'): key 'name' must hold only letters, digits and '_'",
        ),
        ({"sources": [_source(name=" ")]}, "key 'sources' #1 (' '): key 'name' is required"),
        (
            {"sources": [_source(), _source(name="orders"), _source()]},
            "key 'sources' #3 ('users'): key 'name' repeats source #1's name",
        ),
        (
            {"sources": [_source(colour="blue")]},
            "key 'sources' #1 ('users'): unknown key 'colour'",
        ),
        ({"sources": [_source(schedule=3)]}, "('users'): key 'schedule' must be a string"),
        ({"sources": [_source(columns=[])]}, "('users'): key 'columns' names no column"),
        ({"sources": [_source(columns=["age", 3])]}, "('users'): key 'columns' must be a list"),
        ({"sources": [_source(columns="age,age")]}, "('users'): key 'columns' names 'age' twice"),
    ],
)
def test_bad_sources_name_the_entry_the_source_and_the_key(tables_file, tmp_path, change, named):
    good = table_entry("rides", tmp_path / "rides", tmp_path / "in")
    bad = {**profiles(tmp_path), **change}
    path = tables_file([good, bad])
    tables = read_tables(path)
    assert [entry.name for entry in tables.entries] == ["rides"]  # the good one stays
    (error,) = tables.errors
    assert (error.number, error.name) == (2, "profiles")
    assert f"{path}: table entry #2 ('profiles'): " in error.message
    assert named in error.message, error.message
    with pytest.raises(TablesConfigError, match="table entry #2"):
        load_tables(path)


def test_a_table_without_sources_still_needs_its_source_path(tables_file, tmp_path):
    entry = table_entry("rides", tmp_path / "rides", tmp_path / "in")
    del entry["source_path"]
    with pytest.raises(TablesConfigError, match="key 'source_path' is required"):
        load_tables(tables_file([entry]))


def test_a_dag_id_two_tables_would_share_makes_the_later_entry_bad(tables_file, tmp_path):
    """Table 'a' with source 'x_maintenance' spells table 'a_ingest_x''s maintenance DAG."""
    first = {**profiles(tmp_path), "name": "a"}
    first["sources"] = [_source(name="x_maintenance")]
    second = table_entry("a_ingest_x", tmp_path / "b", tmp_path / "in")
    tables = read_tables(tables_file([first, second]))
    assert [entry.name for entry in tables.entries] == ["a"]
    (error,) = tables.errors
    assert "table entry #2 ('a_ingest_x'): key 'name': its DAG 'a_ingest_x_maintenance'" in (
        error.message
    )
    tables = read_tables(tables_file([second, first]))  # the other way round
    (error,) = tables.errors
    assert "table entry #2 ('a'): key 'sources': its DAG 'a_ingest_x_maintenance'" in (
        error.message
    )


def test_the_dag_files_build_the_sources_dags_and_report_bad_sources(tables_file, tmp_path):
    from airflow.dag_processing.dagbag import DagBag

    broken = {**profiles(tmp_path), "name": "broken", "sources": [_source(), _source()]}
    tables_file([profiles(tmp_path), broken])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bag = DagBag(dag_folder=str(local_run.DAGS_FOLDER))
    assert [str(w.message) for w in caught if "hudi" in str(w.filename)] == []
    assert sorted(bag.dag_ids) == [
        "profiles_compaction",
        "profiles_ingest_orders",
        "profiles_ingest_user_events",
        "profiles_maintenance",
    ]
    ((source, error),) = bag.import_errors.items()
    assert source.endswith("hudi_tables_check.py")
    assert "table entry #2 ('broken'): key 'sources' #2 ('users'): key 'name' repeats" in error


def test_table_entries_built_in_code_default_to_one_source():
    entry = TableEntry(
        name="t",
        base_path="/lake/t",
        table_type="COPY_ON_WRITE",
        record_key_field="uuid",
        precombine_field="ts",
        source_path="/in",
        source_format="json",
    )
    assert not entry.has_sources and entry.dag_ids == ["t_ingest", "t_maintenance"]
