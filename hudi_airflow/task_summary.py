"""Task logs in words: what a task planned, wrote or skipped, and why, as a few lines the
operators log before they return (the job's JSON result line stays, for machines). E.g.

    ingest: read 3 files (1.2 MB) from /landing/trips since checkpoint 1767225600000
    ingest: wrote deltacommit 20261128093012345 (UPSERT): 250 records (200 inserts,
        50 updates, 0 deletes) in 4 file groups; checkpoint now 1767229200000
    ingest: took 12.4 s
    compaction: nothing to do: no compaction is due (2 of 5 delta commits since the last)
        and none is pending

(one line each, wrapped here).

`summary_lines(job, result)` reads a spark_jobs result (spark_jobs.cli.result: the instant,
its action and state, and the job's `counts`), or the result of an in-worker planning task
(`planning_result`, jobs `schedule_compaction` and `schedule_clustering`). Each line starts
with the service's name; a job this module has no phrasing for gets its counts listed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from hudi_core import CompactionOrder, HudiTable

# The name a line starts with: the service's, whichever task ran it.
LABELS = {
    "compact": "compaction",
    "cluster": "clustering",
    "schedule_compaction": "compaction",
    "schedule_clustering": "clustering",
}
NOTHING = "nothing to do"


def summary_lines(job: str, result: dict[str, Any]) -> list[str]:
    """The lines saying what `job` did, by its result; the last one its duration, if known."""
    counts = result.get("counts") or {}
    label = LABELS.get(job, job)
    lines = [f"{label}: {text}" for text in _PHRASES.get(job, _listed)(result, counts)]
    if result.get("duration_s") is not None:
        lines.append(f"{label}: took {float(result['duration_s']):.1f} s")
    return lines


def log_summary(log: logging.Logger, job: str, result: dict[str, Any]) -> list[str]:
    """Logs summary_lines at INFO, one log line each; returns them."""
    lines = summary_lines(job, result)
    for line in lines:
        log.info("%s", line)
    return lines


def log_skip(log: logging.Logger, job: str, reason: str) -> str:
    """Logs why a task skips (Airflow shows a skip's exception message poorly); the line."""
    line = f"{LABELS.get(job, job)}: {NOTHING}: {reason}"
    log.info("%s", line)
    return line


def log_wait_stopped(log: logging.Logger, waited_for: str, timeout_s: float, skipped: bool) -> str:
    """Logs what a sensor waited for when it stops without it (timed out or skipped)."""
    outcome = "skipping" if skipped else "failing"
    line = f"sensor: no {waited_for} within {_duration(timeout_s)}: {outcome}"
    log.info("%s", line)
    return line


# ---- ingest


def _ingest(result: dict[str, Any], c: dict[str, Any]) -> list[str]:
    hudi = "commits" in c
    unit = "commit" if hudi else "file"
    read = int(c.get("commits", c.get("files", 0)) or 0)
    where = c.get("source_path") or ("the upstream table" if hudi else "the source")
    source = f" for source {c['source']}" if c.get("source") else ""
    if read == 0:  # its checkpoint is the one it resumed after
        since = _since({"since_checkpoint": c.get("checkpoint"), **c}, hudi)
        new = f"new {unit}s in {c['source_path']}" if c.get("source_path") else _new(hudi)
        return [f"{NOTHING}: no {new}{since}{source}"]
    since = _since(c, hudi)
    size = f" ({_bytes(c['bytes_read'])})" if c.get("bytes_read") else ""
    lines = [f"read {_count(read, unit)}{size} from {where}{since}{source}"]
    if int(c.get("rounds") or 1) > 1:
        lines.insert(0, f"ran {c['rounds']} rounds; the last one:")
    if result.get("instant_time") is None:
        return [*lines, "wrote nothing: what was read held no record to write"]
    return [*lines, _written(result, c)]


def _new(hudi: bool) -> str:
    return "new commits in the upstream table" if hudi else "new source files"


def _since(c: dict[str, Any], hudi: bool) -> str:
    if c.get("modified_since") or c.get("modified_until"):
        since, until = c.get("modified_since") or "the start", c.get("modified_until") or "now"
        return f" modified in [{since}, {until}) (backfill)"
    if not c.get("since_checkpoint"):
        return " (no checkpoint yet: from the start)"
    return f" {'after instant' if hudi else 'since checkpoint'} {c['since_checkpoint']}"


def _written(result: dict[str, Any], c: dict[str, Any]) -> str:
    operation = f" ({c['operation']})" if c.get("operation") else ""
    records = (
        f"{_count(c.get('rows_written', 0), 'record')} ({_count(c.get('inserts', 0), 'insert')}, "
        f"{_count(c.get('updates', 0), 'update')}, {_count(c.get('deletes', 0), 'delete')})"
    )
    checkpoint = f"; checkpoint now {c['checkpoint']}" if c.get("checkpoint") else ""
    return (
        f"wrote {_instant(result)}{operation}: {records} in "
        f"{_count(c.get('file_groups', 0), 'file group')}{checkpoint}"
    )


# ---- compaction and clustering (the Spark jobs, and the planning tasks)


def _compaction(result: dict[str, Any], c: dict[str, Any]) -> list[str]:
    state, instant = result.get("state"), result.get("instant_time")
    groups = _count(c.get("file_groups", 0), "file group")
    logs = _count(c.get("log_files", 0), "log file")
    if instant is None:
        return [f"{NOTHING}: {_why_nothing('compaction', c)}"]
    if state == "REQUESTED":
        return [f"planned compaction {instant} of {groups} ({logs})"]
    return [
        f"completed compaction {instant}: {groups} merged with their {logs} "
        f"({_count(c.get('log_records', 0), 'log record')}), "
        f"{_count(c.get('rows_written', 0), 'record')} written"
    ]


def _clustering(result: dict[str, Any], c: dict[str, Any]) -> list[str]:
    state, instant = result.get("state"), result.get("instant_time")
    groups = _count(c.get("file_groups", 0), "file group")
    if instant is None:
        return [f"{NOTHING}: {_why_nothing('clustering', c)}"]
    if state == "REQUESTED":
        return [f"planned clustering {instant} of {groups}"]
    return [
        f"completed clustering {instant}: {groups} rewritten into "
        f"{_count(c.get('files_written', 0), 'file')}, "
        f"{_count(c.get('rows_written', 0), 'record')}"
    ]


def _why_nothing(service: str, c: dict[str, Any]) -> str:
    """Why a run planned and executed nothing: none pending (an execution), or none due."""
    if c.get("mode") == "execute":
        return f"no {service} is pending"
    pending = int(c.get("pending") or 0)
    left = (
        "none is pending"
        if not pending
        else f"{_count(pending, 'earlier plan')} pending (--mode execute runs them)"
    )
    return f"{_not_planned(service, c)} and {left}"


def _not_planned(service: str, c: dict[str, Any]) -> str:
    """Why no plan was made, by the trigger's state the result holds (if it does)."""
    if service == "clustering":
        limit = c.get("small_file_limit")
        under = f" under {_bytes(limit)}" if limit else ""
        return (
            f"no file group qualifies for clustering (none has a base file{under} outside "
            "pending plans)"
        )
    if "due" not in c:
        return "no compaction is due"
    if c["due"]:
        return f"a compaction is due ({_trigger(c)}) but no file slice has log files to compact"
    return f"no compaction is due ({_trigger(c)})"


def _trigger(c: dict[str, Any]) -> str:
    """The trigger's state, e.g. '2 of 5 delta commits since the last'."""
    done, needed = c.get("delta_commits", 0), c.get("max_delta_commits", 0)
    commits = f"{done} of {_count(needed, 'delta commit')}"
    since, after = c.get("seconds_since_last", 0), c.get("max_delta_seconds", 0)
    elapsed = f"{_duration(since)} of {_duration(after)}"
    strategy = c.get("trigger", "NUM_COMMITS")
    if strategy.startswith("NUM_COMMITS"):
        return f"{commits} since the last"
    if strategy == "TIME_ELAPSED":
        return f"{elapsed} since the last"
    joined = " and " if strategy == "NUM_AND_TIME" else " or "
    return f"{commits}{joined}{elapsed} since the last"


def _planning(result: dict[str, Any], c: dict[str, Any]) -> list[str]:
    """A planning task (schedule_compaction, schedule_clustering): what it planned, why not,
    and which plan goes to execution."""
    service = c["service"]
    if c.get("planned"):
        groups = f" of {_count(c['file_groups'], 'file group')}" if "file_groups" in c else ""
        lines = [f"planned {service} {c['planned']}{groups}"]
    else:
        lines = [f"planned no new {service}: {_not_planned(service, c)}"]
    chosen = result.get("instant_time")
    if chosen is None:
        return [f"{NOTHING}: {_not_planned(service, c)} and none is pending"]
    which = "oldest" if c.get("seq") == CompactionOrder.FIFO.value else "newest"
    pending = int(c.get("pending") or 0)
    return [*lines, f"to execute: {chosen} (the {which} of {pending} pending, {c.get('seq')})"]


def planning_result(
    table: HudiTable,
    service: str,
    planned: str | None,
    pending: Sequence[str],
    chosen: str | None,
    seq: CompactionOrder,
) -> dict[str, Any]:
    """The result of a planning task, as summary_lines reads it (job schedule_<service>): the
    plan it made, the plans pending, the one chosen, and the trigger's state when none was
    made."""
    counts: dict[str, Any] = {
        "service": service,
        "planned": planned,
        "pending": len(pending),
        "seq": CompactionOrder(seq).value,
    }
    if planned is not None:
        plan = getattr(table.inspect, service)(planned)
        counts["file_groups"] = len(plan.file_groups)
    else:
        counts.update(_trigger_state(table, service))
    return {
        "job": f"schedule_{service}",
        "base_path": str(table.storage.base_uri),
        "instant_time": chosen,
        "state": "REQUESTED" if chosen else "NOTHING_TO_DO",
        "counts": counts,
    }


def _trigger_state(table: HudiTable, service: str) -> dict[str, Any]:
    # The jobs' own accounts of their triggers (no pyspark needed to import them).
    if service == "compaction":
        from spark_jobs.compact import trigger_state

        return trigger_state(table)
    from spark_jobs.cluster import plan_limits

    return plan_limits(table)


# ---- the other services


def _clean(result: dict[str, Any], c: dict[str, Any]) -> list[str]:
    kept = _retention(c)
    if result.get("instant_time") is None:
        return [f"{NOTHING}: no file slice is past the retention{kept}"]
    failed = c.get("files_failed") or 0
    failures = f"; {_count(failed, 'file')} could not be deleted" if failed else ""
    return [
        f"clean {result['instant_time']} deleted {_count(c.get('files_deleted', 0), 'file')} "
        f"in {_count(c.get('partitions', 0), 'partition')}{kept}{failures}"
    ]


def _retention(c: dict[str, Any]) -> str:
    if not c.get("policy"):
        return ""
    since = c.get("earliest_commit_to_retain")
    from_commit = f", commits from {since} on" if since else ""
    if c.get("retained") is None:
        return f" ({c['policy']}{from_commit})"
    unit = f" {c['retained_unit']}" if c.get("retained_unit") else ""
    return f" ({c['policy']}: the latest {c['retained']}{unit} kept{from_commit})"


def _archive(result: dict[str, Any], c: dict[str, Any]) -> list[str]:
    active = _count(c.get("active_instants", 0), "instant")
    if result.get("instant_time") is None:
        limit = c.get("keep_max_commits")
        starts = f"; archival starts beyond {limit} completed commits (hoodie.keep.max.commits)"
        return [f"{NOTHING}: the active timeline holds {active}{starts if limit else ''}"]
    span = f"{c.get('oldest_archived')} .. {result['instant_time']}"
    return [
        f"archived {_count(c.get('instants_archived', 0), 'instant')} ({span}); "
        f"{active} stay on the active timeline"
    ]


def _hive_sync(result: dict[str, Any], c: dict[str, Any]) -> list[str]:
    outcome = c.get("outcome") or {}
    hive, commit = outcome.get("hive"), outcome.get("partition_commit")
    if hive is None and commit is None:
        return [
            f"{NOTHING}: the Hive sync is off (hoodie.datasource.hive_sync.enable) and no "
            "partition commit policy is set (sink.partition-commit.policy.kind)"
        ]
    lines = [_hive_tables(result, c)] if hive is not None else []
    if commit is not None:
        lines.append(
            f"partition commit: {_count(c.get('partitions_committed', 0), 'partition')} "
            f"committed, {c.get('partitions_waiting', 0)} waiting"
        )
    return lines


def _hive_tables(result: dict[str, Any], c: dict[str, Any]) -> str:
    synced_to = result.get("instant_time")
    if synced_to is None:
        return "nothing to sync: the table has no commit yet"
    changes = ("tables_created", "columns_updated", "partitions_added", "partitions_updated")
    if not any(c.get(key) for key in (*changes, "partitions_dropped")):
        return f"the Hive tables are in sync with commit {synced_to}: nothing changed"
    tables = ", ".join(c.get("tables") or []) or "the Hive tables"
    columns = c.get("columns_updated")
    return (
        f"synced {tables} to commit {synced_to}: "
        f"{_count(c.get('tables_created', 0), 'table')} created, "
        f"{_count(c.get('partitions_added', 0), 'partition')} added, "
        f"{c.get('partitions_updated', 0)} moved, {c.get('partitions_dropped', 0)} dropped"
        + (f"; columns of {_count(columns, 'table')} updated" if columns else "")
    )


def _bootstrap(result: dict[str, Any], c: dict[str, Any]) -> list[str]:
    operations = c.get("operations") or {}
    commits = ", ".join(f"{t} {op}" for t, op in sorted(operations.items()))
    source = c.get("source_path") or "the source"
    if not c.get("instants"):
        return [f"{NOTHING}: nothing was committed from {source}"]
    return [
        f"bootstrapped {source} in {_count(len(c['instants']), 'commit')} ({commits}): "
        f"{_count(c.get('partitions', 0), 'partition')}, "
        f"{_count(c.get('files_written', 0), 'file')}, "
        f"{_count(c.get('rows_written', 0), 'record')}"
    ]


def _rollback(result: dict[str, Any], c: dict[str, Any]) -> list[str]:
    return [
        f"rolled back {c.get('rolled_back')}: rollback {result.get('instant_time')} deleted "
        f"{_count(c.get('files_deleted', 0), 'file')}"
    ]


def _restore(result: dict[str, Any], c: dict[str, Any]) -> list[str]:
    rolled_back = _count(c.get("instants_rolled_back", 0), "instant")
    return [
        f"restored to savepoint {c.get('savepoint')}: {rolled_back} rolled back "
        f"(restore {result.get('instant_time')})"
    ]


def _savepoint(result: dict[str, Any], c: dict[str, Any]) -> list[str]:
    instant = result.get("instant_time")
    if result.get("state") == "DELETED":
        return [f"deleted savepoint {instant}"]
    return [f"savepointed commit {instant}: its files stay through cleaning and archival"]


def _listed(result: dict[str, Any], c: dict[str, Any]) -> list[str]:
    """A job without phrasing of its own: its instant and counts."""
    listed = ", ".join(f"{k} {v}" for k, v in c.items() if isinstance(v, (int, float, str)))
    if result.get("instant_time") is None:
        return [f"{NOTHING}" + (f" ({listed})" if listed else "")]
    return [f"{_instant(result)}" + (f": {listed}" if listed else "")]


_PHRASES: dict[str, Callable[[dict[str, Any], dict[str, Any]], list[str]]] = {
    "ingest": _ingest,
    "compact": _compaction,
    "cluster": _clustering,
    "schedule_compaction": _planning,
    "schedule_clustering": _planning,
    "clean": _clean,
    "archive": _archive,
    "hive_sync": _hive_sync,
    "bootstrap": _bootstrap,
    "rollback": _rollback,
    "restore": _restore,
    "savepoint": _savepoint,
}


# ---- words for numbers


def _count(n: int | float, thing: str) -> str:
    """'1 file', '3 files', '0 deletes'."""
    return f"{n} {thing}" if n == 1 else f"{n} {thing}s"


def _instant(result: dict[str, Any]) -> str:
    """'deltacommit 20261128093012345' (its state too, unless completed)."""
    state = result.get("state")
    shown = "" if state in (None, "COMPLETED") else f" ({state.lower()})"
    return f"{result.get('action') or 'instant'} {result.get('instant_time')}{shown}"


def _bytes(n: int | float) -> str:
    """1258291 -> '1.2 MB' (binary units, as Apache Hudi's size options count them)."""
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024:
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"


def _duration(seconds: int | float) -> str:
    """45 -> '45 s', 1200 -> '20 min', 5400 -> '1.5 h', 259200 -> '3.0 days'."""
    if seconds < 120:
        return f"{int(seconds)} s"
    if seconds < 2 * 3600:
        return f"{int(seconds // 60)} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
