"""Bloom filter hashing: the numpy path against the compiled (numba) one, in one process.

Prints what a process pays once to use the compiled path (importing numba, loading or
compiling the cached kernels), each path's nanoseconds per MurmurHash hash when adding and
probing N random 16-character keys at the default filter settings, and the break-even: how
many hashes the numpy path must do before switching has paid for itself. bloom_filter's
_COMPILED_AFTER_HASHES should sit near it (the filters are byte-identical either way).

Usage: python bench/bloom_bench.py [--keys N] [--repeat R]
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cow_write_bench import random_keys  # noqa: E402

from hudi_core.config import index_options as I  # noqa: E402
from hudi_core.io import bloom_filter as bf  # noqa: E402


def new_filter() -> bf.BloomFilter:
    return bf.new_bloom_filter(
        I.BLOOM_FILTER_TYPE.default,
        I.BLOOM_NUM_ENTRIES.default,
        I.BLOOM_FPP.default,
        I.BLOOM_DYNAMIC_MAX_ENTRIES.default,
    )


def use_compiled(compiled: bool) -> None:
    """Forces a path for the rest of the process (the module's own switch, not an option)."""
    bf._COMPILED_AFTER_HASHES = 0 if compiled else 2**62


def best_seconds(repeat: int, run) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    switch = bf._COMPILED_AFTER_HASHES  # before use_compiled moves it
    rng = np.random.default_rng(7)
    keys, absent = random_keys(args.keys, rng), random_keys(args.keys, rng)
    hashes = args.keys * new_filter().num_hashes

    use_compiled(True)
    started = time.process_time()
    new_filter().add_keys(keys[:10])  # imports numba, loads (or compiles) the kernels
    start_up = time.process_time() - started
    assert bf._compiled_module is not None, "numba did not import: no compiled path to measure"
    print(f"compiled path start-up (numba import, kernels loaded or compiled): {start_up:.2f} s")

    per_hash = {}
    serialized = {}
    for compiled in (False, True):
        use_compiled(compiled)
        name = "compiled" if compiled else "numpy"
        full = new_filter()
        add = best_seconds(args.repeat, lambda: new_filter().add_keys(keys))
        full.add_keys(keys)
        probe = best_seconds(args.repeat, functools.partial(full.might_contain, absent))
        serialized[name] = full.serialize()
        per_hash[name] = add / hashes
        print(
            f"{name:>8}: add {add:.3f} s ({add / hashes * 1e9:.1f} ns a hash), "
            f"probe of absent keys {probe:.3f} s"
        )
    assert serialized["numpy"] == serialized["compiled"], "the two paths' filters differ"
    saved = per_hash["numpy"] - per_hash["compiled"]
    ratio = per_hash["numpy"] / per_hash["compiled"]
    print(f"numpy / compiled per hash: ratio {ratio:.2f}x")
    if saved > 0:
        print(
            f"break-even: {start_up / saved / 1e6:.0f}M hashes "
            f"(the switch is set at {switch / 1e6:.0f}M; target: within 2x of the break-even)"
        )
    else:
        print("break-even: never (the compiled path is not faster here; target: faster)")


if __name__ == "__main__":
    main()
