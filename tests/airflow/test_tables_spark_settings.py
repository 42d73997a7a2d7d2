"""tables.yaml's non-partitioned tables and per-table Spark settings: what the generated DAGs'
operators get, and the errors bad entries raise."""

from __future__ import annotations

import pytest

from hudi_airflow.dag_factory import build_dags
from hudi_airflow.operators import HudiSparkJobOperator
from hudi_airflow.tables_config import TablesConfigError, load_tables
from tests.airflow.conftest import table_entry

SPARK_CONF = {"spark.sql.shuffle.partitions": 8, "spark.speculation": True}


def _dags(tables_file, entries):
    return build_dags(load_tables(tables_file(entries)))


def _spark_tasks(dags, table: str) -> list[HudiSparkJobOperator]:
    return [
        task
        for dag_id, dag in dags.items()
        if dag_id.startswith(f"{table}_")
        for task in dag.tasks
        if isinstance(task, HudiSparkJobOperator)
    ]


@pytest.mark.parametrize("partitions", ["absent", None, "", []])
def test_a_table_without_partition_fields_is_ingested_non_partitioned(
    tables_file, tmp_path, partitions
):
    entry = table_entry("events", tmp_path / "events", tmp_path / "in")
    if partitions == "absent":
        del entry["partition_path_field"]
    else:
        entry["partition_path_field"] = partitions
    (table,) = load_tables(tables_file([entry]))
    assert not table.is_partitioned
    assert "hoodie.datasource.write.partitionpath.field" not in table.hoodie_options()
    ingest = build_dags([table])["events_ingest"].task_dict["ingest"]
    arguments = ingest.job_arguments({})
    assert "--partition-path-field" not in arguments
    assert arguments[arguments.index("--record-key-field") + 1] == "uuid"


def test_partition_fields_as_a_list_or_comma_separated(tables_file, tmp_path):
    listed = table_entry("a", tmp_path / "a", tmp_path / "in", partition_path_field=["city", "day"])
    joined = table_entry("b", tmp_path / "b", tmp_path / "in", partition_path_field="city, day")
    tables = load_tables(tables_file([listed, joined]))
    assert [t.partition_path_field for t in tables] == ["city,day", "city,day"]
    ingest = build_dags(tables)["a_ingest"].task_dict["ingest"]
    arguments = ingest.job_arguments({})
    assert arguments[arguments.index("--partition-path-field") + 1] == "city,day"
    assert tables[0].hoodie_options()["hoodie.datasource.write.partitionpath.field"] == "city,day"


def test_spark_settings_reach_every_spark_task_of_their_table_only(tables_file, tmp_path):
    tuned = table_entry(
        "rides",
        tmp_path / "rides",
        tmp_path / "in",
        spark_conf=SPARK_CONF,
        executor_memory="2g",
        executor_cores=2,
        driver_memory="1g",
        num_executors=3,
        options={"hoodie.datasource.hive_sync.enable": True},
    )
    plain = table_entry("fares", tmp_path / "fares", tmp_path / "in2")
    dags = _dags(tables_file, [tuned, plain])
    tasks = _spark_tasks(dags, "rides")
    assert {task.task_id for task in tasks} == {
        "ingest",
        "execute_compaction",
        "clean",
        "archive",
        "hive_sync",
    }
    for task in tasks:
        assert task.conf == {"spark.sql.shuffle.partitions": "8", "spark.speculation": "true"}
        assert (task._executor_memory, task._executor_cores) == ("2g", 2), task.task_id
        assert (task._driver_memory, task._num_executors) == ("1g", 3), task.task_id
    for task in _spark_tasks(dags, "fares"):
        assert not task.conf and task._executor_memory is None, task.task_id


def test_the_spark_settings_go_on_the_spark_submit_command_line(tables_file, tmp_path):
    entry = table_entry(
        "rides", tmp_path / "rides", tmp_path / "in", spark_conf=SPARK_CONF, executor_memory="4g"
    )
    ingest = _dags(tables_file, [entry])["rides_ingest"].task_dict["ingest"]
    command = ingest._get_hook()._build_spark_submit_command(ingest.application)
    assert "spark.sql.shuffle.partitions=8" in command
    assert command[command.index("--executor-memory") + 1] == "4g"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"spark_conf": ["spark.executor.memory=2g"]}, "key 'spark_conf' must be a mapping"),
        ({"spark_conf": {"executor.memory": "2g"}}, "'executor.memory', which is not a spark."),
        ({"spark_conf": {"spark.jars": None}}, "setting 'spark.jars' must be a string"),
        ({"spark_conf": {"spark.x": {"y": 1}}}, "setting 'spark.x' must be a string"),
        ({"executor_memory": "lots"}, "key 'executor_memory' must be a Spark memory size"),
        ({"executor_cores": 0}, "key 'executor_cores' must be a whole number >= 1"),
        ({"num_executors": "3"}, "key 'num_executors' must be a whole number >= 1"),
        (
            {"driver_memory": "1g", "spark_conf": {"spark.driver.memory": "2g"}},
            "key 'driver_memory' and spark_conf 'spark.driver.memory'",
        ),
        ({"partition_path_field": [1]}, "key 'partition_path_field' must be a field name"),
    ],
)
def test_bad_spark_settings_name_the_entry_and_key(tables_file, tmp_path, extra, message):
    good = table_entry("fares", tmp_path / "fares", tmp_path / "in")
    path = tables_file([good, table_entry("rides", tmp_path / "rides", tmp_path / "in", **extra)])
    with pytest.raises(TablesConfigError, match="table entry #2 \\('rides'\\)") as raised:
        load_tables(path)
    assert message in str(raised.value)


def test_storage_options_are_table_options_and_other_names_are_refused(tables_file, tmp_path):
    """fs.* (Hadoop-style storage options) sit beside hoodie.* in a table's options; any other
    name is a typo the entry's error names."""
    storage = {"fs.s3a.endpoint": "http://127.0.0.1:9000", "fs.s3a.path.style.access": True}
    entry = table_entry("trips", "s3a://lake/trips", "s3a://lake/in", options=storage)
    (table,) = load_tables(tables_file([entry]))
    assert table.hoodie_options()["fs.s3a.endpoint"] == "http://127.0.0.1:9000"
    assert table.hoodie_options()["fs.s3a.path.style.access"] == "true"
    typo = table_entry("rides", tmp_path / "r", tmp_path / "in", options={"s3a.endpoint": "x"})
    with pytest.raises(TablesConfigError, match="'s3a.endpoint', which is neither"):
        load_tables(tables_file([typo]))
