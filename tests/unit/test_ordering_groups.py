"""Ordering groups (multi-stream wide tables): each stream's columns ordered by its own field.

The snapshot must equal a per-group-maximum model of the commits, whatever order the streams'
batches are committed in, before and after compaction; hudi-rs, which cannot merge partial
updates, checks the compacted files.
"""

from __future__ import annotations

import random
from typing import Any

import pyarrow as pa
import pytest

from hudi_core import HudiTable, InvalidOptionError, PrecombineFieldError, SchemaError
from hudi_core.merge.ordering_groups import OrderingGroups
from hudi_core.merge.record_merger import DEFAULT_PAYLOAD
from tests import oracle

PARTIAL = "org.apache.hudi.common.model.PartialUpdateAvroPayload"
SPEC = "_ts1:name,price;_ts2:age;_ts3:city"
GROUPS = OrderingGroups.parse(SPEC)
STREAMS = {  # stream -> (ordering field, its columns and their value makers)
    "A": ("_ts1", {"name": lambda r: f"n{r.randrange(100)}", "price": lambda r: r.random()}),
    "B": ("_ts2", {"age": lambda r: r.randrange(100)}),
    "C": ("_ts3", {"city": lambda r: r.choice(["sf", "nyc", "ber"])}),
}
COLUMNS = ["uuid", "name", "price", "_ts1", "_hoodie_is_deleted", "age", "_ts2", "city", "_ts3"]
SCHEMAS = {
    "A": pa.schema(
        [
            ("uuid", pa.string()),
            ("name", pa.string()),
            ("price", pa.float64()),
            ("_ts1", pa.int64()),
            ("_hoodie_is_deleted", pa.bool_()),
        ]
    ),
    "B": pa.schema([("uuid", pa.string()), ("age", pa.int64()), ("_ts2", pa.int64())]),
    "C": pa.schema([("uuid", pa.string()), ("city", pa.string()), ("_ts3", pa.string())]),
}
OPTIONS = {
    "hoodie.datasource.write.payload.class": PARTIAL,
    "hoodie.index.type": "BUCKET",
    "hoodie.bucket.index.num.buckets": "3",
    "hoodie.compact.inline.max.delta.commits": "1",
}


# ---- the model: commits applied in order, each group's maximum, deletes resetting the row


def model(commits: list[tuple[str, list[dict[str, Any]]]]) -> dict[str, dict[str, Any]]:
    owner = GROUPS.owner()
    history: dict[str, list[dict[str, Any] | None]] = {}
    for operation, rows in commits:
        for row in rows:
            if operation == "delete" or row.get("_hoodie_is_deleted"):
                history[row["uuid"]] = [None]  # the row as it stood is gone
            else:
                history.setdefault(row["uuid"], []).append(row)
    state = {}
    for key, versions in history.items():
        if versions[-1] is None:
            continue
        live = [(seq, v) for seq, v in enumerate(versions) if v is not None]
        row = {}
        for column in COLUMNS:
            group = owner.get(column)
            if group is None:  # the newest value written
                candidates = [(seq, v) for seq, v in live if v.get(column) is not None]
            else:  # the group's columns of its version with the largest ordering value
                carried = group.columns
                candidates = [
                    (seq, v) for seq, v in live if any(v.get(c) is not None for c in carried)
                ]
            if not candidates:
                row[column] = None
                continue
            if group is None:
                _, newest = max(candidates, key=lambda c: c[0])
            else:
                order = group.field
                _, newest = max(
                    candidates,
                    key=lambda c: (c[1].get(order) is not None, c[1].get(order) or 0, c[0]),
                )
            row[column] = newest.get(column)
        state[key] = row
    return state


def batch(rng: random.Random, stream: str, keys: list[str]) -> list[dict[str, Any]]:
    """A stream's rows: duplicate keys, out-of-order and equal ordering values, a few nulls."""
    field, makers = STREAMS[stream]
    rows = []
    for _ in range(rng.randint(1, 8)):
        ordering = rng.choice([None, *range(1, 6)]) if rng.random() < 0.9 else None
        row: dict[str, Any] = {"uuid": rng.choice(keys), field: ordering}
        if stream == "C" and ordering is not None:
            row[field] = f"2024-01-0{ordering}"  # a string ordering field orders too
        for column, make in makers.items():
            row[column] = make(rng) if rng.random() < 0.85 else None
        if stream == "A":
            row["_hoodie_is_deleted"] = rng.random() < 0.1
        rows.append(row)
    return rows


def random_commits(seed: int, streams: str) -> list[tuple[str, str, list[dict[str, Any]]]]:
    rng = random.Random(seed)
    keys = [f"k{i}" for i in range(12)]
    per_stream = {s: [("upsert", s, batch(rng, s, keys)) for _ in range(4)] for s in streams}
    commits = [c for batches in per_stream.values() for c in batches]
    rng.shuffle(commits)  # any interleaving, any commit order
    for _ in range(2):
        deleted = [{"uuid": k} for k in rng.sample(keys, 2)]
        commits.insert(rng.randrange(len(commits) + 1), ("delete", "", deleted))
    return commits


def write(table: HudiTable, commit: tuple[str, str, list[dict[str, Any]]]) -> None:
    operation, stream, rows = commit
    if operation == "delete":
        table.write(pa.Table.from_pylist(rows), "delete")
    else:
        table.write(pa.Table.from_pylist(rows, schema=SCHEMAS[stream]), "upsert")


def rows_of(table: pa.Table) -> dict[str, dict[str, Any]]:
    present = [c for c in COLUMNS if c in table.column_names]
    out = {}
    for row in table.select(present).to_pylist():
        out[row["uuid"]] = {c: row.get(c) for c in COLUMNS}
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("streams", ["AB", "ABC"])
def test_merge_on_read_equals_the_per_group_model(tmp_path, seed, streams):
    commits = random_commits(seed, streams)
    table = HudiTable.create(
        str(tmp_path / "t"), "wide", "MERGE_ON_READ", ["uuid"], [], SPEC, options=OPTIONS
    )
    compact_after = random.Random(seed).randrange(len(commits))
    for number, commit in enumerate(commits):
        write(table, commit)
        if number == compact_after:  # a compaction in the middle changes nothing either
            table.compaction.schedule()
            table.compaction.run()
    expected = model([(op, rows) for op, _, rows in commits])
    assert rows_of(table.read()) == expected
    table.compaction.schedule()  # None when the last commits left no log behind
    table.compaction.run()
    assert table.compaction.pending() == []
    assert rows_of(table.read()) == expected
    read_optimized = oracle.snapshot(
        str(tmp_path / "t"), hudi_options={"hoodie.read.use.read_optimized.mode": "true"}
    )
    assert rows_of(read_optimized) == expected


@pytest.mark.parametrize("seed", range(3))
def test_copy_on_write_equals_the_per_group_model(tmp_path, seed):
    commits = random_commits(seed, "AB")
    options = {k: v for k, v in OPTIONS.items() if "bucket" not in k and "index" not in k}
    table = HudiTable.create(
        str(tmp_path / "t"), "wide", "COPY_ON_WRITE", ["uuid"], [], SPEC, options=options
    )
    for commit in commits:
        write(table, commit)
    expected = model([(op, rows) for op, _, rows in commits])
    assert rows_of(table.read()) == expected
    assert rows_of(oracle.snapshot(str(tmp_path / "t"))) == expected


def test_a_key_deleted_and_written_again_in_one_batch_starts_afresh(tmp_path):
    table = HudiTable.create(
        str(tmp_path / "t"), "wide", "MERGE_ON_READ", ["uuid"], [], SPEC, options=OPTIONS
    )
    write(table, ("upsert", "B", [{"uuid": "k", "age": 40, "_ts2": 9}]))
    rows = [
        {"uuid": "k", "name": "x", "price": 1.0, "_ts1": 5, "_hoodie_is_deleted": True},
        {"uuid": "k", "name": "y", "price": None, "_ts1": 1, "_hoodie_is_deleted": False},
    ]
    write(table, ("upsert", "A", rows))
    (row,) = table.read().select(["name", "price", "_ts1", "age", "_ts2"]).to_pylist()
    assert row == {"name": "y", "price": None, "_ts1": 1, "age": None, "_ts2": None}


def test_the_groups_live_in_their_own_table_property(tmp_path):
    table = HudiTable.create(
        str(tmp_path / "t"), "wide", "MERGE_ON_READ", ["uuid"], [], SPEC, options=OPTIONS
    )
    properties = (tmp_path / "t" / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.table.ordering.groups=" in properties
    assert "hoodie.table.precombine.field" not in properties  # hudi-rs would refuse the table
    assert table.config.precombine_field == SPEC


@pytest.mark.parametrize(
    "spec, message",
    [
        ("_ts1:name;_ts2:name", "named twice"),
        ("_ts1:name;_ts1:age", "named twice"),
        ("_ts1:name;age:_ts1", "named twice"),
        ("_ts1:;_ts2:age", "is not <ordering field>:<column>"),
        (":name", "is not <ordering field>:<column>"),
    ],
)
def test_bad_group_specs_are_refused(spec, message):
    with pytest.raises(InvalidOptionError, match=message):
        OrderingGroups.parse(spec)


def test_groups_need_the_partial_update_payload(tmp_path):
    options = {
        **OPTIONS,
        "hoodie.datasource.write.payload.class": DEFAULT_PAYLOAD,
    }
    with pytest.raises(InvalidOptionError, match="PartialUpdateAvroPayload"):
        table = HudiTable.create(
            str(tmp_path / "t"), "wide", "MERGE_ON_READ", ["uuid"], [], SPEC, options=options
        )
        write(table, ("upsert", "B", [{"uuid": "k", "age": 40, "_ts2": 9}]))


def test_a_batch_must_carry_whole_groups(tmp_path):
    table = HudiTable.create(
        str(tmp_path / "t"), "wide", "MERGE_ON_READ", ["uuid"], [], SPEC, options=OPTIONS
    )
    with pytest.raises(PrecombineFieldError, match="none of the ordering fields"):
        table.write(pa.table({"uuid": ["k"], "other": [1]}), "upsert")
    with pytest.raises(PrecombineFieldError, match="column 'age' belongs to the ordering group"):
        table.write(pa.table({"uuid": ["k"], "age": [1], "_ts1": [1]}), "upsert")
    assert table.timeline() == []  # nothing was written


# ---- the classic example: two streams, one wide row per uuid


def classic_table(path: str, partitioned: bool) -> HudiTable:
    options = {**OPTIONS, "hoodie.bucket.index.num.buckets": "2"}
    fields: list[str] = []
    if partitioned:
        fields = ["event_time"]
        options.update(
            {
                "hoodie.datasource.write.keygenerator.class": (
                    "org.apache.hudi.keygen.TimestampBasedKeyGenerator"
                ),
                "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
                "hoodie.keygen.timebased.output.dateformat": "yyyyMMdd",
            }
        )
    return HudiTable.create(
        path, "classic", "MERGE_ON_READ", ["uuid"], fields, "_ts1:name;_ts2:age", options=options
    )


DAY = 1_700_000_000_000  # 2023-11-14 in epoch milliseconds


@pytest.mark.parametrize("partitioned", [False, True])
def test_classic_two_streams_read_back_as_one_wide_row(tmp_path, partitioned):
    path = str(tmp_path / "t")
    table = classic_table(path, partitioned)
    stream_a = pa.table(
        {
            "uuid": ["u1", "u2", "u1"],
            "name": ["ann", "bob", "ann-late"],
            "_ts1": [DAY + 2000, DAY + 2000, DAY + 1000],  # the last is a late event
            "event_time": [DAY, DAY + 86_400_000, DAY],
        }
    )
    stream_b = pa.table(
        {
            "uuid": ["u1", "u2"],
            "age": [31, 42],
            "_ts2": [DAY + 5000, DAY + 5000],
            "event_time": [DAY, DAY + 86_400_000],
        }
    )
    table.write(stream_a.slice(0, 2), "upsert")
    table.write(stream_b, "upsert")
    table.write(stream_a.slice(2), "upsert")
    table.write(
        stream_b.set_column(1, "age", pa.array([30, 40])).set_column(
            2, "_ts2", pa.array([DAY, DAY])
        ),
        "upsert",
    )
    expected = {
        ("u1", "ann", 31),
        ("u2", "bob", 42),
    }
    got = table.read(columns=["uuid", "name", "age", "_hoodie_partition_path"]).to_pylist()
    assert {(r["uuid"], r["name"], r["age"]) for r in got} == expected
    if partitioned:
        assert {r["_hoodie_partition_path"] for r in got} == {"20231114", "20231115"}
    table.compaction.schedule()
    table.compaction.run()
    read_optimized = oracle.snapshot(
        path, hudi_options={"hoodie.read.use.read_optimized.mode": "true"}
    )
    assert {(r["uuid"], r["name"], r["age"]) for r in read_optimized.to_pylist()} == expected


def test_a_stream_without_the_partition_field_is_refused(tmp_path):
    table = classic_table(str(tmp_path / "t"), partitioned=True)
    with pytest.raises(SchemaError, match="partition field 'event_time': the batch lacks it"):
        table.write(pa.table({"uuid": ["u1"], "age": [31], "_ts2": [DAY]}), "upsert")
    with pytest.raises(SchemaError, match="1 rows without a value"):
        table.write(
            pa.table(
                {
                    "uuid": ["u1"],
                    "age": [31],
                    "_ts2": [DAY],
                    "event_time": pa.array([None], pa.int64()),
                }
            ),
            "upsert",
        )
    assert table.timeline() == []
