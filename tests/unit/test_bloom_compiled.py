"""The compiled (numba) bloom filter hashing gives exactly what the numpy path gives.

The numpy path is checked against Java/Hadoop golden values in test_bloom_filter.py, which
also runs every golden test on both paths; here the two paths are compared on inputs the
goldens do not reach: many keys (several compiled chunks), every key length from 1 to 40
bytes (every tail length, lengths crossing 4-byte blocks), multi-byte UTF-8 (tails with
bytes >= 0x80, which Hadoop reads as signed), multi-row and cycling dynamic filters. Also:
small writes never import numba, and without numba the numpy path gives the same bytes.
"""

from __future__ import annotations

import builtins
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import hudi_core.io
from hudi_core.io import bloom_filter
from hudi_core.io.bloom_filter import (
    DYNAMIC_V0,
    MURMUR_HASH,
    SIMPLE,
    deserialize_bloom_filter,
    hash_keys,
    new_bloom_filter,
)

ROOT = Path(__file__).resolve().parents[2]
PATHS = ("numpy", "compiled")
# 1-byte, 2-byte, 3-byte and 4-byte UTF-8 characters.
ALPHABET = list("az09_-:") + ["é", "ß", "Ω", "Ж", "中", "文", "€", "😀", "𝄞"]


def force_hashing_path(monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    """Makes bloom_filter hash every MurmurHash batch on `path` ("numpy" or "compiled")."""
    monkeypatch.setattr(bloom_filter, "_numpy_hashes", 0)
    monkeypatch.setattr(bloom_filter, "_compiled_failed", False)
    if path == "numpy":
        monkeypatch.setattr(bloom_filter, "_compiled_module", None)
        monkeypatch.setattr(bloom_filter, "_COMPILED_AFTER_HASHES", 2**62)
        assert bloom_filter._compiled(MURMUR_HASH, 10**9) is None
    else:
        monkeypatch.setattr(bloom_filter, "_COMPILED_AFTER_HASHES", 0)
        # numba is a dependency: a failed import here is a broken install, not a skip.
        assert bloom_filter._compiled(MURMUR_HASH, 1) is not None, "numba did not import"


def varied_keys(count: int, seed: int = 0) -> list[str]:
    """Keys of every length from 1 to 40 bytes, a third with multi-byte characters."""
    rng = np.random.default_rng(seed)
    keys = []
    for index in range(count):
        byte_length = 1 + index % 40
        chars = ALPHABET if index % 3 == 0 else ALPHABET[:4]
        key = ""
        while len(key.encode()) < byte_length:
            candidate = key + str(rng.choice(chars))
            key = candidate if len(candidate.encode()) <= byte_length else key + "a"
        keys.append(key)
    return keys


def built_on(monkeypatch, path: str, type_code: str, keys: list[str], batches: int = 1):
    force_hashing_path(monkeypatch, path)
    bloom = new_bloom_filter(type_code, 1_000, 0.001, 5_000)
    for part in np.array_split(np.arange(len(keys)), batches):
        bloom.add_keys([keys[i] for i in part])
    return bloom


@pytest.mark.parametrize("type_code", [SIMPLE, DYNAMIC_V0])
def test_compiled_filters_match_numpy_byte_for_byte(monkeypatch, type_code):
    keys = varied_keys(12_000)  # the dynamic filter grows 5 rows, then cycles over them
    serialized = {path: built_on(monkeypatch, path, type_code, keys).serialize() for path in PATHS}
    assert serialized["compiled"] == serialized["numpy"]
    if type_code == DYNAMIC_V0:
        assert deserialize_bloom_filter(serialized["numpy"], DYNAMIC_V0).num_rows == 5


def test_every_key_length_sets_the_same_bits(monkeypatch):
    """One key per filter, so a wrong bit for any single length or tail shows."""
    keys = varied_keys(120, seed=3)
    for key in keys:
        serialized = {
            path: built_on(monkeypatch, path, SIMPLE, [key]).serialize() for path in PATHS
        }
        assert serialized["compiled"] == serialized["numpy"], key


def test_batches_on_the_compiled_path_match_one_numpy_batch(monkeypatch):
    keys = varied_keys(9_000, seed=5)
    one = built_on(monkeypatch, "numpy", DYNAMIC_V0, keys).serialize()
    assert built_on(monkeypatch, "compiled", DYNAMIC_V0, keys, batches=7).serialize() == one


@pytest.mark.parametrize("type_code", [SIMPLE, DYNAMIC_V0])
def test_compiled_probe_matches_numpy(monkeypatch, type_code):
    added = varied_keys(6_000, seed=1)
    probed = added[::3] + varied_keys(9_000, seed=2) + [key + "x" for key in added[:500]]
    bloom = built_on(monkeypatch, "numpy", type_code, added)
    stored = deserialize_bloom_filter(bloom.serialize(), type_code)  # packed rows, as read
    found = {}
    for path in PATHS:
        force_hashing_path(monkeypatch, path)
        found[path] = bloom.might_contain(probed)
        np.testing.assert_array_equal(stored.might_contain(probed), found[path])
    np.testing.assert_array_equal(found["compiled"], found["numpy"])
    assert found["compiled"][: len(added[::3])].all()
    assert not found["compiled"].all()  # absent keys are told apart


@pytest.mark.parametrize("seed", [0, 1, -1, -123456789, 2**31 - 1, -(2**31)])
def test_compiled_hash_keys_match_numpy(monkeypatch, seed):
    keys = pa.array(varied_keys(5_000, seed=4), type=pa.large_string())
    hashes = {}
    for path in PATHS:
        force_hashing_path(monkeypatch, path)
        hashes[path] = hash_keys(keys, seed)
    np.testing.assert_array_equal(hashes["compiled"], hashes["numpy"])


def test_without_numba_the_numpy_path_gives_the_same_bytes(monkeypatch):
    keys = varied_keys(3_000, seed=6)
    expected = built_on(monkeypatch, "numpy", DYNAMIC_V0, keys).serialize()
    real_import = builtins.__import__

    def no_numba(name, *args, **kwargs):
        if name == "numba" or name.startswith("numba."):
            raise ImportError("No module named 'numba'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_numba)
    # Forget the compiled module, so that importing it runs (and fails) again.
    monkeypatch.delitem(sys.modules, "hudi_core.io.bloom_hash_compiled", raising=False)
    monkeypatch.delattr(hudi_core.io, "bloom_hash_compiled", raising=False)
    monkeypatch.setattr(bloom_filter, "_compiled_module", None)
    monkeypatch.setattr(bloom_filter, "_compiled_failed", False)
    monkeypatch.setattr(bloom_filter, "_COMPILED_AFTER_HASHES", 0)
    bloom = new_bloom_filter(DYNAMIC_V0, 1_000, 0.001, 5_000)
    bloom.add_keys(keys)
    assert bloom.serialize() == expected
    assert bloom_filter._compiled_failed  # tried once, then stays on numpy


_SMALL_WRITE = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {root!r})
    import pyarrow as pa
    from hudi_core import HudiTable

    table = HudiTable.create({path!r}, name="t", record_key_fields=["uuid"],
                             partition_fields=["city"], precombine_field="ts")
    rows = pa.table({{"uuid": ["a", "b", "c"], "city": ["sf", "la", "sf"], "ts": [1, 1, 1]}})
    table.write(rows)
    table.write(rows, operation="upsert")
    assert len(HudiTable.open({path!r}).read()) == 3
    print("numba" in sys.modules)
    """
)


def test_a_small_write_does_not_import_numba(tmp_path):
    code = _SMALL_WRITE.format(root=str(ROOT), path=str(tmp_path / "t"))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().strip() == "False"


_READ_ONLY_CACHE = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {root!r})
    from hudi_core.io import bloom_filter
    bloom_filter._COMPILED_AFTER_HASHES = 0
    bloom = bloom_filter.new_bloom_filter("SIMPLE", 100, 0.01, 0)
    bloom.add_keys(["k%d" % i for i in range(50)])
    print(bloom_filter._compiled_module is not None, bloom.serialize())
    """
)


@pytest.mark.parametrize(
    ("locators", "compiled"),
    [
        # numba's own fallback: the next locator (__pycache__ by the module, or per user)
        ("", True),
        # no cache location at all: numba refuses at import, and we hash with numpy
        ("UserProvidedCacheLocator", False),
    ],
)
def test_an_unwritable_numba_cache_still_hashes(tmp_path, monkeypatch, locators, compiled):
    """NUMBA_CACHE_DIR unusable (a path under a file: unwritable even for root): no error
    escapes, and the filter has the same bytes."""
    (tmp_path / "a_file").write_text("")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "a_file" / "numba")}
    if locators:
        env["NUMBA_CACHE_LOCATOR_CLASSES"] = locators
    code = _READ_ONLY_CACHE.format(root=str(ROOT))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr.decode()
    used_compiled, serialized = result.stdout.decode().split()
    assert used_compiled == str(compiled)
    force_hashing_path(monkeypatch, "numpy")
    expected = new_bloom_filter(SIMPLE, 100, 0.01, 0)
    expected.add_keys([f"k{i}" for i in range(50)])
    assert serialized == expected.serialize()
