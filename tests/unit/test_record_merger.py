"""Record mergers (payload classes): each one's semantics, directly and through tables."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest

from hudi_core import HudiTable
from hudi_core.merge.record_merger import (
    DEFAULT_PAYLOAD,
    DELETE_COLUMN,
    EMPTY_PAYLOAD,
    NATURAL_COLUMN,
    OVERWRITE_WITH_LATEST,
    PARTIAL_UPDATE,
    SEQ_COLUMN,
    RecordMerger,
    _replaced_in_place,
)
from tests import oracle


def versions(rows: list[tuple]) -> pa.Table:
    """(key, ts, a, b, delete, natural) in arrival order."""
    keys, ts, a, b, deleted, natural = zip(*rows, strict=True)
    return pa.table(
        {
            "k": pa.array(keys),
            "ts": pa.array(ts, pa.int64()),
            "a": pa.array(a, pa.string()),
            "b": pa.array(b, pa.string()),
            DELETE_COLUMN: pa.array(deleted),
            NATURAL_COLUMN: pa.array(natural),
            SEQ_COLUMN: pa.array(range(len(rows)), pa.int64()),
        }
    )


def survivors(merger: RecordMerger, table: pa.Table) -> dict:
    merged = merger.merge_versions(table, ["k"])
    return {
        r["k"]: None if r[DELETE_COLUMN] else (r["ts"], r["a"], r["b"]) for r in merged.to_pylist()
    }


UPDATE, DELETE, NATURAL_DELETE = (False, False), (True, False), (True, True)


def test_overwrite_with_latest_lets_the_latest_write_win_whatever_its_ordering_value():
    merger = RecordMerger(OVERWRITE_WITH_LATEST, "ts")
    table = versions(
        [
            ("x", 5, "new", "new", *UPDATE),
            ("x", 1, "late", "late", *UPDATE),
            ("y", 1, "y1", "y1", *UPDATE),
            ("y", 9, None, None, *DELETE),
        ]
    )
    assert survivors(merger, table) == {"x": (1, "late", "late"), "y": None}


def test_default_payload_keeps_the_larger_ordering_value_so_late_events_lose():
    merger = RecordMerger(DEFAULT_PAYLOAD, "ts")
    table = versions(
        [
            ("x", 5, "new", "new", *UPDATE),
            ("x", 1, "late", "late", *UPDATE),  # older event, later
            ("t", 3, "first", "", *UPDATE),
            ("t", 3, "second", "", *UPDATE),  # a tie: the later wins
            ("d", 5, "kept", "", *UPDATE),
            ("d", 4, None, None, *DELETE),  # stale delete is ignored
            ("e", 5, "gone", "", *UPDATE),
            ("e", 6, None, None, *DELETE),
        ]
    )
    assert survivors(merger, table) == {
        "x": (5, "new", "new"),
        "t": (3, "second", ""),
        "d": (5, "kept", ""),
        "e": None,
    }


def test_natural_order_deletes_win_and_later_writes_bring_the_key_back():
    for payload in (OVERWRITE_WITH_LATEST, DEFAULT_PAYLOAD, PARTIAL_UPDATE):
        merger = RecordMerger(payload, "ts")
        table = versions(
            [
                ("x", 9, "a", "b", *UPDATE),
                ("x", None, None, None, *NATURAL_DELETE),
                ("y", 9, "a", "b", *UPDATE),
                ("y", None, None, None, *NATURAL_DELETE),
                ("y", 1, "back", "again", *UPDATE),
            ]
        )
        assert survivors(merger, table) == {"x": None, "y": (1, "back", "again")}, payload


def test_partial_update_keeps_stored_values_where_the_incoming_row_has_nulls():
    merger = RecordMerger(PARTIAL_UPDATE, "ts")
    table = versions(
        [
            ("x", 1, "a1", "b1", *UPDATE),
            ("x", 2, None, "b2", *UPDATE),  # newer, a is null
            ("y", 5, "a5", None, *UPDATE),
            ("y", 3, "a3", "b3", *UPDATE),
        ]  # older arrives later
    )
    assert survivors(merger, table) == {"x": (2, "a1", "b2"), "y": (5, "a5", "b3")}


def test_merge_pairs_applies_the_same_rules_to_stored_rows():
    stored = pa.table(
        {"k": ["x", "y", "z"], "ts": [5, 5, 5], "a": ["s", "s", "s"], "b": ["s", "s", "s"]}
    )
    incoming = pa.table(
        {
            "k": ["x", "y", "z"],
            "ts": [1, 6, 9],
            "a": ["i", None, "i"],
            "b": ["i", "i", "i"],
            DELETE_COLUMN: [False, False, True],
            NATURAL_COLUMN: [False, False, False],
        }
    )
    default = RecordMerger(DEFAULT_PAYLOAD, "ts").merge_pairs(stored, incoming)
    assert default.rows.column("a").to_pylist()[:2] == ["s", None]  # late loses; newer wins
    assert default.deleted.tolist() == [False, False, True]
    assert default.changed.tolist()[:2] == [False, True]
    latest = RecordMerger(OVERWRITE_WITH_LATEST, "ts").merge_pairs(stored, incoming)
    assert latest.rows.column("a").to_pylist()[:2] == ["i", None]
    partial = RecordMerger(PARTIAL_UPDATE, "ts").merge_pairs(stored, incoming)
    assert partial.rows.column("a").to_pylist()[:2] == ["s", "s"]  # stored newer; null filled


def test_precombine_compares_ordering_values_for_every_payload():
    for payload in (OVERWRITE_WITH_LATEST, DEFAULT_PAYLOAD):
        batch = pa.table(
            {
                "k": ["x", "x", "x"],
                "ts": [3, 7, 5],
                "a": ["3", "7", "5"],
                DELETE_COLUMN: [False] * 3,
                NATURAL_COLUMN: [False] * 3,
            }
        )
        combined = RecordMerger(payload, "ts").precombine(batch, ["k"])
        assert combined.column("a").to_pylist() == ["7"], payload


def test_unknown_payload_classes_are_refused():
    from hudi_core import InvalidOptionError

    with pytest.raises(InvalidOptionError, match="not supported"):
        RecordMerger("com.example.MyPayload", "ts")
    assert RecordMerger(EMPTY_PAYLOAD, "ts").mode.name == "COMMIT_TIME"


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("payload", [OVERWRITE_WITH_LATEST, DEFAULT_PAYLOAD, PARTIAL_UPDATE])
def test_payloads_through_table_writes(tmp_path, table_type, payload):
    table = HudiTable.create(
        str(tmp_path / "t"),
        name="t",
        table_type=table_type,
        record_key_fields=["id"],
        precombine_field="ts",
        options={
            "hoodie.datasource.write.payload.class": payload,
            "hoodie.parquet.small.file.limit": "0",
        },
    )
    table.write(pa.table({"id": [1, 2], "ts": [10, 10], "a": ["a0", "a0"], "b": ["b0", "b0"]}))
    table.write(pa.table({"id": [1, 2], "ts": [5, 20], "a": ["late", None], "b": ["late", "b2"]}))
    rows = {r["id"]: (r["ts"], r["a"], r["b"]) for r in table.read().to_pylist()}
    expected = {
        OVERWRITE_WITH_LATEST: {1: (5, "late", "late"), 2: (20, None, "b2")},
        DEFAULT_PAYLOAD: {1: (10, "a0", "b0"), 2: (20, None, "b2")},
        PARTIAL_UPDATE: {1: (10, "a0", "b0"), 2: (20, "a0", "b2")},
    }[payload]
    assert rows == expected
    if payload != PARTIAL_UPDATE:  # hudi-rs refuses to merge with PartialUpdateAvroPayload
        oracle.assert_same_table(table.read(), oracle.snapshot(table.storage.base_path))


@pytest.mark.parametrize("changed", [0.02, 0.3, 0.9])
@pytest.mark.parametrize("nulls", [False, True])
def test_rows_replaced_in_place_equal_a_row_by_row_replace(changed, nulls):
    """Every column kind through every path of the in-place replace: kept when unchanged
    (few changed rows), overwritten in numpy (numbers and times without nulls), masked
    (fixed width with nulls), gathered (strings, nested); always the row-by-row result."""
    rng = np.random.default_rng(7)
    n = 400
    positions = np.sort(rng.choice(n, int(n * changed), replace=False))

    def column(seed: int, length: int) -> dict[str, pa.Array]:
        values = np.arange(length) + seed
        mask = (values % 7 == 0) if nulls else None
        return {
            "i": pa.array(values, pa.int64(), mask=mask),
            "f": pa.array(values * 0.5, pa.float64(), mask=mask),
            "t": pa.array(values * 1000, pa.timestamp("us", tz="UTC"), mask=mask),
            "d": pa.array([dt.date(2020, 1, 1 + v % 28) for v in values], pa.date32(), mask=mask),
            "flag": pa.array(values % 2 == 0, mask=mask),
            "s": pa.array([f"s{v}" for v in values], mask=mask),
            "same": pa.array([f"k{v}" for v in range(length)]),  # equal where replaced
            "l": pa.array([[int(v)] for v in values], pa.list_(pa.int64()), mask=mask),
        }

    stored = pa.table(column(0, n))
    stored = pa.concat_tables([stored.slice(0, n // 3), stored.slice(n // 3)])  # two chunks
    values = pa.table(column(10_000, len(positions)))
    values = values.set_column(6, "same", stored.column("same").take(pa.array(positions)))
    replaced = _replaced_in_place(stored, positions, values)
    expected = stored.to_pylist()
    for position, row in zip(positions, values.to_pylist(), strict=True):
        expected[position] = row
    assert replaced.schema == stored.schema
    assert replaced.to_pylist() == expected


def test_a_replaced_float_keeps_its_sign_where_equal_compares_equal():
    stored = pa.table({"f": pa.array([-0.0, 1.0, 2.0, 3.0]), "n": pa.array([[-0.0]] * 4)})
    values = pa.table({"f": pa.array([0.0]), "n": pa.array([[0.0]])})
    replaced = _replaced_in_place(stored, np.array([0]), values)
    assert np.signbit(replaced.column("f").to_numpy()).tolist() == [False] * 4
    assert not np.signbit(replaced.column("n")[0].as_py()[0])
