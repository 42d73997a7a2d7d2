"""Seeded random sequences of every write operation and table service, on both table types
and every index, with steps killed midway; see tests/sequences/runner.py and
docs/development.md (replaying a seed, running longer)."""

from __future__ import annotations

import os
import time

import pytest

from tests.sequences import budget
from tests.sequences.runner import Result, run_sequence, shrink

SHRINK_SECONDS = float(os.environ.get("HUDI_SEQUENCE_SHRINK_SECONDS", 60))


def _fail(result: Result, root) -> None:
    message = result.report()
    shrunk = shrink(result.seed, root, result.steps, SHRINK_SECONDS)
    if shrunk is not None:
        again = run_sequence(result.seed, root, 0, shrunk)
        if again.failure is not None:
            message += f"\n\nshrunk to {len(shrunk)} steps:\n" + again.report()
    pytest.fail(message, pytrace=False)


def _run(seed: int, root) -> None:
    result = run_sequence(seed, root, budget.steps())
    if result.failure is not None:
        _fail(result, root)


@pytest.mark.parametrize("seed", range(budget.seed_count()))
def test_sequence(seed, tmp_path):
    if budget.replay_seed() is not None or budget.minutes():
        pytest.skip("HUDI_SEQUENCE_SEED or HUDI_SEQUENCE_MINUTES runs other seeds")
    _run(seed, tmp_path)


@pytest.mark.skipif(budget.replay_seed() is None, reason="set HUDI_SEQUENCE_SEED to replay")
def test_replay(tmp_path):
    _run(budget.replay_seed(), tmp_path)  # type: ignore[arg-type]


@pytest.mark.skipif(not budget.minutes(), reason="set HUDI_SEQUENCE_MINUTES for a long run")
def test_for_minutes(tmp_path):
    deadline = time.monotonic() + budget.minutes() * 60
    seed = budget.seed_count()  # past the CI seeds
    failures = []
    while time.monotonic() < deadline:
        result = run_sequence(seed, tmp_path, budget.steps())
        if result.failure is not None:
            failures.append(result.report())
        seed += 1
    assert not failures, "\n\n".join(failures)
