"""Deterministic test batches covering every column type the foundation supports, with nulls."""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pyarrow as pa

CITIES = ["san_francisco", "new york", "sao_paulo", "chennai"]
REGIONS = ["americas", "asia"]

SCHEMA = pa.schema(
    [
        ("uuid", pa.string()),
        ("city", pa.string()),
        ("region", pa.string()),
        ("ts", pa.int64()),
        ("event_time", pa.timestamp("us", tz="UTC")),
        ("is_active", pa.bool_()),
        ("passengers", pa.int32()),
        ("distance", pa.float32()),
        ("fare", pa.float64()),
        ("price", pa.decimal128(10, 2)),
        ("note", pa.string()),
        ("payload", pa.binary()),
        ("day", pa.date32()),
        (
            "location",
            pa.struct([("lat", pa.float64()), ("lon", pa.float64()), ("name", pa.string())]),
        ),
        ("tags", pa.list_(pa.string())),
        ("attrs", pa.map_(pa.string(), pa.int32())),
    ]
)


def trips(keys: list[int], seed: int, ts: int, cities: list[str] | None = None) -> pa.Table:
    """One row per key; values depend on (key, seed), so an update changes them."""
    rng = np.random.default_rng(seed)
    n = len(keys)
    cities = cities or CITIES
    city_of = [cities[k % len(cities)] for k in keys]
    nulls = rng.random(n) < 0.15

    def maybe(values: list) -> list:
        return [None if null else v for v, null in zip(values, nulls, strict=True)]

    base_day = dt.date(2024, 1, 1)
    columns = {
        "uuid": [f"key-{k:06d}" for k in keys],
        "city": city_of,
        "region": [REGIONS[k % 2] for k in keys],
        "ts": [ts] * n,
        "event_time": [
            dt.datetime(2024, 4, 1 + k % 5, k % 24, 0, 0, seed % 1000, tzinfo=dt.UTC) for k in keys
        ],
        "is_active": maybe([bool((k + seed) % 2) for k in keys]),
        "passengers": maybe([int(x) for x in rng.integers(1, 6, n)]),
        "distance": maybe([float(x) for x in rng.random(n).astype(np.float32)]),
        "fare": maybe([round(float(x) * 100, 3) for x in rng.random(n)]),
        "price": maybe([decimal.Decimal(int(x)) / 100 for x in rng.integers(0, 10**6, n)]),
        "note": maybe([f"note {seed}-{k} é" for k in keys]),
        "payload": maybe([bytes([k % 256, seed % 256, 0, 255]) for k in keys]),
        "day": maybe([base_day + dt.timedelta(days=k % 30) for k in keys]),
        "location": maybe(
            [{"lat": k / 7, "lon": -k / 3, "name": None if k % 3 == 0 else f"p{k}"} for k in keys]
        ),
        "tags": maybe([[f"t{seed}", None, f"k{k}"] if k % 4 else [] for k in keys]),
        "attrs": maybe([[("a", k), ("b", None)] if k % 5 else [] for k in keys]),
    }
    return pa.table(columns, schema=SCHEMA)
