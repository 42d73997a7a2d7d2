"""Shared test fixtures: Apache Hudi's own tables from ../shared, unpacked once per session."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

SHARED_FIXTURES = Path(
    os.environ.get(
        "HUDI_FIXTURES_DIR",
        Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "hudi-tables",
    )
)


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
