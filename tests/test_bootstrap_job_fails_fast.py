"""spark_jobs/bootstrap.py given what cannot work fails in about a second, as every job does
(tests/unit/test_jobs_fail_fast.py): one line of error naming the problem, the FAILED result
line, exit code 1 and no JVM started; and nothing is written at the base path."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from hudi_core import HudiTable
from tests import bootstrap_source
from tests.unit.test_jobs_fail_fast import assert_failed_fast, fake_java  # noqa: F401

TABLE = ["--table-name", "trips", "--record-key-fields", "uuid", "--partition-fields", "city"]


@pytest.fixture
def source(tmp_path: Path) -> Path:
    folder = tmp_path / "source"
    bootstrap_source.write_source(folder)
    return folder


@pytest.mark.parametrize(
    ("argv", "error", "problem"),
    [
        ([*TABLE], "InvalidOptionError", "--source-path or hoodie.bootstrap.base.path"),
        (
            ["--source-path", "{source}", "--table-name", "trips"],
            "TableNotFoundError",
            "--record-key-fields",
        ),
        (["--source-path", "{source}", *TABLE[2:]], "TableNotFoundError", "--table-name"),
        (["--source-path", "{tmp}/missing", *TABLE], "BootstrapError", "does not exist"),
        (
            ["--source-path", "{source}", *TABLE, "--table-type", "MERGE_ON_WRITE"],
            "InvalidOptionError",
            "MERGE_ON_WRITE",
        ),
        (
            [
                "--source-path",
                "{source}",
                *TABLE,
                "--hoodie-conf",
                "hoodie.bootstrap.base.path={tmp}/other",
            ],
            "InvalidOptionError",
            "name different datasets",
        ),
        (
            [
                "--source-path",
                "{source}",
                *TABLE,
                "--hoodie-conf",
                "hoodie.bootstrap.parallelism=0",
            ],
            "InvalidOptionError",
            "hoodie.bootstrap.parallelism",
        ),
    ],
)
def test_what_cannot_work_fails_fast_without_a_jvm(
    argv,
    error,
    problem,
    source,
    fake_java,  # noqa: F811 (the fixture imported above)
    tmp_path,
):
    base = tmp_path / "trips"
    argv = [arg.format(source=source, tmp=tmp_path) for arg in argv]
    line = assert_failed_fast(
        "bootstrap", ["--base-path", str(base), *argv], fake_java, tmp_path, problem
    )
    assert line["error"].startswith(error), line
    assert not base.exists()


def test_a_table_of_another_name_is_refused(source, fake_java, tmp_path):  # noqa: F811
    path = str(tmp_path / "trips")
    HudiTable.create(path, "orders", record_key_fields=["uuid"])
    argv = ["--base-path", path, "--source-path", str(source), *TABLE]
    line = assert_failed_fast("bootstrap", argv, fake_java, tmp_path, "(orders)")
    assert line["error"].startswith("InvalidOptionError"), line
    assert HudiTable.open(path).timeline() == []


def test_help_shows_every_flags_default(capsys):
    bootstrap = importlib.import_module("spark_jobs.bootstrap")
    with pytest.raises(SystemExit) as exited:
        bootstrap.main(["--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--source-path", "--record-key-fields", "--partition-fields", "--table-type"):
        assert flag in out
    assert "(default: COPY_ON_WRITE)" in out
