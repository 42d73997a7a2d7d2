"""The README stays true: its option list is the one the code declares."""

from __future__ import annotations

import re
from pathlib import Path

from hudi_core.config.__main__ import options_table

README = Path(__file__).resolve().parents[1] / "README.md"


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
