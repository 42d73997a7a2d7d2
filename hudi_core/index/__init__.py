"""Record indexes: which existing file group, if any, holds each incoming key."""

from hudi_core.config import index_options as I
from hudi_core.config.option import Options
from hudi_core.index.base import IndexContext, RecordIndex
from hudi_core.index.bloom_index import BloomIndex
from hudi_core.index.simple_index import SimpleIndex


def index_for(options: Options) -> RecordIndex:
    """The index `hoodie.index.type` names."""
    kind = options.get_option(I.INDEX_TYPE)
    if kind == "BLOOM":
        return BloomIndex(prune_by_ranges=options.get_option(I.BLOOM_PRUNE_BY_RANGES))
    return SimpleIndex()


__all__ = ["IndexContext", "RecordIndex", "index_for"]
