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

from hudi_core import HudiTable
from hudi_core.config import compaction_options as C
from spark_jobs import cli, planned_service_job

JOB = "compact"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = _arguments(argv)
    cli.check_table(args)
    options = cli.hoodie_options(args)
    if args.strategy:
        options[C.STRATEGY.key] = args.strategy
    if args.target_io is not None:
        options[C.TARGET_IO.key] = str(args.target_io)
    return planned_service_job.run_modes(
        JOB, args, options, lambda table: table.compaction, _describe
    )


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
    planned_service_job.add_arguments(parser, "compaction")
    parser.add_argument(
        "--strategy", "-st", help="hoodie.compaction.strategy (a class name; else the option's)"
    )
    parser.add_argument(
        "--target-io", type=int, help="hoodie.compaction.target.io in MB (else the option's)"
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(cli.run(JOB, main, None))
