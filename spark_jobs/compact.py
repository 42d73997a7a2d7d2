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
from datetime import UTC, datetime
from typing import Any

from hudi_core import HudiTable
from hudi_core.config import Options
from hudi_core.config import compaction_options as C
from hudi_core.services import compaction_due
from hudi_core.timeline import ActiveTimeline, parse_instant_time
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
        JOB, args, options, lambda table: table.compaction, describe, trigger_state
    )


def trigger_state(table: HudiTable) -> dict[str, Any]:
    """Where the compaction trigger (hoodie.compact.inline.trigger.strategy) stands: whether a
    compaction is due, the delta commits and seconds since the last one, and the thresholds.
    Counted as hudi_core's trigger counts (which exports only its decision): delta commits
    since the last completed compaction (or planned one, NUM_COMMITS_AFTER_LAST_REQUEST),
    time since the last completed compaction, else since the first delta commit."""
    timeline = ActiveTimeline.load(table.storage, table.config.timeline_timezone)
    options = Options(table.config.properties, table.options)
    strategy = options.get_option(C.TRIGGER_STRATEGY)
    compacted = max((i.timestamp for i in timeline.completed(["commit"])), default=None)
    since = compacted
    if strategy == "NUM_COMMITS_AFTER_LAST_REQUEST":
        planned = [i.timestamp for i in timeline.pending(["compaction"])]
        since = max([*planned, *([compacted] if compacted else [])], default=None)
    deltas = [i.timestamp for i in timeline.completed(["deltacommit"])]
    started = compacted or (deltas[0] if deltas else None)
    return {
        "due": compaction_due(timeline, options),
        "trigger": strategy,
        "delta_commits": sum(1 for t in deltas if since is None or t > since),
        "max_delta_commits": options.get_option(C.MAX_DELTA_COMMITS),
        "seconds_since_last": _seconds_since(started, timeline),
        "max_delta_seconds": options.get_option(C.MAX_DELTA_SECONDS),
    }


def _seconds_since(instant_time: str | None, timeline: ActiveTimeline) -> int:
    if instant_time is None:
        return 0
    utc = timeline.timezone == "UTC"  # instant times are in the timeline's time zone
    now = datetime.now(UTC).replace(tzinfo=None) if utc else datetime.now()
    return int((now - parse_instant_time(instant_time)).total_seconds())


def describe(table: HudiTable, instant_time: str) -> dict[str, Any]:
    """The result of the compaction at `instant_time` (planned, or completed)."""
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
