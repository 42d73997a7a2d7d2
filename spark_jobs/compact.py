"""Schedule and/or execute a merge-on-read compaction, as Apache Hudi's HoodieCompactor does.

    spark-submit spark_jobs/compact.py --base-path /data/trips --mode schedule
    spark-submit spark_jobs/compact.py --base-path /data/trips --mode execute [--instant-time T]

`schedule` writes a plan when the trigger (hoodie.compact.inline.trigger.strategy and its
thresholds) says one is due and prints its instant time; `execute` runs the given plan, or the
oldest (--seq FIFO) or newest (LIFO) pending one, its file slices merged on the executors;
`scheduleAndExecute` does both.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from hudi_core import CompactionOrder, HudiTable
from hudi_core.config import compaction_options as C
from spark_jobs import cli

JOB = "compact"
MODES = {"schedule": "schedule", "execute": "execute", "scheduleandexecute": "scheduleAndExecute"}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = _arguments(argv)
    cli.check_table(args)
    options = cli.hoodie_options(args)
    if args.strategy:
        options[C.STRATEGY.key] = args.strategy
    if args.target_io is not None:
        options[C.TARGET_IO.key] = str(args.target_io)
    config = {"spark.executor.memory": args.spark_memory} if args.spark_memory else None
    spark = cli.spark_session(JOB, args.spark_master, config)
    table = cli.open_table(spark, args, options)
    instant_time = args.instant_time
    if args.mode in ("schedule", "scheduleAndExecute"):
        instant_time = table.compaction.schedule()
        if instant_time is None:
            return cli.result(JOB, args.base_path, None, file_groups=0)
        if args.mode == "schedule":
            return _describe(table, instant_time)
    done = table.compaction.run(instant_time, order=args.seq)
    if done is None:
        return cli.result(JOB, args.base_path, None, file_groups=0)
    return _describe(table, done)


def _describe(table: HudiTable, instant_time: str) -> dict[str, Any]:
    inspector = table.inspect
    compaction = inspector.compaction(instant_time)
    counts: dict[str, Any] = {
        "file_groups": len(compaction.file_groups),
        "log_files": compaction.log_files,
    }
    if compaction.instant.is_completed:
        totals = inspector.commit(instant_time).totals
        counts["rows_written"] = totals.rows_written
        counts["log_records"] = totals.log_records_compacted
    return cli.result(JOB, str(table.storage.base_uri), compaction.instant, **counts)


def _arguments(argv: Sequence[str] | None):
    parser = cli.parser(JOB, __doc__.strip().splitlines()[0])
    parser.add_argument(
        "--mode",
        "-m",
        default="scheduleAndExecute",
        type=lambda value: MODES.get(value.lower(), value),
        choices=sorted(MODES.values()),
        help="plan a compaction, run one, or both (any letter case)",
    )
    parser.add_argument(
        "--instant-time", "-it", help="execute: the planned compaction to run (else by --seq)"
    )
    parser.add_argument(
        "--seq",
        default=CompactionOrder.FIFO,
        choices=list(CompactionOrder),
        type=CompactionOrder,
        help="execute without --instant-time: the oldest (FIFO) or newest (LIFO) plan",
    )
    parser.add_argument(
        "--strategy", "-st", help="hoodie.compaction.strategy (a class name; else the option's)"
    )
    parser.add_argument(
        "--target-io", type=int, help="hoodie.compaction.target.io in MB (else the option's)"
    )
    parser.add_argument(
        "--spark-memory",
        "-sm",
        help="spark.executor.memory of a session this job starts (spark-submit's otherwise)",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(cli.run(JOB, main, None))
