"""Options of the parquet base files a write produces."""

from hudi_core.config.option import ConfigOption, parse_bool

PARQUET_MAX_FILE_SIZE = ConfigOption(
    "hoodie.parquet.max.file.size",
    125829120,
    "Target size of a base file in bytes; writes roll over to a new file group past it.",
    parse=int,
)
PARQUET_SMALL_FILE_LIMIT = ConfigOption(
    "hoodie.parquet.small.file.limit",
    104857600,
    "Base files below this size are topped up with inserts before new file groups open "
    "(0 turns small-file handling off).",
    parse=int,
)
PARQUET_BLOCK_SIZE = ConfigOption(
    "hoodie.parquet.block.size",
    125829120,
    "Target parquet row group size in bytes.",
    parse=int,
)
PARQUET_PAGE_SIZE = ConfigOption(
    "hoodie.parquet.page.size", 1048576, "Target parquet data page size in bytes.", parse=int
)
PARQUET_COMPRESSION_CODEC = ConfigOption(
    "hoodie.parquet.compression.codec",
    # zstd, as Apache Hudi now defaults to for Flink and Spark 3.5+: it writes about ten times
    # faster than gzip (Apache Hudi 0.x's default) at a similar size, and every current reader
    # (parquet-java, arrow-rs, pyarrow) reads it.
    "zstd",
    "Compression of base files and Parquet log blocks: zstd, gzip, snappy, lz4 or "
    "uncompressed (zstd: gzip's size at a fraction of its write time; gzip for readers on "
    "parquet-java before 1.12).",
    parse=lambda raw: raw.strip().lower(),
)
PARQUET_DICTIONARY_ENABLED = ConfigOption(
    "hoodie.parquet.dictionary.enabled",
    True,
    "Dictionary-encode parquet columns.",
    parse=parse_bool,
)
PARQUET_BLOOM_FILTER_ENABLED = ConfigOption(
    "hoodie.parquet.bloom.filter.enabled",
    True,
    "Write the record keys' bloom filter into base file footers (always on with a BLOOM index).",
    parse=parse_bool,
)
