"""One seeded sequence: draw (or replay) steps, run each (some in a child killed midway), settle
the model on the outcome the table shows, and check; on a failure, the seed, the setup and the
steps, and a shrunk step list."""

from __future__ import annotations

import random
import shutil
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from hudi_core import HudiTable
from hudi_core.errors import ServiceError, WriteConflictError
from tests.sequences import checks
from tests.sequences.kills import run_killed
from tests.sequences.model import Model
from tests.sequences.setup import Setup
from tests.sequences.steps import DATA_ACTIONS, SCHEMA, WRITES, Plan, Step, draw, execute

# Refusals a step may meet, leaving the table as it was: an update of a file group under
# pending clustering; a rollback, savepoint or restore the timeline does not allow.
REFUSALS = (WriteConflictError, ServiceError)


@dataclass
class Result:
    seed: int
    setup: Setup
    steps: list[Step] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    kills: int = 0
    refusals: list[str] = field(default_factory=list)
    failure: str | None = None
    seconds: float = 0.0

    def report(self) -> str:
        lines = [
            f"sequence seed={self.seed} failed at step {len(self.steps) - 1}: {self.failure}",
            f"setup: {self.setup}",
            f"replay: HUDI_SEQUENCE_SEED={self.seed} .venv/bin/python -m pytest tests/sequences "
            "-p no:cacheprovider -k replay",
            "steps:",
            *(f"  {n:3d} {line}" for n, line in enumerate(self.log)),
        ]
        return "\n".join(lines)


def create(path: Path, setup: Setup) -> None:
    HudiTable.create(
        str(path),
        "seq",
        setup.table_type,
        record_key_fields=["key"],
        partition_fields=["part"] if setup.partitions else [],
        precombine_field="ts",
        options=setup.options,
        schema=SCHEMA,
    )


def run_sequence(
    seed: int, root: Path, length: int, steps: list[Step] | None = None, keep: bool = False
) -> Result:
    """Runs `length` drawn steps (or `steps`) on a new table under `root` (removed after a
    success unless `keep`)."""
    rng = random.Random(seed)
    setup = Setup.draw(rng)
    result = Result(seed, setup)
    path = root / f"seq-{seed}-{time.monotonic_ns()}"
    started = time.monotonic()
    model = Model(partitioned=setup.partitions > 0, payload=setup.payload)
    try:
        create(path, setup)
        for index in range(len(steps) if steps is not None else length):
            step = steps[index] if steps is not None else draw(rng, setup, model, index)
            result.steps.append(step)
            result.log.append(str(step))
            result.log[-1] += " -> " + _one_step(path, setup, model, step, rng, result)
    except checks.Divergence as divergence:
        result.failure = str(divergence)
    except Exception as error:  # noqa: BLE001 - the table (or the harness) broke: report it
        result.failure = f"{type(error).__name__}: {error}\n{traceback.format_exc()}"
    result.seconds = time.monotonic() - started
    if result.failure is None and not keep:
        shutil.rmtree(path, ignore_errors=True)
    else:
        result.log.append(f"(table kept at {path})")
    return result


def _one_step(
    path: Path, setup: Setup, model: Model, step: Step, rng: random.Random, result: Result
) -> str:
    table = HudiTable.open(str(path), setup.options)
    plan = resolve(step, table, model, setup)
    if plan is None:
        return "skipped (not applicable)"
    pending_before = checks.pending(table)
    outcome, note = _perform(path, setup, step, plan)
    if outcome == "killed":
        result.kills += 1
        outcome, note = _after_kill(path, setup, model, step, plan)
    if outcome == "refused":
        result.refusals.append(f"{step.kind}: {note}")
    _settle(model, step, plan, outcome == "after")
    table = HudiTable.open(str(path), setup.options)
    for instant in checks.completed_data_instants(table):
        model.record(instant)
    checks.note_cleans(table, model)
    travelled = _check(table, model, setup, rng, step, outcome, pending_before)
    return f"{outcome} {note}{travelled}".rstrip()


def resolve(step: Step, table: HudiTable, model: Model, setup: Setup) -> Plan | None:
    """The step's target instant and the rows it must leave; None when it does not apply."""
    if step.kind in WRITES:
        return _resolve_write(step, model)
    if step.kind.startswith("compaction") and not setup.mor:
        return None
    timeline = table.timeline()
    if step.kind == "savepoint":
        data = [i for i in checks.completed_data_instants(table) if i in model.history]
        return Plan(data[-1 - step.pick % len(data)], model.state) if data else None
    if step.kind in ("delete_savepoint", "restore"):
        points = checks.savepoints(timeline)
        if not points:
            return None
        target = points[step.pick % len(points)]
        if step.kind == "delete_savepoint":
            return Plan(target, model.state)
        return Plan(target, model.history[target]) if target in model.history else None
    if step.kind == "rollback":
        writes = [i for i in timeline if i.action in DATA_ACTIONS]
        if not writes:
            return None
        latest = max(writes, key=lambda i: i.timestamp)
        expected = model.before(latest.timestamp) if latest.is_completed else model.state
        return Plan(latest.timestamp, expected, [f"of {latest.action} {latest.timestamp}"])
    return Plan(None, model.state)


def _resolve_write(step: Step, model: Model) -> Plan | None:
    rows = list(step.rows)
    if step.kind in ("insert", "bulk_insert"):
        if {r[0] for r in rows} & set(model.state):
            return None  # a replayed insert of a key held since: Apache Hudi would duplicate it
        return Plan(None, model.insert(rows))
    if step.kind == "upsert":
        return Plan(None, model.upsert(rows))
    if step.kind == "delete":
        return Plan(None, model.delete([r[0] for r in rows]))
    if step.kind == "insert_overwrite":
        return Plan(None, model.insert_overwrite(rows))
    if step.kind == "insert_overwrite_table":
        return Plan(None, model.insert_overwrite_table(rows))
    return Plan(None, model.delete_partition(list(step.partitions)))


def _perform(path: Path, setup: Setup, step: Step, plan: Plan) -> tuple[str, str]:
    """Runs the step: ("after" | "refused" | "killed", a note)."""
    if step.kill is None:
        try:
            returned = execute(HudiTable.open(str(path), setup.options), step, plan)
        except REFUSALS as refusal:
            return "refused", f"{type(refusal).__name__}: {refusal}"
        except Exception as error:
            raise checks.Divergence(
                f"{step.kind} raised {type(error).__name__}: {error}"
            ) from error
        return "after", _shown(returned, plan)
    ended = run_killed(
        lambda: execute(HudiTable.open(str(path), setup.options), step, plan),
        step.kill,
        step.kill_at,
    )
    if not ended.finished:
        return "killed", ""
    if isinstance(ended.error, REFUSALS):
        return "refused", f"{type(ended.error).__name__}: {ended.error}"
    if ended.error is not None:
        detail = "".join(getattr(ended.error, "__notes__", []))
        raise checks.Divergence(
            f"{step.kind} (forked) raised {type(ended.error).__name__}: {ended.error}\n{detail}"
        )
    return "after", _shown(ended.result, plan) + " (finished before the kill)"


def _shown(returned: object, plan: Plan) -> str:
    target = f" {plan.target}" if plan.target else ""
    notes = " ".join(plan.notes)
    return f"{returned!r}{target} {notes}".strip()


def _after_kill(path: Path, setup: Setup, model: Model, step: Step, plan: Plan) -> tuple[str, str]:
    """Which side of the killed step the table is on. A rollback or restore cut off is
    finished by running it again (the documented recovery) before the rows are judged."""
    table = HudiTable.open(str(path), setup.options)
    note = "KILLED"
    if step.kind in ("rollback", "restore") and _pending_undo(table):
        try:
            execute(table, step, plan)
        except Exception as error:
            raise checks.Divergence(
                f"rerunning the killed {step.kind} raised {type(error).__name__}: {error}"
            ) from error
        note += ", rerun"
    rows = checks.ours_now(HudiTable.open(str(path), setup.options))
    if checks.same_state(rows, plan.expected):
        return "after", note
    if checks.same_state(rows, model.state):
        return "before", note
    raise checks.Divergence(
        f"killed {step.kind} left neither the rows before nor after it:\n"
        f"    got    {rows}\n    before {sorted(model.state.values())}\n"
        f"    after  {sorted(plan.expected.values())}"
    )


def _pending_undo(table: HudiTable) -> bool:
    return any(i.action in ("rollback", "restore") and not i.is_completed for i in table.timeline())


def _settle(model: Model, step: Step, plan: Plan, after: bool) -> None:
    if not after:
        return
    model.state = dict(plan.expected)
    if step.kind == "rollback" and plan.target in model.history:
        model.forget_after(plan.target, inclusive=True)
    elif step.kind == "restore" and plan.target is not None:
        model.forget_after(plan.target, inclusive=False)


def _check(
    table: HudiTable,
    model: Model,
    setup: Setup,
    rng: random.Random,
    step: Step,
    outcome: str,
    pending_before: set,
) -> str:
    checks.check_snapshot(table, model)
    checks.check_read_optimized(table, setup)
    travelled = checks.check_time_travel(table, model, setup, rng)
    checks.check_incremental(table, model, setup, rng)
    if step.kill is None:
        checks.check_timeline(table, pending_before)
    return f" [as_of {travelled}]" if travelled else ""


def shrink(seed: int, root: Path, steps: list[Step], budget_s: float) -> list[Step] | None:
    """A shorter step list that still fails (greedy: drop one step at a time, latest first),
    within `budget_s` seconds; None when nothing could be dropped."""
    deadline = time.monotonic() + budget_s
    current = list(steps)
    shrunk = False
    for index in reversed(range(len(current) - 1)):
        if time.monotonic() > deadline:
            break
        trial = current[:index] + current[index + 1 :]
        if run_sequence(seed, root, 0, trial).failure is not None:
            current, shrunk = trial, True
    return current if shrunk else None
