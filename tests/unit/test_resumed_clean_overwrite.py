"""Random sequence seed 302: a clean planned while a partition held only replaced file groups
(so its plan deletes the partition folder) was killed, an insert_overwrite then wrote the
partition again, and the next clean resumed the old plan: the folder went with the new base
file, and the table (and time travel to the insert_overwrite) lost its rows. A bucket-index
table as in the seed; the result is checked against a model and against hudi-rs."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudi_core import HudiTable
from hudi_core.services import cleaner
from tests import oracle


def _rows(*rows: tuple[str, str, int]) -> pa.Table:
    return pa.table(
        {"key": [r[0] for r in rows], "part": [r[1] for r in rows], "ts": [r[2] for r in rows]}
    )


def _keys(table: pa.Table) -> list[tuple[str, str]]:
    keys, parts = table.column("key").to_pylist(), table.column("part").to_pylist()
    return sorted(zip(keys, parts, strict=True))


class _Killed(Exception):
    pass


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_resumed_clean_keeps_an_insert_overwrite_since_its_plan(tmp_path, table_type, monkeypatch):
    path = str(tmp_path / "t")
    table = HudiTable.create(
        path,
        "t",
        table_type=table_type,
        record_key_fields=["key"],
        partition_fields=["part"],
        precombine_field="ts",
        options={
            "hoodie.index.type": "BUCKET",
            "hoodie.bucket.index.num.buckets": 2,
            "hoodie.cleaner.commits.retained": 1,
        },
    )
    table.write(_rows(("k0", "p0", 1)), operation="insert")
    table.write(_rows(("k1", "p1", 1)), operation="upsert")
    table.write(_rows(("k0", "p0", 2)), operation="delete_partition")
    table.write(_rows(("k1", "p1", 2)), operation="upsert")
    model = {("k1", "p1")}

    def killed(*args: object, **kwargs: object) -> None:  # dies once the plan is written
        raise _Killed

    with monkeypatch.context() as patched:
        patched.setattr(cleaner, "_delete_files", killed)
        with pytest.raises(_Killed):
            table.clean()
    pending = [i for i in table.timeline() if i.action == "clean" and not i.is_completed]
    assert pending, "the killed clean left its plan (which deletes partition p0 whole)"

    table.write(_rows(("k2", "p0", 3)), operation="insert_overwrite")
    overwrite = table.timeline()[-1]
    assert overwrite.action == "replacecommit" and overwrite.is_completed
    model |= {("k2", "p0")}

    table.clean()  # resumes the old plan first
    assert all(i.is_completed for i in table.timeline() if i.action == "clean")
    expected = sorted(model)
    assert _keys(table.read()) == expected
    assert _keys(oracle.snapshot(path)) == expected
    as_of = overwrite.timestamp
    assert _keys(table.read(as_of=as_of)) == expected
    assert _keys(oracle.snapshot(path, as_of=as_of)) == expected
