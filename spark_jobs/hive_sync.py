"""Sync a table to the Hive metastore and commit its finished partitions.

    spark-submit spark_jobs/hive_sync.py --base-path /data/trips \\
        --hoodie-conf hoodie.datasource.hive_sync.enable=true \\
        --hoodie-conf hoodie.datasource.hive_sync.mode=hms \\
        --hoodie-conf hoodie.datasource.hive_sync.metastore.uris=thrift://metastore:9083 \\
        [--metastore-dir DIR] [--watermark 2026-11-21T00:00:00Z]

What runs is what the options ask for: the Hive sync (hoodie.datasource.hive_sync.*) and the
partition commit policies (sink.partition-commit.*). In spark mode the tables go to the
metastore embedded in this driver: Spark's Hive catalog on Derby under --metastore-dir
(default: Spark's own, metastore_db in the working directory). One JVM at a time can open an
embedded Derby metastore; use hms mode where several jobs sync at once.

--watermark feeds the partition-time trigger: the event time up to which the data is complete
(an ISO date-time, UTC unless it carries an offset, or epoch milliseconds).
"""

from __future__ import annotations

import argparse
import datetime
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hudi_core.config import Options
from hudi_core.config import hive_sync_options as HS
from hudi_core.errors import InvalidOptionError
from hudi_core.lock import table_lock
from hudi_core.storage import Storage
from hudi_core.sync import METASTORE, commit_policies, sync_table
from spark_jobs import cli

JOB = "hive_sync"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = cli.parser(JOB, __doc__.strip().splitlines()[0])
    parser.add_argument(
        "--metastore-dir",
        help="spark mode: the embedded metastore's folder (else metastore_db in the cwd)",
    )
    parser.add_argument(
        "--watermark", help="event time the data is complete up to (ISO or epoch millis)"
    )
    args = parser.parse_args(argv)
    watermark_ms = parse_watermark(args.watermark) if args.watermark else None
    cli.check_table(args)
    options = cli.hoodie_options(args)
    # One sync of a table at a time; the embedded metastore is opened under the lock too.
    with table_lock(Storage(args.base_path, options=options), Options(options)):
        embedded = None
        if needs_metastore(Options(options)) and Options(options).get_option(HS.MODE) == "spark":
            embedded = embedded_metastore(args)
        outcome = sync_table(args.base_path, options, embedded, watermark_ms)
    hive = outcome.hive
    commit = outcome.partition_commit
    return cli.result(
        JOB,
        args.base_path,
        hive.synced_to if hive else None,
        action="hive_sync" if hive else None,
        state="COMPLETED" if hive and hive.synced_to else None,
        tables_created=len(hive.created) if hive else 0,
        tables=sorted({*hive.created, *hive.partitions_added}) if hive else [],
        columns_updated=len(hive.columns_updated) if hive else 0,
        partitions_added=sum(len(v) for v in hive.partitions_added.values()) if hive else 0,
        partitions_updated=sum(len(v) for v in hive.partitions_updated.values()) if hive else 0,
        partitions_dropped=sum(len(v) for v in hive.partitions_dropped.values()) if hive else 0,
        partitions_committed=len(commit.committed) if commit else 0,
        partitions_waiting=len(commit.waiting) if commit else 0,
        outcome=outcome.to_json(),
    )


def needs_metastore(options: Options) -> bool:
    return options.get_option(HS.ENABLE) or METASTORE in commit_policies(options)


def embedded_metastore(args: argparse.Namespace) -> Any:
    """The metastore of Spark's Hive catalog in this driver, on Derby under --metastore-dir
    when given (its derby.log too)."""
    from spark_jobs.hive_metastore import EmbeddedMetastoreClient

    config = {"spark.sql.catalogImplementation": "hive"}
    folder = Path(args.metastore_dir).resolve() if args.metastore_dir else None
    if folder is not None:
        config["spark.hadoop.javax.jdo.option.ConnectionURL"] = (
            f"jdbc:derby:;databaseName={folder / 'metastore_db'};create=true"
        )
        config["spark.sql.warehouse.dir"] = str(folder / "warehouse")
    spark = cli.spark_session(JOB, args.spark_master, config)
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        system = spark._jvm.java.lang.System
        system.setProperty("derby.stream.error.file", str(folder / "derby.log"))
    return EmbeddedMetastoreClient(spark)


def parse_watermark(text: str) -> int:
    """Epoch millis of an ISO date-time (UTC unless it has an offset) or of a number."""
    if text.strip().isdigit():
        return int(text)
    try:
        moment = datetime.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidOptionError(
            f"--watermark {text!r} is neither an ISO date-time nor epoch millis"
        ) from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return int(moment.timestamp() * 1000)


if __name__ == "__main__":
    sys.exit(cli.run(JOB, main, None))
