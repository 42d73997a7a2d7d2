"""Curve orders for clustering layouts: z-order and Hilbert against reference implementations
written here point by point, coordinates that keep each type's order, the sample build
spreading a skewed column, and bad layouts refused by name."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hudi_core.errors import InvalidOptionError
from hudi_core.services.space_curves import curve_order, direct_coordinates


def _reference_z(point: tuple[int, ...], bits: int) -> int:
    """Morton code: at each level, from the top, one bit of each coordinate in column order."""
    key = 0
    for level in range(bits - 1, -1, -1):
        for value in point:
            key = (key << 1) | ((value >> level) & 1)
    return key


def _reference_hilbert(point: tuple[int, ...], bits: int) -> int:
    """Skilling's AxesToTranspose on one point with Python ints, then the bits interleaved."""
    x = list(point)
    n = len(x)
    q = 1 << (bits - 1)
    while q > 1:
        p = q - 1
        for i in range(n):
            if x[i] & q:
                x[0] ^= p
            else:
                t = (x[0] ^ x[i]) & p
                x[0] ^= t
                x[i] ^= t
        q >>= 1
    for i in range(1, n):
        x[i] ^= x[i - 1]
    t = 0
    q = 1 << (bits - 1)
    while q > 1:
        if x[n - 1] & q:
            t ^= q - 1
        q >>= 1
    return _reference_z(tuple(v ^ t for v in x), bits)


def _full_range_table(dims: int, rows: int, seed: int) -> tuple[pa.Table, list[tuple[int, ...]]]:
    """Random unsigned columns each holding 0 and 2**bits - 1, so that the coordinates are the
    values themselves (nothing to shift or scale)."""
    bits = 64 // dims
    rng = np.random.default_rng(seed)
    columns = {}
    for j in range(dims):
        values = rng.integers(0, 2**bits, rows, dtype=np.uint64)
        values[0], values[1] = 0, 2**bits - 1
        columns[f"c{j}"] = pa.array(values, pa.uint64())
    table = pa.table(columns)
    points = list(zip(*(table.column(f"c{j}").to_pylist() for j in range(dims)), strict=True))
    return table, points


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize(
    ("strategy", "reference"), [("z-order", _reference_z), ("hilbert", _reference_hilbert)]
)
def test_curves_order_rows_as_the_reference_does(dims, strategy, reference):
    table, points = _full_range_table(dims, 2000, seed=dims)
    bits = 64 // dims
    keys = [reference(point, bits) for point in points]
    expected = sorted(range(len(points)), key=lambda i: (keys[i], i))
    order = curve_order(table, [f"c{j}" for j in range(dims)], strategy)
    assert order.tolist() == expected


def _grid(side: int, dims: int, seed: int) -> pa.Table:
    axes = np.meshgrid(*[np.arange(side)] * dims, indexing="ij")
    table = pa.table(
        {f"c{j}": pa.array(axis.ravel().astype(np.int64)) for j, axis in enumerate(axes)}
    )
    shuffled = np.random.default_rng(seed).permutation(table.num_rows)
    return table.take(pa.array(shuffled))


@pytest.mark.parametrize("dims", [2, 3])
def test_hilbert_steps_to_a_neighbour_every_row_and_z_order_does_not(dims):
    table = _grid(8, dims, seed=7)
    names = [f"c{j}" for j in range(dims)]
    for strategy, adjacent in (("hilbert", True), ("z-order", False)):
        ordered = table.take(pa.array(curve_order(table, names, strategy)))
        points = np.column_stack([ordered.column(n).to_numpy() for n in names])
        steps = np.abs(np.diff(points, axis=0)).sum(axis=1)
        assert bool((steps == 1).all()) is adjacent, strategy


def _chunks_read(table: pa.Table, order: np.ndarray, column: str, low, high) -> int:
    """Of the ordered rows cut into 16 files, how many a filter low <= column < high must read
    by the files' min/max statistics (data skipping)."""
    ordered = table.take(pa.array(order))
    read = 0
    for part in np.array_split(np.arange(ordered.num_rows), 16):
        values = ordered.column(column).take(pa.array(part))
        read += pc.max(values).as_py() >= low and pc.min(values).as_py() < high
    return read


@pytest.mark.parametrize("build", ["direct", "sample"])
def test_curves_let_filters_on_either_column_skip_files_unlike_a_linear_sort(build):
    rng = np.random.default_rng(3)
    table = pa.table(
        {"x": rng.integers(0, 100_000, 20_000), "y": rng.integers(-5000, 5000, 20_000)}
    )
    linear = curve_order(table, ["x", "y"], "linear")
    assert _chunks_read(table, linear, "x", 60_000, 65_000) <= 2
    assert _chunks_read(table, linear, "y", 1000, 1500) == 16, "sorted by x, every file spans y"
    for strategy in ("z-order", "hilbert"):
        order = curve_order(table, ["x", "y"], strategy, build)
        assert _chunks_read(table, order, "x", 60_000, 65_000) <= 6, strategy
        assert _chunks_read(table, order, "y", 1000, 1500) <= 6, strategy


def test_the_sample_build_spreads_a_skewed_column_over_the_curve():
    rng = np.random.default_rng(5)
    skewed = np.concatenate([rng.integers(0, 100, 9_900), rng.integers(10**12, 10**13, 100)])
    table = pa.table({"skewed": skewed, "uniform": rng.random(10_000)})  # floats: by bits
    direct = curve_order(table, ["skewed", "uniform"], "z-order")
    sampled = curve_order(table, ["skewed", "uniform"], "z-order", "sample", sample_size=2000)
    # Direct: the few huge values take the top bits, the small ones all look alike.
    assert _chunks_read(table, direct, "skewed", 0, 10) == 16
    assert _chunks_read(table, sampled, "skewed", 0, 10) <= 6
    assert _chunks_read(table, sampled, "uniform", 0.6, 0.65) < 16, "still a curve"


@pytest.mark.parametrize(
    "values",
    [
        pa.array([5, -3, None, 0, -(2**63), 2**62, 7], pa.int64()),
        pa.array([1.5, -0.5, float("-inf"), None, 0.0, float("inf"), -2.25], pa.float64()),
        pa.array(["b", "ab", None, "", "abcdefgh", "a", "zz"], pa.string()),
        pa.array([b"\x01", b"\xff\x00", b"", None], pa.binary()),
        pa.array([dt.date(2020, 1, 2), dt.date(1969, 12, 31), None], pa.date32()),
        pa.array([dt.datetime(2024, 5, 1), dt.datetime(1960, 1, 1), None], pa.timestamp("us")),
        pa.array([True, None, False], pa.bool_()),
        pa.array([3, 0, 2**64 - 2], pa.uint64()),
    ],
    ids=["int64", "float64", "string", "binary", "date", "timestamp", "bool", "uint64"],
)
def test_coordinates_keep_each_types_order_with_nulls_last(values):
    expected = pc.sort_indices(values).to_pylist()  # nulls at the end
    coordinates = direct_coordinates(values)
    assert np.argsort(coordinates, kind="stable").tolist() == expected


def test_one_column_and_linear_layouts_sort_by_the_columns():
    table = pa.table({"a": [2, 1, 2, 1], "b": ["x", "y", "a", None]})
    assert curve_order(table, ["a", "b"], "linear").tolist() == [1, 3, 2, 0]
    assert curve_order(table, ["b"], "hilbert").tolist() == [2, 0, 1, 3]


def test_bad_layouts_are_refused_by_name():
    table = pa.table({"a": [1, 2], "s": pa.array([{"x": 1}, {"x": 2}])})
    with pytest.raises(InvalidOptionError, match="spiral"):
        curve_order(table, ["a"], "spiral")
    with pytest.raises(InvalidOptionError, match="build method 'random'"):
        curve_order(table, ["a"], "z-order", "random")
    with pytest.raises(InvalidOptionError, match=r"\['nope'\]"):
        curve_order(table, ["a", "nope"])
    with pytest.raises(InvalidOptionError, match="'s' is of type struct"):
        curve_order(table, ["a", "s"])
