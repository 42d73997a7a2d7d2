"""Clean old file slices by the cleaner policy (hoodie.cleaner.policy and its retention).

    spark-submit spark_jobs/clean.py --base-path /data/trips \\
        --hoodie-conf hoodie.cleaner.commits.retained=10

Finishes a clean cut off earlier, then plans and runs a new one if anything may go; the files
are deleted by the executors.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from spark_jobs import cli

JOB = "clean"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = cli.parser(JOB, __doc__.strip().splitlines()[0]).parse_args(argv)
    table = cli.job_table(JOB, args)
    instant_time = table.clean()
    if instant_time is None:
        return cli.result(JOB, args.base_path, None, files_deleted=0)
    instant, metadata = cli.avro_metadata_of(table, instant_time)
    return cli.result(
        JOB,
        args.base_path,
        instant,
        files_deleted=metadata["totalFilesDeleted"],
        earliest_commit_to_retain=metadata["earliestCommitToRetain"] or None,
    )


if __name__ == "__main__":
    sys.exit(cli.run(JOB, main, None))
