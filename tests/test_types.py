"""hudi_core type-checks under mypy --strict (pyproject's [tool.mypy]), and options read through
`Options.get_option` carry their value type to the caller."""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).resolve().parents[1]


def _mypy(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[str, int]:
    monkeypatch.chdir(ROOT)  # pyproject's [tool.mypy] names its files relative to the root
    stdout, stderr, status = api.run(["--config-file", str(ROOT / "pyproject.toml"), *args])
    return stdout + stderr, status


def test_hudi_core_passes_mypy_strict(monkeypatch):
    report, status = _mypy(monkeypatch)
    assert status == 0, report


def test_the_package_ships_its_type_marker():
    assert (ROOT / "hudi_core" / "py.typed").is_file()


def test_get_option_returns_the_option_value_type(monkeypatch, tmp_path):
    code = "\n".join(
        [
            "from hudi_core.config import Options",
            "from hudi_core.config import lock_options as L, table_options as T",
            "options = Options({})",
            "reveal_type(options.get_option(L.NUM_RETRIES))",
            "reveal_type(options.get_option(T.RECORD_KEY_FIELDS))",
            "reveal_type(options.get_option(T.DATABASE_NAME))",
            "reveal_type(options.get_option(T.HIVE_STYLE_PARTITIONING))",
        ]
    )
    snippet = tmp_path / "typed_options.py"
    snippet.write_text(code + "\n")
    report, status = _mypy(monkeypatch, str(snippet))
    assert status == 0, report
    revealed = [
        line.split("Revealed type is ")[1].strip('"').replace("builtins.", "")
        for line in report.splitlines()
        if "Revealed type is" in line
    ]
    assert revealed == ["int", "list[str]", "str | None", "bool"]
