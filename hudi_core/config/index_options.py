"""Options of the record index (tagging incoming keys with their existing file group)."""

from hudi_core.config.option import ConfigOption, parse_bool

INDEX_TYPE = ConfigOption(
    "hoodie.index.type",
    "SIMPLE",
    "How incoming keys are matched to existing file groups: SIMPLE joins against the keys "
    "stored in the partitions a batch touches, BLOOM prunes files with their footer bloom filter "
    "and key range first; GLOBAL_SIMPLE and GLOBAL_BLOOM do the same across every partition "
    "(keys unique in the table); BUCKET hashes each key to a fixed file group of its partition "
    "and reads no stored keys at all.",
    choices=("SIMPLE", "BLOOM", "GLOBAL_SIMPLE", "GLOBAL_BLOOM", "BUCKET"),
)
BUCKET_ENGINE = ConfigOption(
    "hoodie.index.bucket.engine",
    "SIMPLE",
    "Bucket index flavour: SIMPLE, a fixed number of buckets per partition (consistent "
    "hashing, which resizes buckets, is not supported).",
    choices=("SIMPLE",),
)
BUCKET_NUM_BUCKETS = ConfigOption(
    "hoodie.bucket.index.num.buckets",
    256,
    "Buckets (file groups) per partition of a bucket-indexed table; fixed when the table is "
    "created and kept in hoodie.properties.",
    parse=int,
)
BUCKET_HASH_FIELD = ConfigOption(
    "hoodie.bucket.index.hash.field",
    "",
    "Record key fields (comma-separated, a subset of the record key fields) whose values "
    "choose a key's bucket; empty: every record key field.",
)
SIMPLE_UPDATE_PARTITION_PATH = ConfigOption(
    "hoodie.simple.index.update.partition.path",
    True,
    "GLOBAL_SIMPLE: a record arriving with another partition value than its stored one is "
    "deleted from the old partition and inserted into the new one; false: it is updated in "
    "its old partition.",
    parse=parse_bool,
)
BLOOM_UPDATE_PARTITION_PATH = ConfigOption(
    "hoodie.bloom.index.update.partition.path",
    True,
    "GLOBAL_BLOOM: as hoodie.simple.index.update.partition.path.",
    parse=parse_bool,
)
BLOOM_FILTER_TYPE = ConfigOption(
    "hoodie.bloom.index.filter.type",
    "DYNAMIC_V0",
    "Bloom filter written into every base file footer: SIMPLE (fixed size) or DYNAMIC_V0 "
    "(grows with the number of keys, up to the dynamic max entries).",
    choices=("SIMPLE", "DYNAMIC_V0"),
)
BLOOM_NUM_ENTRIES = ConfigOption(
    "hoodie.index.bloom.num_entries",
    60000,
    "Keys one bloom filter is sized for (the size of each step of a dynamic filter).",
    parse=int,
)
BLOOM_FPP = ConfigOption(
    "hoodie.index.bloom.fpp",
    0.000000001,
    "Target false-positive probability of a bloom filter holding num_entries keys.",
    parse=float,
)
BLOOM_DYNAMIC_MAX_ENTRIES = ConfigOption(
    "hoodie.bloom.index.filter.dynamic.max.entries",
    100000,
    "Keys after which a DYNAMIC_V0 bloom filter stops growing.",
    parse=int,
)
BLOOM_PRUNE_BY_RANGES = ConfigOption(
    "hoodie.bloom.index.prune.by.ranges",
    True,
    "Skip base files whose min/max record key range cannot hold a key, before probing blooms.",
    parse=parse_bool,
)
