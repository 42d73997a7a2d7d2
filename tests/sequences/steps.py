"""The steps of a sequence: what each is (concrete rows, symbolic instants), how one is drawn
at random, and how one runs on a table.

A step names instants symbolically ("the latest write", "the n-th savepoint"), resolved just
before it runs, so a recorded step list replays (and shrinks) on a fresh table.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from hudi_core import HudiTable
from tests.sequences.model import EVENT_TIME, Model, Row, State
from tests.sequences.setup import Setup

SCHEMA = pa.schema(
    [("key", pa.string()), ("part", pa.string()), ("ts", pa.int64()), ("val", pa.int64())]
)
WRITES = (
    "upsert",
    "insert",
    "bulk_insert",
    "delete",
    "insert_overwrite",
    "insert_overwrite_table",
    "delete_partition",
)
SERVICES = (
    "compaction_schedule",
    "compaction_run",
    "clustering_schedule",
    "clustering_run",
    "clean",
    "archive",
    "savepoint",
    "delete_savepoint",
    "restore",
    "rollback",
)
DATA_ACTIONS = ("commit", "deltacommit", "replacecommit", "compaction")
AFTER_FINISHING = math.inf  # a kill that comes once the step is done


@dataclass(frozen=True)
class Step:
    kind: str  # a WRITES operation or a SERVICES name
    rows: tuple[Row, ...] = ()  # a write's rows (deletes: the keys' rows)
    partitions: tuple[str, ...] = ()  # delete_partition
    pick: int = 0  # savepoint: n-th latest write; delete_savepoint/restore: n-th savepoint
    kill: float | None = None  # None: runs in this process; else seconds until SIGKILL
    kill_at: int | None = None  # or: SIGKILL just before the n-th table-changing call

    def __str__(self) -> str:
        what = self.kind
        if self.rows:
            what += " " + ",".join(f"{k}@{p}:ts{t}:v{v}" for k, p, t, v in self.rows)
        if self.partitions:
            what += " " + ",".join(self.partitions)
        if self.kind in ("savepoint", "delete_savepoint", "restore"):
            what += f" pick={self.pick}"
        if self.kill_at is not None:
            what += f" KILL at call {self.kill_at}"
        elif self.kill is not None:
            what += " KILL " + ("after" if self.kill == AFTER_FINISHING else f"{self.kill:.3f}s")
        return what


@dataclass
class Plan:
    """A step resolved against the table: its target instant and the rows it must leave."""

    target: str | None
    expected: State
    notes: list[str] = field(default_factory=list)


# ---- drawing


def draw(rng: random.Random, setup: Setup, model: Model, index: int) -> Step:
    kind = rng.choice(_kinds(setup, model))
    step = _draw_kind(rng, setup, model, index, kind)
    if rng.random() < setup.kill_rate:
        if rng.random() < 0.5:  # at a moment in time
            return Step(step.kind, step.rows, step.partitions, step.pick, _kill_delay(rng))
        at_call = rng.randint(1, 12)  # at a change: replays the same way
        return Step(step.kind, step.rows, step.partitions, step.pick, AFTER_FINISHING, at_call)
    return step


def _kinds(setup: Setup, model: Model) -> list[str]:
    kinds = ["upsert"] * 4 + ["insert", "bulk_insert", "delete", "delete"]
    kinds += ["insert_overwrite", "insert_overwrite_table"]
    if setup.partitions:
        kinds.append("delete_partition")
    if setup.mor:
        kinds += ["compaction_schedule"] * 2 + ["compaction_run"] * 2
    if setup.index != "BUCKET":
        kinds += ["clustering_schedule", "clustering_run"]
    kinds += ["clean", "archive", "savepoint", "delete_savepoint", "restore", "rollback"]
    return kinds


def _draw_kind(rng: random.Random, setup: Setup, model: Model, index: int, kind: str) -> Step:
    if kind == "delete_partition":
        count = rng.randint(1, len(setup.partition_names))
        return Step(kind, partitions=tuple(sorted(rng.sample(setup.partition_names, count))))
    if kind in WRITES:
        return Step(kind, rows=_rows(rng, setup, model, index, kind))
    return Step(kind, pick=rng.randint(0, 3))


def _rows(rng: random.Random, setup: Setup, model: Model, index: int, kind: str) -> tuple[Row, ...]:
    keys = setup.keys()
    if kind in ("insert", "bulk_insert"):
        keys = [k for k in keys if k not in model.state] or keys[:0]
    if kind == "delete" and model.state and rng.random() < 0.8:
        keys = sorted(model.state)  # mostly keys the table holds
    chosen = rng.sample(keys, rng.randint(min(1, len(keys)), min(4, len(keys))))
    rows = [_row(setup, key, _ts(rng, model, key), index * 100 + n) for n, key in enumerate(chosen)]
    if kind == "upsert" and rows and rng.random() < 0.3:  # a key twice: pre-combine on ts
        key, _, ts, _ = rows[0]
        rows.append(_row(setup, key, ts + rng.choice((-1, 1)), index * 100 + 99))
    for key, _, ts, _ in rows:
        model.seen_ts[key] = max(ts, model.seen_ts.get(key, ts))
    return tuple(rows)


def _ts(rng: random.Random, model: Model, key: str) -> int:
    """A random ordering value; with event-time ordering, a key the table does not hold gets
    one above every value it ever had: whether a lower one loses to a version deleted since
    depends on whether a compaction came between (Apache Hudi's merge-on-read merges the
    incoming record with the base file's, not with the delete in the log)."""
    if model.payload == EVENT_TIME and key not in model.state:
        return model.seen_ts.get(key, -1) + 1 + rng.randint(0, 3)
    return rng.randint(0, 20)


def _row(setup: Setup, key: str, ts: int, val: int) -> Row:
    return (key, setup.partition_of_key(key), ts, val)


def _kill_delay(rng: random.Random) -> float:
    roll = rng.random()
    if roll < 0.15:
        return 0.0
    if roll < 0.3:
        return AFTER_FINISHING
    return rng.uniform(0.0, 0.15) if roll < 0.8 else rng.uniform(0.0, 0.6)


# ---- running


def batch(rows: tuple[Row, ...]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(SCHEMA.names, r, strict=True)) for r in rows], SCHEMA)


def execute(table: HudiTable, step: Step, plan: Plan) -> Any:
    """Runs the step on `table` (in this process or a forked child); what it returned."""
    if step.kind in WRITES:
        options = {}
        if step.kind == "delete_partition":
            options["hoodie.datasource.write.partitions.to.delete"] = ",".join(step.partitions)
        return table.write(batch(step.rows), operation=step.kind, options=options)
    if step.kind == "compaction_schedule":
        return table.compaction.schedule()
    if step.kind == "compaction_run":
        return table.compaction.run()
    if step.kind == "clustering_schedule":
        return table.clustering.schedule()
    if step.kind == "clustering_run":
        return table.clustering.run()
    if step.kind == "clean":
        return table.clean()
    if step.kind == "archive":
        return [str(i) for i in table.archive()]
    assert plan.target is not None, step
    if step.kind == "savepoint":
        return table.savepoint(plan.target)
    if step.kind == "delete_savepoint":
        return table.delete_savepoint(plan.target)
    if step.kind == "restore":
        return table.restore(plan.target)
    if step.kind == "rollback":
        return table.rollback(plan.target)
    raise AssertionError(f"unknown step {step.kind}")
