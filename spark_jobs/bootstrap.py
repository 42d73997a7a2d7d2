"""Bootstrap a Hudi table from an existing parquet dataset, as Apache Hudi's bootstrap does.

    spark-submit spark_jobs/bootstrap.py --base-path /data/lake/trips --table-name trips \\
        --source-path /data/warehouse/trips --table-type COPY_ON_WRITE \\
        --record-key-fields uuid --partition-fields city --precombine-field ts \\
        [--hoodie-conf hoodie.bootstrap.mode.selector=...FullRecordBootstrapModeSelector]

Each source partition is referenced where it lies (METADATA_ONLY: skeleton files of the meta
columns plus the bootstrap index, committed at 00000000000001) or rewritten once (FULL_RECORD:
a bulk_insert committed at 00000000000002), as hoodie.bootstrap.mode.selector says; the source
files are only read. The per-file work (a skeleton file per source file, reading the files a
full-record partition rewrites) runs on the executors, over at most hoodie.bootstrap.parallelism
Spark partitions. The source may also be given as Apache Hudi's option
hoodie.bootstrap.base.path. The table is created (from --table-name and the field flags)
unless it exists without commits (a bootstrap that failed midway is rolled back first); a table
with commits is refused. The result line lists the instants committed.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from hudi_core import BootstrapError, HudiTable, InvalidOptionError, TableType
from hudi_core.config import Options
from hudi_core.config import bootstrap_options as B
from hudi_core.config import table_options as T
from hudi_core.errors import TableNotFoundError
from hudi_core.storage import Storage
from spark_jobs import cli

JOB = "bootstrap"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = _arguments(argv)
    options = cli.hoodie_options(args)
    source = source_path(args.source_path, options)
    # The source goes as the bootstrap's argument (the table records it as a URI).
    options.pop(T.BOOTSTRAP_BASE_PATH.key, None)
    parallelism = Options(options).get_option(B.PARALLELISM)
    if parallelism < 1:
        raise InvalidOptionError(f"{B.PARALLELISM.key} must be at least 1, not {parallelism}")
    try:
        cli.check_table(args)
    except TableNotFoundError:
        cli.check_new_table(args, "--table-name", "--record-key-fields")
    if not Storage(source, options=options).exists(""):
        raise BootstrapError(f"the bootstrap source {source} does not exist")

    from spark_jobs.engine import SparkEngine

    spark = cli.spark_session(JOB, args.spark_master)
    table = HudiTable.bootstrap(
        args.base_path,
        source,
        args.table_name,
        table_type=args.table_type,
        record_key_fields=_fields(args.record_key_fields),
        partition_fields=_fields(args.partition_fields),
        precombine_field=args.precombine_field,
        options=options,
        engine=SparkEngine(spark, max_slices=parallelism),
    )
    return describe(table, args.base_path, source)


def source_path(flag: str | None, options: dict[str, str]) -> str:
    """The dataset to bootstrap: --source-path, or hoodie.bootstrap.base.path; both only if
    they agree."""
    option = (options.get(T.BOOTSTRAP_BASE_PATH.key) or "").strip() or None
    flag = (flag or "").strip() or None
    if flag and option and flag.rstrip("/") != option.rstrip("/"):
        raise InvalidOptionError(
            f"--source-path {flag} and {T.BOOTSTRAP_BASE_PATH.key}={option} name different "
            "datasets; give one"
        )
    if not (flag or option):
        raise InvalidOptionError(
            f"a bootstrap needs its source dataset: --source-path or {T.BOOTSTRAP_BASE_PATH.key}"
        )
    return flag or option  # type: ignore[return-value]


def describe(table: HudiTable, base_path: str, source: str) -> dict[str, Any]:
    """The result line: the instants the bootstrap committed (a bootstrap needs a table
    without commits, so they are the completed writes on the timeline), the newest one as
    the line's instant."""
    inspector = table.inspect
    done = [i for i in inspector.timeline() if i.is_write and i.is_completed]
    commits = [inspector.commit(i.timestamp) for i in done]
    return cli.result(
        JOB,
        base_path,
        done[-1] if done else None,
        source_path=source,
        instants=[i.timestamp for i in done],
        operations={c.instant.timestamp: c.operation_type for c in commits},
        partitions=len({p.partition for c in commits for p in c.partitions}),
        files_written=sum(len(p.files) for c in commits for p in c.partitions),
        rows_written=sum(c.totals.rows_written for c in commits),
    )


def _fields(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def _arguments(argv: Sequence[str] | None):
    parser = cli.parser(JOB, __doc__.strip().splitlines()[0])
    parser.add_argument(
        "--source-path",
        help=f"the parquet dataset to bootstrap (else the option {T.BOOTSTRAP_BASE_PATH.key})",
    )
    parser.add_argument(
        "--table-type",
        default=TableType.COPY_ON_WRITE,
        choices=list(TableType),
        type=TableType,
        help="of the table created",
    )
    parser.add_argument(
        "--record-key-fields",
        "--record-key-field",
        dest="record_key_fields",
        help="record key field(s), comma-separated (creating the table)",
    )
    parser.add_argument(
        "--partition-fields",
        "--partition-path-field",
        dest="partition_fields",
        help="partition field(s), comma-separated (creating the table; none: non-partitioned)",
    )
    parser.add_argument(
        "--precombine-field",
        "--source-ordering-field",
        dest="precombine_field",
        help="ordering field of duplicate keys (creating the table)",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(cli.run(JOB, main, None))
