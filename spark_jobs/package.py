"""Packs hudi_core and spark_jobs into one zip for `spark-submit --py-files`.

    python -m spark_jobs.package --output dist/hudi_jobs.zip
    spark-submit --master spark://HOST:7077 --py-files dist/hudi_jobs.zip \\
        --conf spark.pyspark.python=/path/to/python spark_jobs/ingest.py ...

Spark puts the zip first on the driver's and every executor's Python path, so the code the
jobs run is the code in the zip; the executors' interpreter only needs the third-party
dependencies (pyarrow, fastavro, numpy, jproperties, sqlalchemy, pandas). The zip is
reproducible: the same sources give the same bytes, so a deployment can compare checksums.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path

PACKAGES = ("hudi_core", "spark_jobs")
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # the earliest a zip can hold: no build time in the bytes
_SKIPPED_DIRS = {"__pycache__"}
_SKIPPED_SUFFIXES = {".pyc", ".pyo"}


def build(output: str | Path, packages: Sequence[str] = PACKAGES) -> Path:
    """Writes the zip of `packages` (each at the zip's root, as an import expects) to
    `output`; returns its absolute path."""
    target = Path(output).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in packages:
            root = package_dir(name)
            for path in _package_files(root):
                entry = zipfile.ZipInfo(f"{name}/{path.relative_to(root).as_posix()}", _FIXED_TIME)
                entry.compress_type = zipfile.ZIP_DEFLATED
                entry.external_attr = 0o644 << 16
                archive.writestr(entry, path.read_bytes())
    partial.replace(target)  # never leave a half-written zip under the final name
    return target


def package_dir(name: str) -> Path:
    """Where package `name` is imported from (a checkout, an editable or a normal install),
    found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"package {name} is not importable here; install the project first")
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def _package_files(root: Path) -> Iterator[Path]:
    """Every file of the package (sources and any data files), in a stable order."""
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if path.is_dir() or _SKIPPED_DIRS.intersection(relative.parts):
            continue
        if path.suffix in _SKIPPED_SUFFIXES:
            continue
        yield path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spark_jobs.package", description=__doc__)
    parser.add_argument("--output", default="dist/hudi_jobs.zip", help="the zip to write")
    args = parser.parse_args(argv)
    print(build(args.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
