"""Roll back the latest write (or compaction) of a table, completed or not.

spark-submit spark_jobs/rollback.py --base-path /data/trips --instant-time 20250101...
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from spark_jobs import cli

JOB = "rollback"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = cli.parser(JOB, __doc__.strip().splitlines()[0])
    parser.add_argument("--instant-time", required=True, help="the write to roll back")
    args = parser.parse_args(argv)
    table = cli.job_table(JOB, args)
    rollback_time = table.rollback(args.instant_time)
    instant, metadata = cli.avro_metadata_of(table, rollback_time)
    return cli.result(
        JOB,
        args.base_path,
        instant,
        rolled_back=args.instant_time,
        files_deleted=metadata["totalFilesDeleted"],
    )


if __name__ == "__main__":
    sys.exit(cli.run(JOB, main, None))
