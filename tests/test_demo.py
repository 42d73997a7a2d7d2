"""The demo (the README's main job) runs, and the hudi package agrees with every read it shows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_demo_writes_a_table_that_hudi_rs_reads_like_we_do(tmp_path, table_type):
    script = str(ROOT / "examples" / "demo.py")
    result = subprocess.run(
        [sys.executable, script, "--path", str(tmp_path / "t"), "--table-type", table_type],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("returns the same rows: True") == 4
    assert "replacecommit" in result.stdout
    assert "clean          COMPLETED" in result.stdout
    if table_type == "MERGE_ON_READ":
        assert "commit         COMPLETED" in result.stdout  # the compaction
