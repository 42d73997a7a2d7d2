"""Sync a table to the Hive metastore and commit its finished partitions.

    spark-submit spark_jobs/hive_sync.py --base-path /data/trips \\
        --hoodie-conf hoodie.datasource.hive_sync.enable=true \\
        --hoodie-conf hoodie.datasource.hive_sync.mode=hms \\
        --hoodie-conf hoodie.datasource.hive_sync.metastore.uris=thrift://metastore:9083 \\
        [--metastore-dir DIR] [--watermark 2026-11-21T00:00:00Z]

What runs is what the options ask for: the Hive sync (hoodie.datasource.hive_sync.*) and the
partition commit policies (sink.partition-commit.*). In spark mode the tables go to the
metastore embedded in this driver: Spark's Hive catalog on Derby under --metastore-dir
(default: Spark's own, metastore_db in the working directory); with --metastore-dir the
metastore is opened in the driver's JVM without starting a Spark session. One JVM at a time
can open an embedded Derby metastore; use hms mode where several jobs sync at once. hms and
jdbc modes need no JVM: HudiHiveSyncOperator runs them in the Airflow worker (`locked_sync`).

--watermark feeds the partition-time trigger: the event time up to which the data is complete
(an ISO date-time, UTC unless it carries an offset, or epoch milliseconds).
"""

from __future__ import annotations

import argparse
import datetime
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hudi_core.config import Options
from hudi_core.config import hive_sync_options as HS
from hudi_core.errors import InvalidOptionError, SyncError
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
    return locked_sync(args.base_path, options, watermark_ms, lambda: embedded_metastore(args))


def needs_jvm(options: Options) -> bool:
    """Whether this sync needs a Spark driver: only spark mode's embedded metastore does; hms
    and jdbc modes (and partition commit without the metastore) run in any Python process,
    an Airflow worker's too (HudiHiveSyncOperator)."""
    return needs_metastore(options) and options.get_option(HS.MODE) == "spark"


def locked_sync(
    base_path: str,
    options: dict[str, str],
    watermark_ms: int | None,
    embedded: Callable[[], Any] | None = None,
) -> dict[str, Any]:
    """Syncs under the table's lock (one sync of a table at a time; spark mode's embedded
    metastore, made by `embedded`, is opened under it too); the job's result."""
    with table_lock(Storage(base_path, options=options), Options(options)):
        metastore = embedded() if embedded is not None and needs_jvm(Options(options)) else None
        outcome = sync_table(base_path, options, metastore, watermark_ms)
    hive = outcome.hive
    commit = outcome.partition_commit
    return cli.result(
        JOB,
        base_path,
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
    when given (its derby.log too), else where Spark's session puts it."""
    if args.metastore_dir:
        return derby_metastore(Path(args.metastore_dir).resolve())
    from spark_jobs.hive_metastore import EmbeddedMetastoreClient

    spark = cli.spark_session(JOB, args.spark_master, {"spark.sql.catalogImplementation": "hive"})
    return EmbeddedMetastoreClient.of_session(spark)


def derby_metastore(folder: Path) -> Any:
    """The embedded metastore on Derby under `folder`, opened in the driver's JVM without a
    Spark session: the metastore handler needs only the JVM spark-submit started, and a
    SparkContext with Spark's own Hive client (Hive loaded a second time, in its isolated
    class loader) doubled a sync's time. The settings are those a Hive-enabled session with
    this folder gives its metastore (the Derby database, the warehouse, spark-submit's
    spark.hadoop.* settings), so the tables land where such a session finds them."""
    from pyspark import SparkConf, SparkContext

    folder.mkdir(parents=True, exist_ok=True)
    SparkContext._ensure_initialized()  # spark-submit's JVM (a new one under plain python)
    jvm = SparkContext._jvm
    jvm.java.lang.System.setProperty("derby.stream.error.file", str(folder / "derby.log"))
    conf = jvm.org.apache.hadoop.hive.conf.HiveConf()
    hadoop = "spark.hadoop."
    for key, value in SparkConf().getAll():
        if key.startswith(hadoop):
            conf.set(key[len(hadoop) :], value)
    uris = (conf.get("hive.metastore.uris") or "").strip()
    if uris:
        raise SyncError(f"Spark's Hive metastore is remote ({uris}): sync with mode hms")
    settings = {
        "javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={folder / 'metastore_db'};create=true"
        ),
        "hive.metastore.warehouse.dir": str(folder / "warehouse"),
        # As Spark's Hive client sets them: BoneCP is not on Spark's classpath, and a new
        # Derby metastore gets its schema created.
        "datanucleus.connectionPoolingType": "DBCP",
        "hive.metastore.schema.verification": "false",
        "datanucleus.schema.autoCreateAll": "true",
    }
    for key, value in settings.items():
        conf.set(key, value)
    from spark_jobs.hive_metastore import EmbeddedMetastoreClient

    return EmbeddedMetastoreClient(jvm, conf)


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
