"""Record indexes: which existing file group, if any, holds each incoming key."""

from collections.abc import Callable

from hudi_core.config import index_options as I
from hudi_core.config.option import Options
from hudi_core.index.base import IndexContext, RecordIndex
from hudi_core.index.bloom_index import BloomIndex
from hudi_core.index.global_index import GlobalBloomIndex, GlobalIndex, GlobalSimpleIndex
from hudi_core.index.simple_index import SimpleIndex


def _bloom(options: Options) -> RecordIndex:
    return BloomIndex(prune_by_ranges=options.get_option(I.BLOOM_PRUNE_BY_RANGES))


def _global_simple(options: Options) -> RecordIndex:
    return GlobalSimpleIndex(
        update_partition_path=options.get_option(I.SIMPLE_UPDATE_PARTITION_PATH)
    )


def _global_bloom(options: Options) -> RecordIndex:
    return GlobalBloomIndex(
        update_partition_path=options.get_option(I.BLOOM_UPDATE_PARTITION_PATH),
        prune_by_ranges=options.get_option(I.BLOOM_PRUNE_BY_RANGES),
    )


# hoodie.index.type -> how the index is built from the write's options
_INDEXES: dict[str, Callable[[Options], RecordIndex]] = {
    "SIMPLE": lambda _: SimpleIndex(),
    "BLOOM": _bloom,
    "GLOBAL_SIMPLE": _global_simple,
    "GLOBAL_BLOOM": _global_bloom,
    # The bucket index finds file groups by bucket (index.bucket_index); the one key lookup a
    # bucket write makes, an insert dropping stored duplicates, joins as SIMPLE does.
    "BUCKET": lambda _: SimpleIndex(),
}


def index_for(options: Options) -> RecordIndex:
    """The index `hoodie.index.type` names (a global one is a GlobalIndex)."""
    kind = options.get_option(I.INDEX_TYPE)
    return _INDEXES[kind](options)


__all__ = ["GlobalIndex", "IndexContext", "RecordIndex", "index_for"]
