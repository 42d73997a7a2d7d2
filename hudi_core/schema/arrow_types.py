"""Arrow type questions both directions of schema conversion ask."""

from __future__ import annotations

import pyarrow as pa


def storage_type(dtype: pa.DataType) -> pa.DataType:
    """The type values are stored as: dictionaries and extension types unwrapped."""
    if pa.types.is_dictionary(dtype):
        return storage_type(dtype.value_type)
    if isinstance(dtype, pa.ExtensionType):
        return storage_type(dtype.storage_type)
    return dtype


def is_list_like(dtype: pa.DataType) -> bool:
    """Any Arrow list layout, all of which Avro writes as an array."""
    return bool(
        pa.types.is_list(dtype)
        or pa.types.is_large_list(dtype)
        or pa.types.is_fixed_size_list(dtype)
        or pa.types.is_list_view(dtype)
        or pa.types.is_large_list_view(dtype)
    )
