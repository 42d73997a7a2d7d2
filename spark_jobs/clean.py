"""Clean old file slices by the cleaner policy (hoodie.cleaner.policy and its retention).

    spark-submit spark_jobs/clean.py --base-path /data/trips \\
        --hoodie-conf hoodie.cleaner.commits.retained=10

Finishes the cleans planned before (cut off earlier, or planned by HudiCleanOperator in the
Airflow worker), then plans and runs a new one if anything may go; the files are deleted by
the executors. The result is of the newest clean it completed.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from hudi_core import HudiTable
from hudi_core.config import Options
from hudi_core.config import cleaner_options as CL
from spark_jobs import cli

JOB = "clean"
# What each cleaner policy keeps the latest of, and the option saying how many.
RETAINED = {
    "KEEP_LATEST_COMMITS": ("commits", CL.COMMITS_RETAINED),
    "KEEP_LATEST_FILE_VERSIONS": ("file versions", CL.FILE_VERSIONS_RETAINED),
    "KEEP_LATEST_BY_HOURS": ("hours", CL.HOURS_RETAINED),
}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = cli.parser(JOB, __doc__.strip().splitlines()[0]).parse_args(argv)
    return clean(cli.job_table(JOB, args), args.base_path)


def clean(table: HudiTable, base_path: str) -> dict[str, Any]:
    """Cleans on the table's engine (the cleans planned before first); the job's result, of
    the newest clean completed. HudiCleanOperator runs it in the worker for small plans."""
    planned = [
        i.timestamp for i in table.inspect.timeline() if i.action == "clean" and not i.is_completed
    ]
    instant_time = table.clean() or (planned[-1] if planned else None)
    if instant_time is None:
        return cli.result(JOB, base_path, None, files_deleted=0, **retention(table))
    instant, metadata = cli.avro_metadata_of(table, instant_time)
    partitions = metadata["partitionMetadata"].values()
    return cli.result(
        JOB,
        base_path,
        instant,
        files_deleted=metadata["totalFilesDeleted"],
        files_failed=sum(len(p["failedDeleteFiles"]) for p in partitions),
        partitions=sum(1 for p in partitions if p["successDeleteFiles"]),
        earliest_commit_to_retain=metadata["earliestCommitToRetain"] or None,
        **retention(table),
    )


def retention(table: HudiTable) -> dict[str, Any]:
    """The cleaner policy and what it keeps (e.g. the latest 10 commits)."""
    options = Options(table.config.properties, table.options)
    policy = options.get_option(CL.POLICY)
    unit, option = RETAINED[policy]
    return {"policy": policy, "retained": options.get_option(option), "retained_unit": unit}


if __name__ == "__main__":
    sys.exit(cli.run(JOB, main, None))
