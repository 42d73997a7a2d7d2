"""Tables whose columns are declared not null: deletes (whose rows carry no values) still merge,
in reads and in compaction, under every payload; and a payload given at create time persists."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudi_core import HudiTable
from tests import oracle

PAYLOADS = [
    None,
    "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
    "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
    "org.apache.hudi.common.model.PartialUpdateAvroPayload",
]
SCHEMA = pa.schema(
    [
        pa.field("uuid", pa.string(), nullable=False),
        pa.field("ts", pa.int64(), nullable=False),
        pa.field("v", pa.string(), nullable=False),
    ]
)


def _rows(keys: list[str], ts: int, value: str) -> pa.Table:
    n = len(keys)
    return pa.table({"uuid": keys, "ts": [ts] * n, "v": [value] * n}, schema=SCHEMA)


def _read(table: HudiTable) -> dict[str, tuple[int, str]]:
    rows = table.read().select(["uuid", "ts", "v"]).to_pylist()
    return {r["uuid"]: (r["ts"], r["v"]) for r in rows}


@pytest.mark.parametrize("payload", PAYLOADS)
@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_a_delete_merges_into_not_null_columns(tmp_path, table_type, payload):
    options = {"hoodie.compaction.payload.class": payload} if payload else None
    path = str(tmp_path / "t")
    table = HudiTable.create(
        path,
        "t",
        table_type=table_type,
        record_key_fields=["uuid"],
        precombine_field="ts",
        options=options,
    )
    table.write(_rows(["a", "b", "c"], 1, "x"), operation="upsert")
    table.write(_rows(["a"], 2, "gone"), operation="delete")
    table.write(_rows(["c"], 3, "y"), operation="upsert")
    expected = {"b": (1, "x"), "c": (3, "y")}
    assert _read(table) == expected
    if not (table_type == "MERGE_ON_READ" and payload == PAYLOADS[-1]):
        # hudi-rs refuses merge-on-read tables of a partial-update payload (a merger of its own)
        theirs = oracle.snapshot(path).select(["uuid", "ts", "v"]).to_pylist()
        assert {r["uuid"]: (r["ts"], r["v"]) for r in theirs} == expected
    if table_type == "MERGE_ON_READ":
        assert table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": 1})
        table.compaction.run()
        assert _read(table) == expected


def test_a_payload_given_at_create_is_the_tables(tmp_path):
    payload = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
    path = str(tmp_path / "t")
    HudiTable.create(
        path,
        "t",
        record_key_fields=["uuid"],
        precombine_field="ts",
        options={"hoodie.compaction.payload.class": payload},
    )
    properties = (tmp_path / "t" / ".hoodie" / "hoodie.properties").read_text()
    assert f"hoodie.compaction.payload.class={payload}" in properties
