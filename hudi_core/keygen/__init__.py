"""Apache Hudi's key generators on Arrow: `_hoodie_record_key` and `_hoodie_partition_path`
of whole batches, spelled exactly as Java Hudi 0.14/0.15 spells them.

    generator = key_generator_for(Options(table_properties, write_options))
    keys = generator.record_keys(batch)
    paths = generator.partition_paths(batch)
"""

from hudi_core.keygen.factory import key_generator_for
from hudi_core.keygen.generators import (
    EMPTY_RECORDKEY_PLACEHOLDER,
    NULL_RECORDKEY_PLACEHOLDER,
    ComplexKeyGenerator,
    CustomKeyGenerator,
    GlobalDeleteKeyGenerator,
    KeyGenerator,
    NonpartitionedKeyGenerator,
    SimpleKeyGenerator,
    TimestampBasedKeyGenerator,
)
from hudi_core.keygen.partition import DEFAULT_PARTITION_PATH

__all__ = [
    "DEFAULT_PARTITION_PATH",
    "EMPTY_RECORDKEY_PLACEHOLDER",
    "NULL_RECORDKEY_PLACEHOLDER",
    "ComplexKeyGenerator",
    "CustomKeyGenerator",
    "GlobalDeleteKeyGenerator",
    "KeyGenerator",
    "NonpartitionedKeyGenerator",
    "SimpleKeyGenerator",
    "TimestampBasedKeyGenerator",
    "key_generator_for",
]
