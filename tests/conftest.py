"""Shared test fixtures (Apache Hudi's own tables from ../shared, unpacked once per session) and
the test tiers: markers given by folder and by fixture, so a test needing Spark, Hive, Airflow or
a browser cannot miss its marker, and `--fast`, the tier that needs none of them."""

from __future__ import annotations

import logging
import os
import sys
import zipfile
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
# py4j logs at INFO from __del__ when Python exits, after pytest closed the streams: a
# "Logging error" traceback at the end of every run that starts Spark. Its INFO says nothing
# the tests need.
logging.getLogger("py4j").setLevel(logging.WARNING)
SHARED_FIXTURES = Path(
    os.environ.get(
        "HUDI_FIXTURES_DIR",
        Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "hudi-tables",
    )
)
# Every test in these folders gets the marker of the folder's name: it needs what the marker
# names, and so do the folder's imports.
MARKED_FOLDERS = ("spark", "hive", "airflow", "deploy")
# Tests using these fixtures start what the marker names, wherever they live.
FIXTURE_MARKERS = {
    "spark": "spark",
    "metastore": "hive",
    "thrift_server": "hive",
    "airflow_db": "airflow",
    "browser": "browser",
}
JVM_MARKERS = {"spark", "hive"}  # each also gets the umbrella marker `jvm`
FAST_TIER = "not jvm and not airflow and not browser and not deploy"
# The fast tier runs without these; a test importing one is missing its marker.
FAST_TIER_ABSENT = ("pyspark", "airflow", "selenium", "hmsclient", "pyhive")


def pytest_addoption(parser):
    parser.addoption(
        "--fast",
        action="store_true",
        help=f"the fast tier: -m '{FAST_TIER}' (and any -m given), without collecting "
        f"the folders {', '.join(f'tests/{f}' for f in MARKED_FOLDERS)}",
    )


def pytest_configure(config):
    if config.getoption("fast"):
        given = config.option.markexpr
        config.option.markexpr = f"({FAST_TIER}) and ({given})" if given else FAST_TIER


def pytest_ignore_collect(collection_path, config):
    """The fast tier does not even import the folders it deselects: pyspark, Airflow and the
    Hive clients need not be installed."""
    if config.getoption("fast") and collection_path.parent == TESTS:
        return collection_path.name in MARKED_FOLDERS or None
    return None


def tier_markers(item) -> set[str]:
    """The markers a test needs by its folder, its fixtures and its own marks."""
    names = {m.name for m in item.iter_markers()}
    names |= {FIXTURE_MARKERS[f] for f in item.fixturenames if f in FIXTURE_MARKERS}
    if item.path.is_relative_to(TESTS):
        names |= {item.path.relative_to(TESTS).parts[0]} & set(MARKED_FOLDERS)
    if names & JVM_MARKERS:
        names.add("jvm")
    return names


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items):
    for item in items:
        for name in sorted(tier_markers(item) - {m.name for m in item.iter_markers()}):
            item.add_marker(name)


def fast_tier_absent_loaded() -> list[str]:
    return [name for name in FAST_TIER_ABSENT if name in sys.modules]


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    """In the fast tier, a test module importing Spark, Airflow, Selenium or a Hive client is a
    collection error: it belongs in the folder of its marker."""
    before = fast_tier_absent_loaded()
    report = yield
    loaded = [name for name in fast_tier_absent_loaded() if name not in before]
    if collector.config.getoption("fast") and isinstance(collector, pytest.Module) and loaded:
        report.outcome = "failed"
        report.longrepr = (
            f"the fast tier imported {', '.join(loaded)} collecting {collector.nodeid}: "
            f"move it to tests/{{{','.join(MARKED_FOLDERS)}}} or import it inside marked tests"
        )
    return report


@pytest.fixture(autouse=True)
def _fast_tier_guard(request):
    """In the fast tier, a test that imports Spark, Airflow, Selenium or a Hive client fails:
    it is missing the marker that keeps it out."""
    before = fast_tier_absent_loaded()
    yield
    loaded = [name for name in fast_tier_absent_loaded() if name not in before]
    if request.config.getoption("fast") and loaded:
        pytest.fail(f"the fast tier imported {', '.join(loaded)}: mark this test", pytrace=False)


def fixture_zips(kind: str) -> list[Path]:
    """The zipped tables of one kind ('cow' or 'mor'); fails loudly if ../shared is missing."""
    folder = SHARED_FIXTURES / kind
    zips = sorted(folder.glob("*.zip"))
    if not zips:
        raise FileNotFoundError(
            f"no Apache Hudi fixture tables under {folder}; clone the project with ../shared "
            "beside it or set HUDI_FIXTURES_DIR"
        )
    return zips


@pytest.fixture(scope="session")
def hudi_fixture(tmp_path_factory):
    """Returns path_of(kind, zip_stem): the unpacked table folder of one fixture zip."""
    root = tmp_path_factory.mktemp("hudi-fixtures")

    def path_of(kind: str, zip_stem: str) -> Path:
        target = root / kind / zip_stem
        if not target.exists():
            with zipfile.ZipFile(SHARED_FIXTURES / kind / f"{zip_stem}.zip") as archive:
                archive.extractall(target)
        tables = [p for p in target.iterdir() if p.is_dir() and p.name != "__MACOSX"]
        assert len(tables) == 1, f"{zip_stem}.zip should unpack to one table folder: {tables}"
        return tables[0]

    return path_of


@pytest.fixture(scope="session")
def s3():
    """An S3-compatible server (moto's) on 127.0.0.1 with a bucket named `bucket`; each test
    keeps to prefixes of its own."""
    from tests.s3 import s3_server

    with s3_server() as server:
        server.create_bucket("bucket")
        yield server
