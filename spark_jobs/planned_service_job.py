"""What the jobs of planned services (compact.py, cluster.py) share: the modes of Apache
Hudi's HoodieCompactor and HoodieClusteringJob (schedule, execute, scheduleAndExecute), the
plan an execution takes (--instant-time, else --seq), and the session's executor memory."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from hudi_core import CompactionOrder, HudiTable
from hudi_core.services import PlannedService
from spark_jobs import cli

MODES = {"schedule": "schedule", "execute": "execute", "scheduleandexecute": "scheduleAndExecute"}


def add_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--mode",
        "-m",
        default="scheduleAndExecute",
        type=lambda value: MODES.get(value.lower(), value),
        choices=sorted(MODES.values()),
        help=f"plan a {what}, run one, or both (any letter case)",
    )
    parser.add_argument(
        "--instant-time", "-it", help=f"execute: the planned {what} to run (else by --seq)"
    )
    parser.add_argument(
        "--seq",
        default=CompactionOrder.FIFO,
        choices=list(CompactionOrder),
        type=CompactionOrder,
        help="execute without --instant-time: the oldest (FIFO) or newest (LIFO) plan",
    )
    parser.add_argument(
        "--spark-memory",
        "-sm",
        help="spark.executor.memory of a session this job starts (spark-submit's otherwise)",
    )


def run_modes(
    job: str,
    args: argparse.Namespace,
    options: dict[str, str],
    service: Callable[[HudiTable], PlannedService],
    describe: Callable[[HudiTable, str], dict[str, Any]],
    why_none: Callable[[HudiTable], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Plans and/or executes as --mode says; the result line. Planning is a timeline change
    made here, in the driver's Python: the Spark session starts only for an execution, so a
    run that finds nothing to plan or to execute costs no SparkContext (run by `python` rather
    than spark-submit, no JVM at all). When there is nothing to plan, `why_none` gives the
    counts saying why (the trigger's state)."""
    table = HudiTable.open(args.base_path, options=options)
    instant_time = args.instant_time
    if args.mode in ("schedule", "scheduleAndExecute"):
        instant_time = service(table).schedule()
        if instant_time is None:
            return _nothing(job, args, service(table), why_none(table) if why_none else {})
        if args.mode == "schedule":
            return describe(table, instant_time)
    elif instant_time is None and not service(table).pending():
        return _nothing(job, args, service(table), {})
    config = {"spark.executor.memory": args.spark_memory} if args.spark_memory else None
    spark = cli.spark_session(job, args.spark_master, config)
    table = cli.open_table(spark, args, options)
    done = service(table).run(instant_time, order=args.seq)
    if done is None:
        return _nothing(job, args, service(table), {})
    return describe(table, done)


def _nothing(
    job: str, args: argparse.Namespace, service: PlannedService, why: dict[str, Any]
) -> dict[str, Any]:
    """The result of a run that planned and executed nothing: its mode, the plans left
    pending (scheduleAndExecute executes only the plan it makes) and why none was made."""
    counts = {"file_groups": 0, "mode": args.mode, "pending": len(service.pending()), **why}
    return cli.result(job, args.base_path, None, **counts)
