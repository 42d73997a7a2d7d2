"""What every spark-submit entry point shares: arguments, options, the Spark session, and the
one JSON line each job prints last, for an orchestrator to read.

    spark-submit spark_jobs/<job>.py --base-path PATH [--table-name NAME]
        [--hoodie-conf key=value ...] [--props FILE] [job arguments]

Options are Apache Hudi's `hoodie.*` names: `--props` reads a Java properties file, each
`--hoodie-conf` overrides one (later wins). The last line on stdout is a JSON object with the
job, the table, the instant time, action and state it produced and some counts; the exit code
is 0 only when the job succeeded (then `"status": "SUCCEEDED"`). `--result-file PATH_OR_URI`
also writes that object to a file, which is how an orchestrator reads it (spark-submit may cut
the driver's output up with the JVM's log lines).

Every job checks its arguments, the base path and the table name before it starts Spark: a
wrong one costs a second, one line of error and the FAILED result line, not a JVM's start-up.
Apache Hudi's flag names are aliases where they mean the same (`--target-base-path`,
`--target-table`; HoodieCompactor's `-sp`, `-tn`, `-ms`).

Spark's own logging is at WARN unless `--log-level` (or HUDI_SPARK_LOG_LEVEL) names another
log4j level; the lines the JVM logs before the session exists follow it when spark-submit runs
with `submit_env` (SPARK_SUBMIT_OPTS naming spark_jobs/log4j2.properties). A session a job starts
keeps its SQL warehouse out of the working directory: under HUDI_SPARK_WORK_DIR when set, else
in a temporary folder removed when the driver exits. Scratch files (spark.local.dir) are in the
system's temporary folder, as Spark's default; `submit_env` puts them under HUDI_SPARK_WORK_DIR.
"""

from __future__ import annotations

import argparse
import atexit
import json
import logging
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jproperties import Properties

from hudi_core import HudiTable
from hudi_core.config import check_options
from hudi_core.errors import HudiError, InvalidOptionError, TableNotFoundError
from hudi_core.filesystems import SECRET_OPTIONS_ENV, filesystem_for
from hudi_core.inspect import InstantInfo

if TYPE_CHECKING:  # pyspark is imported when a job starts Spark, after its checks
    from pyspark.sql import SparkSession

_LOG = logging.getLogger("spark_jobs")

# Spark's log level: --log-level, else this variable, else WARN (log4j's level names).
LOG_LEVEL_ENV = "HUDI_SPARK_LOG_LEVEL"
LOG_LEVELS = ("OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL")
DEFAULT_LOG_LEVEL = "WARN"
# The folder of the SQL warehouse (and, through submit_env, the scratch files) of the sessions
# jobs start; else a temporary one per driver, removed when it exits.
WORK_DIR_ENV = "HUDI_SPARK_WORK_DIR"
# The JVM's logging from its start, before a job can set a level (see submit_env).
LOG4J2_CONFIG = Path(__file__).resolve().with_name("log4j2.properties")
_WAREHOUSE = "spark.sql.warehouse.dir"
_session_log_level: str | None = None  # run()'s --log-level, for the session a job starts


class JobArgumentParser(argparse.ArgumentParser):
    """argparse whose errors are raised (InvalidOptionError), so that a bad argument ends in
    the FAILED result line and exit code 1 as every other failure does; --help still exits 0."""

    def error(self, message: str):
        raise InvalidOptionError(f"{message} (see {self.prog} --help)")


def parser(job: str, description: str) -> argparse.ArgumentParser:
    """The arguments every job takes; jobs add their own. --help shows each one's default."""
    parsed = JobArgumentParser(
        prog=f"spark_jobs/{job}.py",
        description=description,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parsed.add_argument(
        "--base-path",
        "--target-base-path",
        "-sp",
        dest="base_path",
        required=True,
        help="the table's base path (or URI)",
    )
    parsed.add_argument(
        "--table-name",
        "--target-table",
        "-tn",
        dest="table_name",
        help="the table's name, checked against its hoodie.table.name",
    )
    parsed.add_argument(
        "--hoodie-conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any hoodie.* option; repeat for more",
    )
    parsed.add_argument("--props", help="a properties file of hoodie.* options")
    parsed.add_argument(
        "--result-file",
        help="also write the result line to this file: a local path, or a URI (s3://, gs://, "
        "hdfs://) the orchestrator reads when the driver runs elsewhere; its folder must exist",
    )
    parsed.add_argument(
        "--spark-master",
        "-ms",
        help="the Spark master when not run by spark-submit (then local[*] if not given)",
    )
    parsed.add_argument(
        "--log-level",
        type=str.upper,
        choices=LOG_LEVELS,
        help=f"Spark's log level (log4j's names; else ${LOG_LEVEL_ENV}, else {DEFAULT_LOG_LEVEL})",
    )
    return parsed


def log_level(flag: str | None = None) -> str:
    """Spark's log level: `flag` (--log-level), else HUDI_SPARK_LOG_LEVEL, else WARN."""
    source = "--log-level" if flag else LOG_LEVEL_ENV
    given = flag or os.environ.get(LOG_LEVEL_ENV)
    level = (given or DEFAULT_LOG_LEVEL).strip().upper()
    if level not in LOG_LEVELS:
        raise InvalidOptionError(f"{source} must be one of {', '.join(LOG_LEVELS)}, not {given!r}")
    return level


def submit_env(env: dict[str, str]) -> dict[str, str]:
    """`env` (a spark-submit's environment) with SPARK_SUBMIT_OPTS naming log4j2.properties,
    so that the lines Spark logs while its context starts follow HUDI_SPARK_LOG_LEVEL too; and
    with HUDI_SPARK_WORK_DIR set, SPARK_LOCAL_DIRS under it (the driver's scratch files).

    SPARK_SUBMIT_OPTS, not spark.driver.extraJavaOptions: it reaches the JVM spark-submit
    starts here (the driver in client mode), never a driver elsewhere that lacks the file.
    A logging configuration of the deployment's own (in SPARK_SUBMIT_OPTS or the Spark conf
    folder) is left alone. SPARK_LOCAL_DIRS, not spark.local.dir: Spark warns of that one."""
    merged, env = {**os.environ, **env}, dict(env)
    if merged.get(WORK_DIR_ENV) and not merged.get("SPARK_LOCAL_DIRS"):
        env["SPARK_LOCAL_DIRS"] = str(Path(merged[WORK_DIR_ENV]).resolve() / "local")
    options = merged.get("SPARK_SUBMIT_OPTS", "")
    if "log4j2.configurationFile" in options or _deployment_log4j2(merged):
        return env
    quiet = f"-Dlog4j2.configurationFile={LOG4J2_CONFIG.as_uri()}"
    return {**env, "SPARK_SUBMIT_OPTS": f"{options} {quiet}".strip()}


def _deployment_log4j2(env: dict[str, str]) -> bool:
    """Whether the Spark conf folder spark-submit reads holds a log4j2 configuration."""
    folder = env.get("SPARK_CONF_DIR") or (
        os.path.join(env["SPARK_HOME"], "conf") if env.get("SPARK_HOME") else None
    )
    if not folder:
        return False
    return any(Path(folder, name).is_file() for name in ("log4j2.properties", "log4j2.xml"))


def check_table(args: argparse.Namespace) -> None:
    """Before Spark starts: the base path holds a table (its hoodie.properties is read), and
    it is the one --table-name names."""
    _check_name(args, HudiTable.open(args.base_path, hoodie_options(args)))


def check_new_table(args: argparse.Namespace, *needed: str) -> None:
    """A job that may create its table: the flags creating it takes are all given."""
    missing = [flag for flag in needed if not getattr(args, flag.lstrip("-").replace("-", "_"))]
    if missing:
        raise TableNotFoundError(
            f"no Hudi table at {args.base_path}, and creating one needs {', '.join(missing)}"
        )


def hoodie_options(args: argparse.Namespace) -> dict[str, str]:
    """The secret options an orchestrator passed in the environment, --props, then each
    --hoodie-conf on top."""
    try:
        options = json.loads(os.environ.get(SECRET_OPTIONS_ENV) or "{}")
    except ValueError:
        options = None
    if not isinstance(options, dict):
        raise InvalidOptionError(f"{SECRET_OPTIONS_ENV} must hold a JSON object of options")
    if args.props:
        properties = Properties()
        try:
            with open(args.props, "rb") as handle:
                properties.load(handle, "utf-8")
        except OSError as exc:
            raise InvalidOptionError(f"--props {args.props}: {exc.strerror}") from exc
        options.update({key: value.data for key, value in properties.items()})
    for pair in args.hoodie_conf:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InvalidOptionError(f"--hoodie-conf takes key=value, not '{pair}'")
        options[key.strip()] = value.strip()
    check_options(options)
    return options


def spark_session(
    job: str, master: str | None = None, config: dict[str, str] | None = None
) -> SparkSession:
    """The running session (tests, notebooks), else a new one; spark-submit's settings rule.
    `config` applies to a new session only (static settings such as the catalog)."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers use this interpreter
    builder = SparkSession.builder.appName(f"hudi-{job}")
    settings, temporary = dict(config or {}), None
    if SparkContext._active_spark_context is None:  # a new session: static settings apply
        defaults, temporary = _new_session_settings(settings)
        settings = {**defaults, **settings}
    for key, value in settings.items():
        builder = builder.config(key, value)
    if master:
        builder = builder.master(master)
    elif "PYSPARK_GATEWAY_PORT" not in os.environ:  # not started by spark-submit
        builder = builder.master("local[*]")
    session = builder.getOrCreate()
    if temporary is not None:  # registered last, so run before pyspark's own exit handlers
        atexit.register(_remove_work_dir, temporary)
    return session


def _new_session_settings(config: dict[str, str]) -> tuple[dict[str, str], Path | None]:
    """The log level, and the warehouse out of the working directory, for a session this
    job starts (what spark-submit was given wins); and the temporary folder made for it."""
    given = _submitted_settings()
    settings: dict[str, str] = {}
    if "spark.log.level" not in given:
        settings["spark.log.level"] = _session_log_level or log_level()
    configured = os.environ.get(WORK_DIR_ENV)
    # Spark's Hive catalog on Derby in the working directory (hive_sync's spark mode without
    # --metastore-dir) records its warehouse's folders: they must outlive this driver.
    hive_in_cwd = config.get("spark.sql.catalogImplementation") == "hive" and not configured
    if _WAREHOUSE in given or _WAREHOUSE in config or hive_in_cwd:
        return settings, None
    folder = Path(configured or tempfile.mkdtemp(prefix="hudi-spark-")).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    settings[_WAREHOUSE] = str(folder / "warehouse")
    return settings, None if configured else folder


def _submitted_settings() -> set[str]:
    """The spark.* settings spark-submit gave this driver (--conf, spark-defaults.conf): in
    its JVM, already running when the job starts. None without spark-submit (no JVM yet)."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return set()
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()  # connects to spark-submit's JVM; starts nothing
    return {key for key, _ in SparkConf().getAll()}


def _remove_work_dir(folder: Path) -> None:
    """Stops the session first, so that Spark does not write in a folder going away."""
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    if context is not None:
        context.stop()
    shutil.rmtree(folder, ignore_errors=True)


def open_table(spark: SparkSession, args: argparse.Namespace, options: dict) -> HudiTable:
    """The table at --base-path, its services running on Spark executors."""
    from spark_jobs.engine import SparkEngine

    table = HudiTable.open(args.base_path, options=options, engine=SparkEngine(spark))
    _check_name(args, table)
    return table


def _check_name(args: argparse.Namespace, table: HudiTable) -> None:
    if args.table_name and args.table_name != table.name:
        raise InvalidOptionError(
            f"--table-name {args.table_name} does not match the table at {args.base_path} "
            f"({table.name})"
        )


def job_table(job: str, args: argparse.Namespace) -> HudiTable:
    """The Spark session a job runs in, and the table at --base-path on it, once the table was
    found and its name checked."""
    check_table(args)
    options = hoodie_options(args)
    spark = spark_session(job, args.spark_master)
    return open_table(spark, args, options)


def avro_metadata_of(table: HudiTable, instant_time: str) -> tuple[InstantInfo, dict[str, Any]]:
    """A completed service instant and its Avro metadata (a clean's, rollback's, restore's)."""
    inspector = table.inspect
    return inspector.instant(instant_time), inspector.instant_metadata(instant_time)


def result(
    job: str,
    base_path: str,
    instant: InstantInfo | str | None,
    action: str | None = None,
    state: str | None = None,
    **counts: Any,
) -> dict[str, Any]:
    """The job's result line: what it did to which table."""
    if isinstance(instant, InstantInfo):
        action, state, instant = instant.action, instant.state, instant.timestamp
    return {
        "job": job,
        "status": "SUCCEEDED",
        "base_path": base_path,
        "instant_time": instant,
        "action": action,
        "state": state if instant is not None else (state or "NOTHING_TO_DO"),
        "counts": counts,
    }


def run(job: str, main: Callable[[Sequence[str] | None], dict], argv: Sequence[str] | None) -> int:
    """Runs a job's main and prints its result as the last line: 0 on success, else 1."""
    global _session_log_level
    started = time.monotonic()
    early = _early_arguments(argv)
    # Only our own loggers at INFO: under spark-submit the driver's stderr is merged into its
    # stdout, and py4j logs at INFO when the interpreter exits, after the result line.
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    try:
        _session_log_level = log_level(early.log_level)
        ours = logging.DEBUG if _session_log_level in ("DEBUG", "TRACE", "ALL") else logging.INFO
        for name in ("hudi_core", "spark_jobs"):
            logging.getLogger(name).setLevel(ours)
        outcome = main(argv)
        code = 0
    except SystemExit:  # argparse: --help
        raise
    except Exception as exc:  # noqa: BLE001 - any failure must end in a result line
        if isinstance(exc, HudiError):  # says what is wrong: one line, no traceback
            print(f"spark_jobs/{job}.py: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        else:
            traceback.print_exc()
        outcome = {"job": job, "status": "FAILED", "error": f"{type(exc).__name__}: {exc}"}
        # What went wrong while cleaning up after the failure (a rollback that failed too).
        outcome.update({"notes": exc.__notes__} if getattr(exc, "__notes__", None) else {})
        code = 1
    outcome["duration_s"] = round(time.monotonic() - started, 1)
    result_file = early.result_file
    if result_file:
        try:
            write_result_file(result_file, outcome)
        except OSError as exc:  # the line still goes to stdout, the orchestrator's fallback
            _LOG.error("could not write the result file %s: %s", result_file, exc)
            outcome["result_file_error"] = f"{type(exc).__name__}: {exc}"
    print(json.dumps(outcome, sort_keys=True), flush=True)
    return code


def write_result_file(location: str, outcome: dict[str, Any]) -> None:
    """Writes a job's result to a local path or a URI (through pyarrow's file systems)."""
    filesystem, path = filesystem_for(location)
    with filesystem.open_output_stream(path) as stream:
        stream.write(json.dumps(outcome, sort_keys=True).encode("utf-8"))


def _early_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    """--result-file and --log-level, read even when the job's own arguments do not parse
    (and before the job starts its session)."""
    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("--result-file")
    early.add_argument("--log-level")
    known, _ = early.parse_known_args(argv)
    return known
