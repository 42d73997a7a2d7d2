"""Which seeds run, and for how long: the fixed CI seeds, or what the environment asks
(HUDI_SEQUENCE_SEED: replay one; HUDI_SEQUENCES: that many seeds; HUDI_SEQUENCE_MINUTES: a time
budget; HUDI_SEQUENCE_STEPS: steps per sequence)."""

from __future__ import annotations

import os

CI_SEEDS = 40
DEFAULT_STEPS = 30


def replay_seed() -> int | None:
    raw = os.environ.get("HUDI_SEQUENCE_SEED")
    return int(raw) if raw else None


def seed_count() -> int:
    return int(os.environ.get("HUDI_SEQUENCES", CI_SEEDS))


def minutes() -> float:
    return float(os.environ.get("HUDI_SEQUENCE_MINUTES", 0))


def steps() -> int:
    return int(os.environ.get("HUDI_SEQUENCE_STEPS", DEFAULT_STEPS))
