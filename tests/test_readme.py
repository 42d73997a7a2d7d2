"""The docs stay true and usable: the README is short, has the sections a newcomer needs and a
quickstart that runs, as does each of its Python blocks on its own; docs/ holds the rest, its
option list is the one the code declares, no statement that stopped being true comes back, and
every relative link resolves."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path

from hudi_core.config.__main__ import options_table
from hudi_core.services.compaction import Compactor

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
OPTIONS_DOC = DOCS / "options.md"
SPARK_DOC = DOCS / "spark.md"
SPARK_JOBS_README = ROOT / "spark_jobs" / "README.md"
README_MAX_BYTES = 16 * 1024
README_SECTIONS = [
    "## Compatibility",
    "## Limitations",
    "## The two commands",
    "## Quickstart",
    "## The DAGs in one picture",
    "## Documentation",
]

# Statements that were true once (or never) and must not come back. Matched case-sensitively
# on text whose whitespace (line breaks included) is collapsed to single spaces.
STALE_IN_DOCS = [
    "Hive metastore sync comes next",  # hudi_core.sync, spark_jobs/hive_sync.py, DAG tasks
    "are on the roadmap",  # concurrent writers: hudi_core.lock, optimistic concurrency
    "Concurrent writers (a lock provider, conflict detection)",
    "Spark executors later",  # spark_jobs runs the per-file-group tasks on executors
    "(an Airflow task, later)",  # the Airflow DAGs run the services
    'oldest pending plan (order="LIFO")',  # Compactor.run defaults to FIFO
    "Duplicate keys of one write are still pre-combined into one change",  # MOR keeps all
    "being built now",  # the metadata table removal and the bootstrap refusal exist
    "Apache Hudi bootstrapped are refused",  # bootstrapped tables are read (issue 20)
    "writes do not yet avoid their file groups",  # pending clustering is respected
    "It waits for a write still in flight",  # scheduling fails (or, under OCC, plans)
    "The default lock (in-process) guards one process only",  # Airflow: database + OCC
    "every check runs before an instant is created",  # option checks may come later
    "`s3a://` fails",  # s3a:// is S3 (hudi_core.filesystems)
    "always tags with its own `SIMPLE`",  # the Spark writer honours hoodie.index.type
    "else Airflow's",  # tasks never read Airflow's metadata database (Airflow 3 forbids it)
    "Airflow's own metadata database",
    "Airflow tasks get Airflow's metadata database",
    "runs triggered from the UI stay queued",  # ./run.sh ui runs the scheduler too
    "the Airflow provider's default)",  # the default lock follows the storage
]
STALE_PHRASES = {
    SPARK_JOBS_README: [
        "Not built yet",
        "runs its tasks on local threads meanwhile",
        "whatever `hoodie.index.type` says",  # the Spark writer honours every index type
    ],
}


def _doc_files() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def _prose(path: Path) -> str:
    """The file's text without the generated options block, whitespace collapsed."""
    text = path.read_text()
    text = re.sub(r"<!-- options:start -->.*<!-- options:end -->", "", text, flags=re.S)
    return re.sub(r"\s+", " ", text)


def _section(path: Path, heading: str) -> str:
    """The text under a `## ` heading, up to the next one."""
    lines = path.read_text().splitlines()
    start = lines.index(heading)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), None)
    return "\n".join(lines[start + 1 : end])


def test_the_readme_is_short_and_has_its_sections():
    size = len(README.read_bytes())
    assert size < README_MAX_BYTES, f"README.md is {size} bytes; move detail into docs/"
    lines = README.read_text().splitlines()
    missing = [heading for heading in README_SECTIONS if heading not in lines]
    assert not missing, f"the README lost its sections {missing}"
    positions = [lines.index(heading) for heading in README_SECTIONS]
    assert positions == sorted(positions), (
        f"the README's sections go in the order {README_SECTIONS}"
    )


def test_the_readme_maps_every_doc_and_each_exists():
    mapped = set(re.findall(r"\]\((docs/[\w.-]+\.md)\)", _section(README, "## Documentation")))
    assert mapped, "the README's Documentation section links no doc"
    missing = sorted(doc for doc in mapped if not (ROOT / doc).is_file())
    assert not missing, f"the README maps docs that do not exist: {missing}"
    unmapped = sorted(
        str(doc.relative_to(ROOT))
        for doc in DOCS.glob("*.md")
        if str(doc.relative_to(ROOT)) not in mapped
    )
    assert not unmapped, f"docs the README's Documentation section does not map: {unmapped}"


def test_every_relative_link_resolves():
    broken = []
    for path in [*_doc_files(), *ROOT.glob("*/README.md")]:
        text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):
                continue  # https:, mailto: ...
            file_part, _, anchor = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            if not linked.exists():
                broken.append(f"{path.relative_to(ROOT)}: {target}")
            elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
                broken.append(f"{path.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "broken links:\n" + "\n".join(broken)


def _anchors(path: Path) -> set[str]:
    """The anchors GitHub makes of a Markdown file's headings."""
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    headings = re.findall(r"^#+ (.+)$", text, flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def _python_blocks() -> list[str]:
    """Every ```python block of the README, in order."""
    return re.findall(r"^```python\n(.*?)^```", README.read_text(), flags=re.S | re.M)


def _run_block(code: str, cwd: Path) -> subprocess.CompletedProcess:
    """A block run alone, in a fresh interpreter and folder: it defines what it uses."""
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_the_quickstart_runs_as_written(tmp_path):
    block = re.search(r"```python\n(.*?)```", _section(README, "## Quickstart"), re.S)
    assert block, "the README's quickstart lost its Python block"
    code = block.group(1)
    assert len(code.splitlines()) <= 14, "the quickstart is a dozen lines at most"
    run = _run_block(code, tmp_path)
    assert run.returncode == 0, run.stderr
    assert "'fare': 12.0" in run.stdout, run.stdout


def test_every_python_block_of_the_readme_runs(tmp_path):
    blocks = _python_blocks()
    assert blocks, "the README has no Python block"
    failures = []
    for number, code in enumerate(blocks, start=1):
        folder = tmp_path / f"block{number}"
        folder.mkdir()
        run = _run_block(code, folder)
        if run.returncode != 0:
            failures.append(f"block {number}:\n{code}\n{run.stderr[-2000:]}")
    assert not failures, "README Python blocks that do not run:\n" + "\n".join(failures)


def test_the_options_reference_lists_every_option_as_declared():
    text = OPTIONS_DOC.read_text()
    block = re.search(r"<!-- options:start -->\n(.*)\n<!-- options:end -->", text, re.S)
    assert block, "docs/options.md lost its options block"
    assert block.group(1) == options_table(), "run python -m hudi_core.config into docs/options.md"


def test_readme_names_the_commands_ci_runs():
    text = README.read_text()
    assert "./run.sh demo" in text and "./run.sh test" in text and "./run.sh test-fast" in text
    ci = (README.parent / ".ci" / "run").read_text()
    assert "./run.sh test" in ci


def test_no_stale_statement_comes_back():
    phrases = {**{path: STALE_IN_DOCS for path in _doc_files()}, **STALE_PHRASES}
    found = [
        f"{path.relative_to(ROOT)}: {phrase!r}"
        for path, stale in phrases.items()
        if path.exists()
        for phrase in stale
        if phrase in _prose(path)
    ]
    assert not found, "stale statements in the docs:\n" + "\n".join(found)


def test_the_compaction_example_shows_the_default_order():
    default = inspect.signature(Compactor.run).parameters["order"].default
    lines = [
        line
        for path in _doc_files()
        for line in path.read_text().splitlines()
        if line.lstrip().startswith("table.compaction.run()")
    ]
    assert lines, "the docs lost their compaction example"
    wrong = [line for line in lines if f'order="{default}"' not in line]
    assert not wrong, f"Compactor.run's default order is {default}: {wrong}"


def test_a_limitations_section_comes_near_the_top():
    lines = README.read_text().splitlines()
    assert "## Limitations" in lines, "the README lost its Limitations section"
    start = lines.index("## Limitations")
    assert start < 60, "the Limitations section belongs near the top"
    assert start < lines.index("## The two commands")
    section = _section(README, "## Limitations")
    collapsed = re.sub(r"\s+", " ", section).lower()
    for subject in (
        "metadata table",
        "clustering",
        "bootstrap",
        "bucket index",
        "global indexes",
        "table versions 8 and 9",
        "s3a://",
        "cdc",
        "log compaction",
    ):
        assert subject in collapsed, f"the Limitations section does not name {subject!r}"
    items = [line for line in section.splitlines() if line.startswith("- ")]
    assert items and all(len(item) <= 200 for item in items), "one short line per limitation"


def test_every_spark_job_is_in_the_jobs_table():
    text = SPARK_DOC.read_text()
    for job in sorted((ROOT / "spark_jobs").glob("*.py")):
        source = job.read_text()
        if "__main__" in source and "cli.run(" in source:
            assert f"| `{job.name}` |" in text, f"spark_jobs/{job.name} is not in docs/spark.md"
