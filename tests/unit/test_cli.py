"""The `hudi` command line on a merge-on-read table holding every instant kind the library
makes, its JSON output checked against the files under .hoodie and the data files."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hudi_core import HudiTable
from hudi_core.cli import build_parser, main
from tests import datagen
from tests.tables import create_trips_table, data_files

KEYS = list(range(8))  # two keys in each of datagen's four cities: four file groups
DUE = ["--hoodie-conf", "hoodie.compact.inline.max.delta.commits=2"]
SHORT_HISTORY = [
    "--hoodie-conf=hoodie.cleaner.commits.retained=1",
    "--hoodie-conf=hoodie.keep.min.commits=2",
    "--hoodie-conf=hoodie.keep.max.commits=3",
]
# An instant's files: <time>.<action>[.requested|.inflight]
_STATE_FILE = re.compile(r"^(\d{17})\.([a-z]+)(?:\.(requested|inflight))?$")
_RANK = {"REQUESTED": 0, "INFLIGHT": 1, "COMPLETED": 2}


def run(capsys, *argv: str) -> object:
    """`hudi <argv> --json`: the JSON document it printed."""
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    return json.loads(out)


def _upsert(table: HudiTable, seed: int) -> str:
    instant = table.write(datagen.trips(KEYS, seed=seed, ts=seed), operation="upsert")
    assert instant is not None
    return instant


def _timeline_files(path: str) -> list[tuple[str, str, str]]:
    """(time, action, state) of each instant from the file names under .hoodie, in its latest
    state; a compaction shows as the commit it completes as, a savepoint apart from the
    commit whose time it shares."""
    latest: dict[tuple[str, bool], tuple[str, str, str]] = {}
    for name in os.listdir(Path(path) / ".hoodie"):
        match = _STATE_FILE.match(name)
        if match is None:
            continue
        time, action, suffix = match.groups()
        state = (suffix or "completed").upper()
        key = (time, action == "savepoint")
        known = latest.get(key)
        if known is None or _RANK[state] > _RANK[known[2]]:
            latest[key] = (time, action, state)
    return sorted(latest.values(), key=lambda i: (i[0], i[1] == "savepoint"))


def _mtime_utc(path: Path) -> datetime:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC)


def _logs_on_disk(path: str, partition: str, file_id: str, base_instant: str) -> list[int]:
    folder = Path(path) / partition
    return [p.stat().st_size for p in folder.glob(f".{file_id}_{base_instant}.log.*")]


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    """The table and what each step made: deltacommits, a compaction (checked while pending,
    then run), a rollback, a clean, archived instants, a savepoint, a restore; the services
    run through the installed `hudi` script."""
    path, table = create_trips_table(tmp_path_factory.mktemp("cli"), "MERGE_ON_READ")
    made: dict[str, object] = {"path": path}
    made["writes"] = [_upsert(table, seed) for seed in (1, 2, 3)]
    made["scheduled"] = _json(["compaction", "schedule", "--base-path", path, *DUE])
    made["logs_planned"] = sorted(
        p.stat().st_size for p in Path(path).rglob("*.log.*") if ".hoodie" not in p.parts
    )
    made["pending_view"] = _json(["compactions", "show", "--base-path", path])
    made["late_write"] = _upsert(table, 4)  # logs past the plan, on the compaction's slice
    made["compacted"] = _json(["compaction", "run", "--base-path", path])
    made["failed_write"] = _upsert(table, 5)
    made["rollback"] = _json(
        ["rollback", "--base-path", path, "--instant", str(made["failed_write"])]
    )
    *_, last = [_upsert(table, seed) for seed in (6, 7, 8)]
    made["clean"] = _json(["clean", "--base-path", path, *SHORT_HISTORY])
    made["archive"] = _json(["archive", "--base-path", path, *SHORT_HISTORY])
    made["unpinned"] = last
    made["savepoint_made"] = _json(["savepoint", "create", "--base-path", path, "--instant", last])
    made["savepoint_deleted"] = _json(
        ["savepoint", "delete", "--base-path", path, "--instant", last]
    )
    pinned = _upsert(table, 9)
    made["savepoint"] = _json(["savepoint", "create", "--base-path", path, "--instant", pinned])
    made["after_savepoint"] = _upsert(table, 10)
    made["restore"] = _json(["restore", "--base-path", path, "--instant", pinned])
    made["pinned"] = pinned
    return made


def _json(argv: list[str]) -> dict:
    """`hudi <argv> --json` in this process (the module fixture has no capsys)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main([*argv, "--json"]) == 0, err.getvalue()
    return json.loads(out.getvalue())


def _script(*argv: str) -> subprocess.CompletedProcess[str]:
    """The installed `hudi` console script, run as an operator runs it."""
    script = Path(sys.executable).parent / "hudi"
    return subprocess.run([str(script), *argv], capture_output=True, text=True, timeout=120)


def test_every_service_ran_and_left_its_instant(lake):
    path = Path(str(lake["path"]))
    hoodie = set(os.listdir(path / ".hoodie"))
    planned = lake["scheduled"]["instant"]
    assert planned is not None and lake["compacted"]["instant"] == planned
    assert f"{planned}.compaction.requested" in hoodie and f"{planned}.commit" in hoodie
    assert f"{lake['rollback']['instant']}.rollback" in hoodie
    assert f"{lake['clean']['instant']}.clean" in hoodie
    assert f"{lake['pinned']}.savepoint" in hoodie
    unpinned = lake["unpinned"]
    assert lake["savepoint_made"]["instant"] == lake["savepoint_deleted"]["instant"] == unpinned
    assert not any(n.startswith(f"{unpinned}.savepoint") for n in hoodie)
    assert f"{lake['restore']['instant']}.restore" in hoodie
    assert not any(n.startswith(f"{lake['after_savepoint']}.deltacommit") for n in hoodie)
    assert lake["archive"]["archived"], "the short history lets archival move instants"


def test_timeline_show_matches_the_files_under_hoodie(lake, capsys):
    path = str(lake["path"])
    shown = run(capsys, "timeline", "show", "--base-path", path)

    assert [(i["instant"], i["action"], i["state"]) for i in shown] == _timeline_files(path)
    assert {i["action"] for i in shown} >= {
        "deltacommit",
        "commit",
        "clean",
        "savepoint",
        "restore",
    }
    for info in shown:
        times = [info[k] for k in ("requested", "inflight", "completed") if info[k]]
        assert times == sorted(times) and all(t.endswith("Z") for t in times)
        if info["state"] == "COMPLETED":
            done = Path(path) / ".hoodie" / f"{info['instant']}.{info['action']}"
            shown_at = datetime.fromisoformat(info["completed"])
            assert abs((shown_at - _mtime_utc(done)).total_seconds()) < 0.002


def test_archived_timeline_holds_what_archival_moved(lake, capsys):
    path = str(lake["path"])
    archived = run(capsys, "timeline", "show", "--archived", "--base-path", path)
    active = run(capsys, "timeline", "show", "--base-path", path)

    moved = lake["archive"]["archived"]
    assert {(i["instant"], i["action"]) for i in archived} == {
        (i["instant"], i["action"]) for i in moved
    }
    assert max(i["instant"] for i in archived) < min(i["instant"] for i in active)
    assert list(Path(path, ".hoodie", "archived").glob(".commits_.archive.*"))
    for info in archived:
        assert not list(Path(path, ".hoodie").glob(f"{info['instant']}.*"))


def test_commits_show_sums_each_commit_file(lake, capsys):
    path = str(lake["path"])
    shown = run(capsys, "commits", "show", "--base-path", path, "--limit", "100")

    completed = [
        (t, a)
        for t, a, s in _timeline_files(path)
        if s == "COMPLETED" and a in ("commit", "deltacommit")
    ]
    assert [(c["instant"], c["action"]) for c in shown] == list(reversed(completed))
    for commit in shown:
        raw = json.loads(
            Path(path, ".hoodie", f"{commit['instant']}.{commit['action']}").read_text()
        )
        stats = [s for stats in raw["partitionToWriteStats"].values() for s in stats]
        assert commit["operation"] == raw["operationType"]
        assert commit["rows_inserted"] == sum(s["numInserts"] for s in stats)
        assert commit["rows_updated"] == sum(s["numUpdateWrites"] for s in stats)
        assert commit["rows_deleted"] == sum(s["numDeletes"] for s in stats)
        assert commit["rows_written"] == sum(s["numWrites"] for s in stats)
        assert commit["bytes_written"] == sum(s["totalWriteBytes"] for s in stats)
        assert commit["files_added"] == sum(1 for s in stats if s["prevCommit"] == "null")
        assert commit["files_added"] + commit["files_updated"] == len(stats)
    assert run(capsys, "commits", "show", "--base-path", path, "--limit", "2") == shown[:2]


def test_compactions_show_pending_then_completed(lake, capsys):
    path = str(lake["path"])
    planned = lake["scheduled"]["instant"]
    (pending,) = lake["pending_view"]
    assert (pending["instant"], pending["state"]) == (planned, "REQUESTED")
    assert pending["file_groups"] == 4 and pending["completed"] is None
    assert pending["log_files"] == len(lake["logs_planned"]) == 8
    assert pending["log_bytes"] == sum(lake["logs_planned"])

    (done,) = run(capsys, "compactions", "show", "--base-path", path)
    assert (done["instant"], done["state"]) == (planned, "COMPLETED")
    assert (done["file_groups"], done["log_files"]) == (4, 8)
    commit_file = Path(path, ".hoodie", f"{planned}.commit")
    assert json.loads(commit_file.read_text())["operationType"] == "COMPACT"
    assert datetime.fromisoformat(done["completed"]) <= datetime.now(UTC)
    assert done["age_s"] >= 0 and sorted(done["partitions"]) == sorted(datagen.CITIES)


def test_fsview_latest_matches_the_data_files(lake, capsys):
    path = str(lake["path"])
    shown = run(capsys, "fsview", "latest", "--base-path", path)

    on_disk = data_files(path)
    assert {r["file_id"] for r in shown} == {
        Path(f).name.lstrip(".").split("_")[0] for f in on_disk
    }
    for row in shown:
        assert row["base_file"] in on_disk
        assert row["base_file_size"] == os.path.getsize(Path(path) / row["base_file"])
        logs = _logs_on_disk(path, row["partition"], row["file_id"], row["base_instant"])
        assert (row["log_files"], row["log_bytes"]) == (len(logs), sum(logs))
    one = run(capsys, "fsview", "latest", "--base-path", path, "--partition", "chennai")
    assert one == [r for r in shown if r["partition"] == "chennai"] and one


def test_stats_add_up_the_files(lake, capsys):
    path = str(lake["path"])
    summary = run(capsys, "stats", "--base-path", path)

    on_disk = data_files(path)
    logs = [f for f in on_disk if ".log." in f]
    assert summary["partitions"] == len(datagen.CITIES) == len({Path(f).parent for f in on_disk})
    assert (summary["base_files"], summary["log_files"]) == (len(on_disk) - len(logs), len(logs))
    assert summary["bytes"] == sum(os.path.getsize(Path(path) / f) for f in on_disk)
    assert summary["instants"] == dict(Counter(a for _, a, _ in _timeline_files(path)))
    assert summary["archived_instants"] == len(lake["archive"]["archived"])
    assert summary["table_type"] == "MERGE_ON_READ" and summary["pending_compactions"] == 0


def test_the_installed_script_prints_what_main_prints(lake, capsys):
    path = str(lake["path"])
    done = _script("stats", "--base-path", path, "--json")
    assert done.returncode == 0 and done.stderr == ""
    assert json.loads(done.stdout) == run(capsys, "stats", "--base-path", path)


def test_human_output_is_an_aligned_table(lake, capsys):
    assert main(["commits", "show", "--base-path", str(lake["path"]), "--limit", "3"]) == 0
    header, rule, *rows = capsys.readouterr().out.splitlines()
    assert header.split()[:3] == ["instant", "action", "operation"] and len(rows) == 3
    assert set(rule) == {"-", " "} and all(len(r) <= len(rule) for r in rows)


def test_errors_print_one_line_and_exit_1(tmp_path, capsys):
    assert main(["stats", "--base-path", str(tmp_path / "nothing")]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("error: TableNotFoundError: no Hudi table at ")

    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE")
    _upsert(table, 1)
    assert main(["compaction", "run", "--base-path", path]) == 1
    assert capsys.readouterr().err.startswith("error: ServiceError: ")

    done = _script("timeline", "show", "--base-path", str(tmp_path / "nothing"))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("error: TableNotFoundError") and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["stats"],  # no --base-path
        ["stats", "--base-path", "p", "--hoodie-conf", "novalue"],
        ["compaction", "run", "--base-path", "p", "--order", "SIDEWAYS"],
        ["commits", "show", "--base-path", "p", "--limit", "0"],
        ["rollback", "--base-path", "p"],  # no --instant
    ],
)
def test_bad_arguments_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2


def test_every_command_has_help_with_defaults_and_choices(capsys):
    commands = [
        ["timeline", "show"],
        ["commits", "show"],
        ["compactions", "show"],
        ["fsview", "latest"],
        ["stats"],
        ["compaction", "schedule"],
        ["compaction", "run"],
        ["clean"],
        ["archive"],
        ["rollback"],
        ["savepoint", "create"],
        ["savepoint", "delete"],
        ["restore"],
    ]
    for command in commands:
        with pytest.raises(SystemExit) as exited:
            build_parser().parse_args([*command, "--help"])
        assert exited.value.code == 0
        assert "--base-path" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["compaction", "run", "--help"])
    text = capsys.readouterr().out
    assert "{FIFO,LIFO}" in text and "(default: FIFO)" in text
    with pytest.raises(SystemExit):
        main(["commits", "show", "--help"])
    assert "(default: 10)" in capsys.readouterr().out


def test_clustering_is_scheduled_then_run_by_hand(tmp_path, capsys):
    path, table = create_trips_table(
        tmp_path, "COPY_ON_WRITE", {"hoodie.parquet.small.file.limit": "0"}
    )
    for seed in range(1, 4):
        table.write(datagen.trips([k + 8 * seed for k in KEYS], seed=seed, ts=seed))
    sort = ["--hoodie-conf", "hoodie.clustering.plan.strategy.sort.columns=fare"]
    planned = run(capsys, "clustering", "schedule", "--base-path", path, *sort)
    assert planned["action"] == "clustering scheduled" and planned["instant"]
    assert table.clustering.pending() == [planned["instant"]]
    done = run(capsys, "clustering", "run", "--base-path", path, "--order", "lifo")
    assert done == {"action": "clustering run", "instant": planned["instant"]}
    assert table.clustering.pending() == []
    assert len({f.split("/")[0] for f in data_files(path)}) == 4
    assert table.read().num_rows == 24
