"""The paths of issue 33's findings, walked through the public API: each bad input or broken
state ends in a HudiError that says what went wrong, never a raw Python exception; the paths
that must simply work (a first delete, deletes on not-null columns) raise nothing. The Spark
data source's paths are walked in tests/spark/test_datasource_errors.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_core import HudiError, HudiTable
from tests import bootstrap_source

TYPO = {"hoodie.cleaner.commits.retaned": "1"}
UNREACHABLE = {
    "fs.s3a.endpoint": "http://127.0.0.1:1",  # nothing listens on port 1
    "fs.s3a.access.key": "key",
    "fs.s3a.secret.key": "secret",
    "fs.s3a.endpoint.region": "us-east-1",
    "fs.s3a.attempts.maximum": "1",
}
NOT_NULL = pa.schema(
    [
        pa.field("key", pa.string(), nullable=False),
        pa.field("part", pa.string(), nullable=False),
        pa.field("ts", pa.int64(), nullable=False),
    ]
)


def _rows(keys: list[str], ts: int = 1, part: str = "p1") -> pa.Table:
    n = len(keys)
    return pa.table({"key": keys, "part": [part] * n, "ts": [ts] * n}, schema=NOT_NULL)


def _table(tmp: Path, table_type: str = "MERGE_ON_READ") -> HudiTable:
    return HudiTable.create(
        str(tmp / "t"),
        "t",
        table_type=table_type,
        record_key_fields=["key"],
        partition_fields=["part"],
        precombine_field="ts",
    )


def _written(tmp: Path) -> HudiTable:
    table = _table(tmp)
    table.write(_rows(["k1", "k2"]), operation="upsert")
    table.write(_rows(["k1"], ts=2), operation="upsert")
    return table


def _missing_planned_file(tmp: Path) -> None:
    table = _written(tmp)
    assert table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": 1})
    for log in (tmp / "t" / "p1").glob(".*.log.*"):
        log.unlink()
    table.compaction.run()


def _bootstrap_with_a_wrong_key(tmp: Path) -> None:
    source = tmp / "source"
    bootstrap_source.write_source(source)
    HudiTable.bootstrap(str(tmp / "t"), str(source), "t", record_key_fields=["nope"])


FAILING: dict[str, Callable[[Path], object]] = {
    "typo: create": lambda tmp: HudiTable.create(
        str(tmp / "t"), "t", record_key_fields=["key"], options=TYPO
    ),
    "typo: open": lambda tmp: HudiTable.open(_table(tmp).storage.base_path, TYPO),
    "typo: write": lambda tmp: _table(tmp).write(_rows(["k1"]), options=TYPO),
    "typo: read": lambda tmp: _written(tmp).read(options=TYPO),
    "typo: clean": lambda tmp: _written(tmp).clean(TYPO),
    "typo: archive": lambda tmp: _written(tmp).archive(TYPO),
    "typo: compaction": lambda tmp: _written(tmp).compaction.schedule(TYPO),
    "typo: clustering": lambda tmp: _written(tmp).clustering.schedule(TYPO),
    "the other table type": lambda tmp: _table(tmp).write(
        _rows(["k1"]), options={"hoodie.datasource.write.table.type": "COPY_ON_WRITE"}
    ),
    "a record key field the data lacks": lambda tmp: HudiTable.create(
        str(tmp / "t"), "t", record_key_fields=["nope"]
    ).write(_rows(["k1"])),
    "a bootstrap with a wrong key": _bootstrap_with_a_wrong_key,
    "a compaction whose planned file is gone": _missing_planned_file,
    "an unreachable object store": lambda tmp: HudiTable.open("s3a://bucket/t", UNREACHABLE),
    "a path holding no table": lambda tmp: HudiTable.open(str(tmp)),
}


@pytest.mark.parametrize("path", FAILING, ids=list(FAILING))
def test_a_bad_input_or_state_raises_a_hudi_error(tmp_path, path):
    try:
        FAILING[path](tmp_path)
    except HudiError as error:
        assert str(error).strip()
    except Exception as error:  # noqa: BLE001 - the point: name what escaped
        pytest.fail(f"{path}: a raw {type(error).__name__} escaped: {error}")
    else:
        pytest.fail(f"{path}: nothing was raised")


def _first_commit_a_delete(tmp: Path) -> list[str]:
    table = _table(tmp)
    table.write(_rows(["k1"]), operation="delete")
    return table.read().column("key").to_pylist()


def _delete_on_not_null_columns(tmp: Path) -> list[str]:
    table = _written(tmp)
    table.write(_rows(["k1"], ts=3), operation="delete")
    assert table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": 1})
    table.compaction.run()
    return table.read().column("key").to_pylist()


@pytest.mark.parametrize(
    ("path", "expected"),
    [(_first_commit_a_delete, []), (_delete_on_not_null_columns, ["k2"])],
    ids=["a first commit that deletes", "a delete on not-null columns"],
)
def test_paths_that_must_work_raise_nothing(tmp_path, path, expected):
    assert sorted(path(tmp_path)) == expected
