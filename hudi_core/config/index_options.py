"""Options of the record index (tagging incoming keys with their existing file group)."""

from hudi_core.config.option import ConfigOption, parse_bool

INDEX_TYPE = ConfigOption(
    "hoodie.index.type",
    "SIMPLE",
    "How incoming keys are matched to existing file groups: SIMPLE joins against the keys "
    "stored in base files, BLOOM prunes files with their footer bloom filter and key range first "
    "(the Spark writer always joins as SIMPLE does).",
    choices=("SIMPLE", "BLOOM"),
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
