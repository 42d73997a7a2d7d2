"""The long run: `python -m tests.sequences --minutes 60 --report` runs random sequences for
a time budget and prints how many sequences, steps and kills ran, and one line per divergence
(with its seed; replay it with HUDI_SEQUENCE_SEED=<seed>)."""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from tests.sequences import budget
from tests.sequences.runner import Result, run_sequence


def _one(seed: int, root: str, steps: int) -> Result:
    return run_sequence(seed, Path(root), steps)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.sequences", description=__doc__)
    parser.add_argument("--minutes", type=float, default=1.0)
    parser.add_argument("--steps", type=int, default=budget.steps())
    parser.add_argument("--jobs", type=int, default=1, help="sequences run at once")
    parser.add_argument("--first-seed", type=int, default=None, help="default: random")
    parser.add_argument("--report", action="store_true", help="print each failure in full")
    args = parser.parse_args(argv)
    seed = args.first_seed if args.first_seed is not None else random.randrange(10**6, 10**9)
    deadline = time.monotonic() + args.minutes * 60
    totals = {"sequences": 0, "steps": 0, "kills": 0}
    failures: list[Result] = []
    root = tempfile.mkdtemp(prefix="hudi-sequences-")
    with ProcessPoolExecutor(args.jobs) as pool:
        while time.monotonic() < deadline:
            seeds = range(seed, seed + args.jobs)
            seed += args.jobs
            for result in pool.map(_one, seeds, [root] * args.jobs, [args.steps] * args.jobs):
                totals["sequences"] += 1
                totals["steps"] += len(result.steps)
                totals["kills"] += result.kills
                if result.failure is not None:
                    failures.append(result)
                    print(_line(result), flush=True)
    print(" ".join(f"{k}={v}" for k, v in totals.items()), f"divergences={len(failures)}")
    if args.report:
        for result in failures:
            print("\n" + result.report())
    return 1 if failures else 0


def _line(result: Result) -> str:
    first = (result.failure or "").splitlines()[0]
    where = f"step={len(result.steps) - 1} {result.steps[-1].kind}"
    return f"DIVERGENCE seed={result.seed} {where}: {first}"


if __name__ == "__main__":
    sys.exit(main())
