"""`.hoodie_partition_metadata`: marks a folder as a partition and records its depth."""

from __future__ import annotations

import io

from jproperties import Properties

from hudi_core.model.file_names import PARTITION_METAFILE
from hudi_core.storage import Storage


def partition_depth(partition_path: str) -> int:
    return len(partition_path.split("/")) if partition_path else 0


def ensure_partition_metadata(storage: Storage, partition_path: str, instant_time: str) -> None:
    """Writes the partition's metadata file unless it is already there."""
    path = f"{partition_path}/{PARTITION_METAFILE}" if partition_path else PARTITION_METAFILE
    if storage.exists(path):
        return
    props = Properties()
    props["commitTime"] = instant_time
    props["partitionDepth"] = str(partition_depth(partition_path))
    out = io.BytesIO()
    props.store(out, encoding="iso-8859-1", initial_comments="partition metadata", timestamp=True)
    try:
        storage.create_new(path, out.getvalue())
    except FileExistsError:
        pass  # another task created it first; its content is the same
