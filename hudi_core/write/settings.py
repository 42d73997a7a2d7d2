"""What the tasks of one write (or compaction) share, built from the table and the options."""

from __future__ import annotations

import pyarrow as pa

from hudi_core.config import index_options as I
from hudi_core.config import storage_options as S
from hudi_core.config import write_options as W
from hudi_core.config.option import Options
from hudi_core.config.table_config import TableConfig
from hudi_core.io.base_file import ParquetSettings
from hudi_core.keygen import KeyGenerator
from hudi_core.merge.record_merger import RecordMerger
from hudi_core.model.file_names import log_suffix_stage_id
from hudi_core.schema.meta_fields import add_meta_fields
from hudi_core.schema.to_avro import arrow_to_avro_json
from hudi_core.storage import Storage
from hudi_core.write.handles import BloomSettings, WriteSettings, writer_schema


def write_settings(
    storage: Storage,
    config: TableConfig,
    options: Options,
    instant_time: str,
    data_schema: pa.Schema,
    merger: RecordMerger,
    key_generator: KeyGenerator,
    max_file_size: int,
    record_size: int,
) -> WriteSettings:
    changelog = config.changelog
    suffix = log_suffix(options)
    file_schema = add_meta_fields(data_schema, nullable=True, with_operation_field=changelog)
    return WriteSettings(
        storage=storage,
        instant_time=instant_time,
        stage_id=log_suffix_stage_id(suffix),
        file_schema=file_schema,
        writer_schema=writer_schema(file_schema),
        footer_avro_schema=arrow_to_avro_json(
            file_schema, config.name, True, with_operation_field=changelog
        ),
        parquet=ParquetSettings.from_options(options),
        bloom=_bloom_settings(config, options),
        merger=merger,
        max_file_size=max_file_size,
        record_size=record_size,
        populate_meta_fields=config.populate_meta_fields,
        key_generator=key_generator,
        changelog=changelog,
        log_block_format=options.get_option(W.LOG_DATA_BLOCK_FORMAT),
        log_suffix=suffix,
    )


def log_suffix(options: Options) -> str | None:
    """The writer's log suffix (hoodie.write.log.suffix), None without one; raises
    InvalidOptionError for a value that cannot end a log file's name. Cheap and pure: a
    write may call it before its instant exists, so that a bad value leaves nothing behind."""
    return options.get_option(W.LOG_SUFFIX) or None


def _bloom_settings(config: TableConfig, options: Options) -> BloomSettings | None:
    """Base files carry a bloom filter of their keys when the bloom index or the footer
    option asks for one (and there are stored keys to put in it)."""
    wanted = options.get_option(S.PARQUET_BLOOM_FILTER_ENABLED) or (
        options.get_option(I.INDEX_TYPE) in ("BLOOM", "GLOBAL_BLOOM")
    )
    if not (config.populate_meta_fields and wanted):
        return None
    return BloomSettings(
        options.get_option(I.BLOOM_FILTER_TYPE),
        options.get_option(I.BLOOM_NUM_ENTRIES),
        options.get_option(I.BLOOM_FPP),
        options.get_option(I.BLOOM_DYNAMIC_MAX_ENTRIES),
    )
