"""Restore a table to a savepoint: everything written after it is rolled back.

    spark-submit spark_jobs/restore.py --base-path /data/trips --instant-time 20250101...

A restore cut off midway is finished by running it again.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from spark_jobs import cli

JOB = "restore"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = cli.parser(JOB, __doc__.strip().splitlines()[0])
    parser.add_argument("--instant-time", required=True, help="the savepoint to restore to")
    args = parser.parse_args(argv)
    table = cli.job_table(JOB, args)
    restore_time = table.restore(args.instant_time)
    instant, metadata = cli.avro_metadata_of(table, restore_time)
    return cli.result(
        JOB,
        args.base_path,
        instant,
        savepoint=args.instant_time,
        instants_rolled_back=len(metadata["instantsToRollback"]),
    )


if __name__ == "__main__":
    sys.exit(cli.run(JOB, main, None))
