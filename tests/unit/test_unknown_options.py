"""A misspelt hoodie.* option fails, naming the option meant, at every entry point taking a
user's options; other unknown hoodie.* options (Apache Hudi's that hudi_core does not
implement) are logged once as ignored; keys outside hoodie.* pass silently."""

from __future__ import annotations

import logging
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_core import HudiTable, InvalidOptionError
from hudi_core.config import Options
from hudi_core.config import unknown_options as U
from hudi_core.config.table_config import PROPERTIES_FILE

LOGGER = U.__name__
# (misspelt, meant): a swap, a missing letter, an extra one, a wrong one, two edits, case.
TYPOS = [
    ("hoodie.datasource.write.recordkey.feild", "hoodie.datasource.write.recordkey.field"),
    ("hoodie.cleaner.commits.retaned", "hoodie.cleaner.commits.retained"),
    ("hoodie.cleaner.fileversions.retainned", "hoodie.cleaner.fileversions.retained"),
    ("hoodie.compact.inline.max.delta.comits", "hoodie.compact.inline.max.delta.commits"),
    ("hoodie.parquet.max.fille.sise", "hoodie.parquet.max.file.size"),
    ("hoodie.datasource.streaming.startoffset", "hoodie.datasource.streaming.startOffset"),
    ("hoodie.streamer.transformer.sq", "hoodie.streamer.transformer.sql"),
]
# Apache Hudi options hudi_core does not implement (or implements): none is taken for a typo.
APACHE_HUDI_OPTIONS = [
    "hoodie.metrics.on",
    "hoodie.metrics.reporter.type",
    "hoodie.write.concurrency.mode",
    "hoodie.cleaner.fileversions.retained",
    "hoodie.cleaner.commits.retained",
    "hoodie.datasource.hive_sync.enable",
    "hoodie.datasource.hive_sync.use_jdbc",
    "hoodie.datasource.hive_sync.base_file_format",
    "hoodie.datasource.write.table.name",
    "hoodie.datasource.write.row.writer.enable",
    "hoodie.streamer.source.kafka.topic",
    "hoodie.deltastreamer.source.dfs.root",
    "hoodie.streamer.multiwriter.source.checkpoint.id",
    "hoodie.embed.timeline.server",
    "hoodie.bucket.index.max.num.buckets",
    "hoodie.bucket.index.min.num.buckets",
    "hoodie.memory.merge.fraction",
    "hoodie.memory.compaction.fraction",
    "hoodie.metadata.index.column.stats.enable",
    "hoodie.clustering.async.enabled",
    "hoodie.archive.async",
    "hoodie.clean.async",
    "hoodie.write.lock.zookeeper.url",
    "hoodie.write.lock.client.num_retries",
    "hoodie.write.lock.max_wait_time_ms_between_retry",
    "hoodie.table.cdc.enabled",
    "hoodie.parquet.compression.ratio",
    "hoodie.orc.max.file.size",
    "hoodie.logfile.max.size",
    "hoodie.schema.on.read.enable",
    "hoodie.avro.schema.validate",
    "hoodie.bloom.index.parallelism",
    "hoodie.simple.index.parallelism",
    "hoodie.global.simple.index.parallelism",
    "hoodie.index.class",
    "hoodie.bootstrap.full.input.provider",
]
TYPO, MEANT = TYPOS[1]
MESSAGE = f"unknown option {TYPO}: did you mean {MEANT}"


def _rows(keys: list[str], ts: int = 1) -> pa.Table:
    n = len(keys)
    return pa.table({"uuid": keys, "city": ["sf"] * n, "ts": [ts] * n, "fare": [1.0] * n})


def _create(path: Path, table_type: str = "COPY_ON_WRITE", **kw) -> HudiTable:
    return HudiTable.create(
        str(path),
        name="t",
        table_type=table_type,
        record_key_fields=["uuid"],
        partition_fields=["city"],
        precombine_field="ts",
        **kw,
    )


@pytest.fixture
def table(tmp_path) -> HudiTable:
    table = _create(tmp_path / "t", "MERGE_ON_READ")
    table.write(_rows(["a", "b"]))
    table.write(_rows(["a"], ts=2))
    return table


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch):
    monkeypatch.setattr(U, "_warned", set())


# ---- the rule


@pytest.mark.parametrize(("typo", "meant"), TYPOS)
def test_a_typo_of_a_known_option_fails_naming_it(typo, meant):
    with pytest.raises(InvalidOptionError, match=f"did you mean {meant}\\?"):
        U.check_options({typo: "1"})


@pytest.mark.parametrize("key", APACHE_HUDI_OPTIONS)
def test_apache_hudi_options_are_never_taken_for_typos(key):
    U.check_options({key: "1"})


def test_an_unknown_hoodie_option_is_logged_once_as_ignored(caplog):
    caplog.set_level(logging.WARNING, logger=LOGGER)
    U.check_options({"hoodie.metrics.on": "true", "foo.bar": "1"})
    U.check_options({"hoodie.metrics.on": "false"})
    warned = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert len(warned) == 1, warned
    assert "hoodie.metrics.on is not one hudi_core reads: it is ignored" in warned[0]


def test_an_unknown_key_close_to_two_known_ones_is_logged_naming_both(caplog):
    caplog.set_level(logging.WARNING, logger=LOGGER)
    U.check_options({"hoodie.keep.mix.commits": "3"})  # min? max?
    (warned,) = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert "did you mean hoodie.keep.max.commits or hoodie.keep.min.commits?" in warned


def test_keys_outside_hoodie_pass_silently(caplog):
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    U.check_options({"foo.bar": 1, "spark.sql.shuffle.partitions": "4", "fs.s3a.endpont": "x"})
    assert not [r for r in caplog.records if r.name == LOGGER]


def test_known_keys_and_alternatives_pass_silently(caplog):
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    U.check_options(
        {
            "hoodie.datasource.write.recordkey.field": "uuid",
            "hoodie.table.recordkey.fields": "uuid",
            "hoodie.datasource.meta.sync.enable": "true",  # hive_sync.enable's older name
            "hoodie.deltastreamer.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
            "hoodie.deltastreamer.multiwriter.source.checkpoint.id": "a",
            "hoodie.streamer.source.hoodieincr.num_instants": "2",
            "hoodie.deltastreamer.source.hoodieincr.num_instants": "2",
        }
    )
    assert not [r for r in caplog.records if r.name == LOGGER]


def test_commit_metadata_options_pass_under_any_prefix(caplog):
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    prefix = "hoodie.datasource.write.commitmeta.key.prefix"
    U.check_options({prefix: "hoodie.run.", "hoodie.run.task": "x", "hoodie.run.dag": "y"})
    assert not [r for r in caplog.records if r.name == LOGGER]


def test_resolved_options_are_not_checked():
    U.check_options(Options({"hoodie.table.checksu": "1"}))  # hoodie.properties may hold it


def test_an_adjacent_swap_is_one_edit():
    assert U.edit_distance("field", "feild", 2) == 1
    assert U.edit_distance("retained", "retaned", 2) == 1
    assert U.edit_distance("commits", "fileversions", 2) == 3


# ---- every entry point


def test_create_refuses_a_typo_and_makes_no_table(tmp_path):
    with pytest.raises(InvalidOptionError, match=MESSAGE):
        _create(tmp_path / "t", options={TYPO: "1"})
    assert not (tmp_path / "t" / PROPERTIES_FILE).exists()


def test_open_refuses_a_typo(table):
    with pytest.raises(InvalidOptionError, match=MESSAGE):
        HudiTable.open(table.storage.base_path, options={TYPO: "1"})


def test_bootstrap_refuses_a_typo(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    with pytest.raises(InvalidOptionError, match=MESSAGE):
        HudiTable.bootstrap(str(tmp_path / "t"), str(source), "t", options={TYPO: "1"})


def test_write_refuses_a_typo_and_commits_nothing(table):
    before = table.timeline()
    key = "hoodie.datasource.write.recordkey.feild"
    with pytest.raises(InvalidOptionError, match="did you mean hoodie.datasource.write.recordkey"):
        table.write(_rows(["c"]), options={key: "uuid"})
    assert table.timeline() == before


def test_write_logs_an_unknown_option_once(table, caplog):
    caplog.set_level(logging.WARNING, logger=LOGGER)
    table.write(_rows(["c"]), options={"hoodie.metrics.on": "true", "foo.bar": "x"})
    table.write(_rows(["d"]), options={"hoodie.metrics.on": "true"})
    warned = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert len(warned) == 1 and "hoodie.metrics.on" in warned[0]


def test_read_refuses_a_typo(table):
    with pytest.raises(InvalidOptionError, match="did you mean hoodie.datasource.merge.type"):
        table.read(options={"hoodie.datasource.merge.typ": "skip_merge"})


@pytest.mark.parametrize(
    "call",
    [
        lambda t, o: t.clean(o),
        lambda t, o: t.archive(o),
        lambda t, o: t.compaction.schedule(o),
        lambda t, o: t.compaction.run(options=o),
        lambda t, o: t.clustering.schedule(o),
        lambda t, o: t.clustering.run(options=o),
    ],
    ids=["clean", "archive", "schedule compaction", "compact", "schedule clustering", "cluster"],
)
def test_services_refuse_a_typo(table, call):
    before = table.timeline()
    with pytest.raises(InvalidOptionError, match=MESSAGE):
        call(table, {TYPO: "1"})
    assert table.timeline() == before


# ---- spark_jobs (argument and option parsing only: no Spark session)


@pytest.mark.spark
def test_spark_job_hoodie_conf_refuses_a_typo(tmp_path):
    from spark_jobs import cli

    args = cli.parser("clean", "test").parse_args(
        ["--base-path", str(tmp_path), "--hoodie-conf", f"{TYPO}=1", "--hoodie-conf", "foo.bar=1"]
    )
    with pytest.raises(InvalidOptionError, match=MESSAGE):
        cli.hoodie_options(args)


@pytest.mark.spark
def test_spark_job_props_file_refuses_a_typo(tmp_path):
    from spark_jobs import cli

    props = tmp_path / "job.properties"
    props.write_text(f"hoodie.table.name=t\n{TYPO}=1\n")
    args = cli.parser("clean", "test").parse_args(["--base-path", "x", "--props", str(props)])
    with pytest.raises(InvalidOptionError, match=MESSAGE):
        cli.hoodie_options(args)


@pytest.mark.spark
def test_spark_job_hoodie_conf_keeps_other_options(tmp_path):
    from spark_jobs import cli

    args = cli.parser("clean", "test").parse_args(
        ["--base-path", "x", "--hoodie-conf", "hoodie.metrics.on=true", "--hoodie-conf", "a.b=1"]
    )
    assert cli.hoodie_options(args) == {"hoodie.metrics.on": "true", "a.b": "1"}


@pytest.mark.spark
def test_spark_write_refuses_a_typo_before_touching_the_table(tmp_path):
    from spark_jobs.save import write

    with pytest.raises(InvalidOptionError, match=MESSAGE):
        write(None, str(tmp_path / "t"), options={TYPO: "1"})  # type: ignore[arg-type]
    assert not (tmp_path / "t").exists()


# ---- the Airflow tables file


@pytest.mark.airflow
def test_tables_file_refuses_a_typo_in_an_entry_options(tmp_path):
    import yaml

    from hudi_airflow.tables_config import read_tables

    def entry(name: str, **extra: object) -> dict:
        return {
            "name": name,
            "base_path": str(tmp_path / name),
            "table_type": "MERGE_ON_READ",
            "record_key_field": "uuid",
            "partition_path_field": "city",
            "precombine_field": "ts",
            "source_path": str(tmp_path / "in"),
            "source_format": "parquet",
            **extra,
        }

    entries = [
        entry("rides"),
        entry("fares", options={TYPO: "1"}),
        entry("trips", options={"hoodie.metrics.on": "true"}),
    ]
    path = tmp_path / "tables.yaml"
    path.write_text(yaml.safe_dump({"tables": entries}, sort_keys=False))
    tables = read_tables(path)
    assert [e.name for e in tables.entries] == ["rides", "trips"]
    (error,) = tables.errors
    assert "key 'options'" in error.message and MESSAGE in error.message
