"""Schedule and/or execute a clustering, as Apache Hudi's HoodieClusteringJob does.

    spark-submit spark_jobs/cluster.py --base-path /data/trips --mode schedule
    spark-submit spark_jobs/cluster.py --base-path /data/trips --mode execute [--instant-time T]

`schedule` writes a plan when some file slices qualify (hoodie.clustering.plan.strategy.*)
and prints its instant time; `execute` runs the given plan, or the oldest (--seq FIFO) or
newest (LIFO) pending one, one task per input group on the executors; `scheduleAndExecute`
does both.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from hudi_core import CompactionOrder, HudiTable
from hudi_core.config import clustering_options as K
from spark_jobs import cli

JOB = "cluster"
MODES = {"schedule": "schedule", "execute": "execute", "scheduleandexecute": "scheduleAndExecute"}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = _arguments(argv)
    cli.check_table(args)
    options = cli.hoodie_options(args)
    if args.sort_columns:
        options[K.SORT_COLUMNS.key] = args.sort_columns
    if args.layout:
        options[K.LAYOUT_STRATEGY.key] = args.layout
    config = {"spark.executor.memory": args.spark_memory} if args.spark_memory else None
    spark = cli.spark_session(JOB, args.spark_master, config)
    table = cli.open_table(spark, args, options)
    instant_time = args.instant_time
    if args.mode in ("schedule", "scheduleAndExecute"):
        instant_time = table.clustering.schedule()
        if instant_time is None:
            return cli.result(JOB, args.base_path, None, file_groups=0)
        if args.mode == "schedule":
            return _describe(table, instant_time)
    done = table.clustering.run(instant_time, order=args.seq)
    if done is None:
        return cli.result(JOB, args.base_path, None, file_groups=0)
    return _describe(table, done)


def _describe(table: HudiTable, instant_time: str) -> dict[str, Any]:
    inspector = table.inspect
    clustering = inspector.clustering(instant_time)
    counts: dict[str, Any] = {"file_groups": len(clustering.file_groups)}
    if clustering.instant.is_completed:
        commit = inspector.commit(instant_time)
        counts["rows_written"] = commit.totals.rows_written
        counts["files_written"] = sum(len(p.files) for p in commit.partitions)
    return cli.result(JOB, str(table.storage.base_uri), clustering.instant, **counts)


def _arguments(argv: Sequence[str] | None):
    parser = cli.parser(JOB, __doc__.strip().splitlines()[0])
    parser.add_argument(
        "--mode",
        "-m",
        default="scheduleAndExecute",
        type=lambda value: MODES.get(value.lower(), value),
        choices=sorted(MODES.values()),
        help="plan a clustering, run one, or both (any letter case)",
    )
    parser.add_argument(
        "--instant-time", "-it", help="execute: the planned clustering to run (else by --seq)"
    )
    parser.add_argument(
        "--seq",
        default=CompactionOrder.FIFO,
        choices=list(CompactionOrder),
        type=CompactionOrder,
        help="execute without --instant-time: the oldest (FIFO) or newest (LIFO) plan",
    )
    parser.add_argument(
        "--sort-columns", help=f"{K.SORT_COLUMNS.key} for the plan (else the option's)"
    )
    parser.add_argument(
        "--layout",
        choices=["linear", "z-order", "hilbert"],
        help=f"{K.LAYOUT_STRATEGY.key} for the execution (else the option's)",
    )
    parser.add_argument(
        "--spark-memory",
        "-sm",
        help="spark.executor.memory of a session this job starts (spark-submit's otherwise)",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(cli.run(JOB, main, None))
