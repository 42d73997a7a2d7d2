"""Archive old instants (hoodie.keep.min.commits / hoodie.keep.max.commits) into
.hoodie/archived, keeping the active timeline short.

    spark-submit spark_jobs/archive.py --base-path /data/trips

Archival moves timeline files only: it runs in the driver's Python and starts no Spark
session (HudiArchiveOperator runs the same in the Airflow worker).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from hudi_core import HudiTable
from hudi_core.config import Options
from hudi_core.config import archival_options as A
from spark_jobs import cli

JOB = "archive"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = cli.parser(JOB, __doc__.strip().splitlines()[0]).parse_args(argv)
    cli.check_table(args)
    table = HudiTable.open(args.base_path, options=cli.hoodie_options(args))
    return archive(table, args.base_path)


def archive(table: HudiTable, base_path: str) -> dict[str, Any]:
    """Archives what the table's bounds allow; the job's result."""
    archived = table.archive()
    newest = archived[-1].timestamp if archived else None
    options = Options(table.config.properties, table.options)
    return cli.result(
        JOB,
        base_path,
        newest,
        "archive" if archived else None,
        "COMPLETED" if archived else None,
        instants_archived=len(archived),
        oldest_archived=archived[0].timestamp if archived else None,
        active_instants=len(table.timeline()),
        keep_min_commits=options.get_option(A.MIN_COMMITS),
        keep_max_commits=options.get_option(A.MAX_COMMITS),
    )


if __name__ == "__main__":
    sys.exit(cli.run(JOB, main, None))
