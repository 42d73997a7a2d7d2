"""Archive old instants (hoodie.keep.min.commits / hoodie.keep.max.commits) into
.hoodie/archived, keeping the active timeline short.

    spark-submit spark_jobs/archive.py --base-path /data/trips
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from spark_jobs import cli

JOB = "archive"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = cli.parser(JOB, __doc__.strip().splitlines()[0]).parse_args(argv)
    table = cli.job_table(JOB, args)
    archived = table.archive()
    newest = archived[-1].timestamp if archived else None
    return cli.result(
        JOB,
        args.base_path,
        newest,
        "archive" if archived else None,
        "COMPLETED" if archived else None,
        instants_archived=len(archived),
        active_instants=len(table.timeline()),
    )


if __name__ == "__main__":
    sys.exit(cli.run(JOB, main, None))
