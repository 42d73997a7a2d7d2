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

from hudi_core import HudiTable
from hudi_core.config import Options
from hudi_core.config import clustering_options as K
from spark_jobs import cli, planned_service_job

JOB = "cluster"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = _arguments(argv)
    cli.check_table(args)
    options = cli.hoodie_options(args)
    if args.sort_columns:
        options[K.SORT_COLUMNS.key] = args.sort_columns
    if args.layout:
        options[K.LAYOUT_STRATEGY.key] = args.layout
    return planned_service_job.run_modes(
        JOB, args, options, lambda table: table.clustering, _describe, plan_limits
    )


def plan_limits(table: HudiTable) -> dict[str, Any]:
    """What makes a file slice a clustering candidate: a base file under this size."""
    options = Options(table.config.properties, table.options)
    return {"small_file_limit": options.get_option(K.SMALL_FILE_LIMIT)}


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
    planned_service_job.add_arguments(parser, "clustering")
    parser.add_argument(
        "--sort-columns", help=f"{K.SORT_COLUMNS.key} for the plan (else the option's)"
    )
    parser.add_argument(
        "--layout",
        choices=["linear", "z-order", "hilbert"],
        help=f"{K.LAYOUT_STRATEGY.key} for the execution (else the option's)",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(cli.run(JOB, main, None))
