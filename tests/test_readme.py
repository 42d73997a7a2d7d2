"""The README stays true: its option list is the one the code declares, it no longer says
what stopped being true, and it says up front what is not supported."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from hudi_core.config.__main__ import options_table
from hudi_core.services.compaction import Compactor

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SPARK_JOBS_README = ROOT / "spark_jobs" / "README.md"

# Statements that were true once (or never) and must not come back. Matched case-sensitively
# on text whose whitespace (line breaks included) is collapsed to single spaces.
STALE_PHRASES = {
    README: [
        "Hive metastore sync comes next",  # hudi_core.sync, spark_jobs/hive_sync.py, DAG tasks
        "are on the roadmap",  # concurrent writers: hudi_core.lock, optimistic concurrency
        "Concurrent writers (a lock provider, conflict detection)",
        "Spark executors later",  # spark_jobs runs the per-file-group tasks on executors
        "(an Airflow task, later)",  # the Airflow DAGs run the services
        'oldest pending plan (order="LIFO")',  # Compactor.run defaults to FIFO
        "Duplicate keys of one write are still pre-combined into one change",  # MOR keeps all
        "being built now",  # the metadata table removal and the bootstrap refusal exist
        "writes do not yet avoid their file groups",  # pending clustering is respected
        "It waits for a write still in flight",  # scheduling fails (or, under OCC, plans)
        "--base-path s3a://",  # pyarrow.fs does not open s3a:// URIs
        "The default lock (in-process) guards one process only",  # Airflow: database + OCC
        "every check runs before an instant is created",  # option checks may come later
    ],
    SPARK_JOBS_README: [
        "Not built yet",
        "runs its tasks on local threads meanwhile",
    ],
}


def _prose(path: Path) -> str:
    """The file's text without the generated options block, whitespace collapsed."""
    text = path.read_text()
    text = re.sub(r"<!-- options:start -->.*<!-- options:end -->", "", text, flags=re.S)
    return re.sub(r"\s+", " ", text)


def test_readme_lists_every_option_as_declared():
    text = README.read_text()
    block = re.search(r"<!-- options:start -->\n(.*)\n<!-- options:end -->", text, re.S)
    assert block, "the README lost its options block"
    assert block.group(1) == options_table(), "run python -m hudi_core.config into the README"


def test_readme_names_the_commands_ci_runs():
    text = README.read_text()
    assert "./run.sh demo" in text and "./run.sh test" in text
    ci = (README.parent / ".ci" / "run").read_text()
    assert "./run.sh test" in ci


def test_no_stale_statement_comes_back():
    found = [
        f"{path.relative_to(ROOT)}: {phrase!r}"
        for path, phrases in STALE_PHRASES.items()
        for phrase in phrases
        if phrase in _prose(path)
    ]
    assert not found, "stale statements in the docs:\n" + "\n".join(found)


def test_the_compaction_example_shows_the_default_order():
    default = inspect.signature(Compactor.run).parameters["order"].default
    lines = [line for line in README.read_text().splitlines() if "table.compaction.run()" in line]
    assert lines, "the README lost its compaction example"
    assert f'order="{default}"' in lines[0], f"Compactor.run's default order is {default}"


def test_a_limitations_section_comes_near_the_top():
    lines = README.read_text().splitlines()
    headings = [i for i, line in enumerate(lines) if line.startswith("## ")]
    assert "## Limitations" in lines, "the README lost its Limitations section"
    start = lines.index("## Limitations")
    assert start < 60, "the Limitations section belongs near the top"
    assert start < lines.index("## The two commands")
    end = next((i for i in headings if i > start), len(lines))
    section = re.sub(r"\s+", " ", "\n".join(lines[start:end])).lower()
    for subject in (
        "metadata table",
        "clustering",
        "bootstrap",
        "bucket index",
        "global indexes",
        "table versions 8 and 9",
        "hoodie.index.type",  # the Spark writer ignores it
        "s3a://",
        "cdc",
        "log compaction",
    ):
        assert subject in section, f"the Limitations section does not name {subject!r}"
    items = [line for line in lines[start:end] if line.startswith("- ")]
    assert items and all(len(item) <= 200 for item in items), "one short line per limitation"


def test_every_spark_job_is_in_the_jobs_table():
    text = README.read_text()
    for job in sorted((ROOT / "spark_jobs").glob("*.py")):
        source = job.read_text()
        if "__main__" in source and "cli.run(" in source:
            assert f"| `{job.name}` |" in text, f"spark_jobs/{job.name} is not in the jobs table"
