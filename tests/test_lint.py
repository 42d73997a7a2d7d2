"""The code stays ruff-clean (lint and format), as the conventions ask."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ["hudi_core", "spark_jobs", "hudi_airflow", "dags", "tests", "bench", "examples"]


def test_ruff_check_passes():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", *SOURCES], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout


def test_ruff_format_is_applied():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", *SOURCES],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout
