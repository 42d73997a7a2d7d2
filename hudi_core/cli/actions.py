"""The table services, run by hand: each returns what it did, as `Output`."""

from __future__ import annotations

from hudi_core.choices import CompactionOrder
from hudi_core.cli.output import Output
from hudi_core.services.planned_service import PlannedService
from hudi_core.table import HudiTable


def _did(what: str, instant: str | None, **more: object) -> Output:
    """The instant a service made (None when it had nothing to do), and a line saying so."""
    line = f"{what}: {instant}" if instant is not None else f"{what}: nothing to do"
    return Output({"action": what, "instant": instant, **more}, title=line)


def _service(table: HudiTable, service: str) -> PlannedService:
    return {"compaction": table.compaction, "clustering": table.clustering}[service]


def plan(table: HudiTable, service: str) -> Output:
    """Plans a compaction or clustering (when one is due)."""
    return _did(f"{service} scheduled", _service(table, service).schedule())


def execute(table: HudiTable, service: str, instant: str | None, order: str) -> Output:
    """Executes a planned compaction or clustering: `instant`, else the one `order` picks."""
    done = _service(table, service).run(instant, CompactionOrder.parse(order, "--order"))
    return _did(f"{service} run", done)


def clean(table: HudiTable) -> Output:
    return _did("clean", table.clean())


def archive(table: HudiTable) -> Output:
    moved = table.archive()
    instants = [{"instant": i.timestamp, "action": i.action, "state": i.state.value} for i in moved]
    return Output(
        {"action": "archive", "archived": instants},
        ("instant", "action", "state"),
        instants,
        title=f"archived {len(instants)} instant file(s)",
    )


def rollback(table: HudiTable, instant: str) -> Output:
    return _did("rollback", table.rollback(instant), rolled_back=instant)


def savepoint_create(table: HudiTable, instant: str, comment: str) -> Output:
    return _did("savepoint created", table.savepoint(instant, comment))


def savepoint_delete(table: HudiTable, instant: str) -> Output:
    table.delete_savepoint(instant)
    return _did("savepoint deleted", instant)


def restore(table: HudiTable, instant: str) -> Output:
    return _did("restore", table.restore(instant), restored_to=instant)
