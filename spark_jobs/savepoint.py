"""Savepoint a commit (pin its files against cleaning and archival), or delete a savepoint.

    spark-submit spark_jobs/savepoint.py --base-path /data/trips [--instant-time T]
        [--comments "before the backfill"] [--delete]

Without --instant-time the latest completed commit is savepointed.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from hudi_core.errors import ServiceError
from spark_jobs import cli

JOB = "savepoint"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = cli.parser(JOB, __doc__.strip().splitlines()[0])
    parser.add_argument("--instant-time", help="the commit (else the latest completed one)")
    parser.add_argument("--comments", default="", help="recorded with the savepoint")
    parser.add_argument("--delete", action="store_true", help="delete the savepoint instead")
    args = parser.parse_args(argv)
    table = cli.job_table(JOB, args)
    instant_time = args.instant_time
    if instant_time is None:
        writes = [i for i in table.inspect.timeline() if i.is_write and i.is_completed]
        if not writes:
            raise ServiceError("the table has no completed commit to savepoint")
        instant_time = writes[-1].timestamp
    if args.delete:
        table.delete_savepoint(instant_time)
        return cli.result(JOB, args.base_path, instant_time, "savepoint", "DELETED")
    table.savepoint(instant_time, args.comments)
    return cli.result(JOB, args.base_path, instant_time, "savepoint", "COMPLETED")


if __name__ == "__main__":
    sys.exit(cli.run(JOB, main, None))
