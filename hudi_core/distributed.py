"""What an engine that keeps rows where they are (Spark's executors) builds on.

The local engine reads and writes through HudiTable. A distributed engine drives the same
write and read from outside: `WriteClient.start` opens a write (`WriteJob`), whose `planner`
(`WritePlanner`) makes every decision of the write; the engine prepares rows with the job's
`preparer` where they lie, hands the planner counts (`BatchCount`), routes rows by the
`BucketPlan` it returns and runs the plan's tasks with the job's `settings`, inside the job's
`transaction`. Reads plan with `TableReader.plan` and read the plan's slices where they run;
streaming reads take their offsets and each micro-batch's plan from `CommitStream`.

This module is the one place such engines import from: everything else in hudi_core below
its first level is internal.
"""

from hudi_core.arrow_utils import run_boundaries
from hudi_core.engine import EngineContext, running_attempt
from hudi_core.index import GlobalIndex
from hudi_core.index.base import IndexContext, match_keys
from hudi_core.index.bloom_index import BloomIndex
from hudi_core.index.bucket_index import BucketIndex
from hudi_core.index.global_index import GlobalBloomIndex, match_keys_globally
from hudi_core.io.bloom_filter import hash_keys
from hudi_core.merge.record_merger import DELETE_COLUMN
from hudi_core.model.commit_metadata import WriteStat
from hudi_core.model.file_group import FileSlice
from hudi_core.model.file_names import new_file_id
from hudi_core.model.partition_metadata import ensure_partition_metadata
from hudi_core.read.file_system_view import FileSystemView
from hudi_core.read.reader import ReadPlan, ReadRequest, TableReader, read_request
from hudi_core.read.streaming import CommitStream
from hudi_core.schema.meta_fields import COMMIT_TIME_FIELD, PARTITION_PATH_FIELD, RECORD_KEY_FIELD
from hudi_core.schema.to_arrow import avro_to_arrow
from hudi_core.write.bucket_plan import NO_BUCKET, Bucket, BucketIndexPlan, BucketPlan
from hudi_core.write.client import WriteClient, WriteJob
from hudi_core.write.global_tagging import GlobalTagger, StoredRecordReader, without_located
from hudi_core.write.handles import CreateTask, WriteSettings
from hudi_core.write.operation import KeyLookup
from hudi_core.write.planner import BatchCount, BucketCount, Lookup, WritePlanner, WriteTask
from hudi_core.write.prepare import BatchPreparer

__all__ = [
    "COMMIT_TIME_FIELD",
    "DELETE_COLUMN",
    "NO_BUCKET",
    "PARTITION_PATH_FIELD",
    "RECORD_KEY_FIELD",
    "BatchCount",
    "BatchPreparer",
    "BloomIndex",
    "Bucket",
    "BucketCount",
    "BucketIndex",
    "BucketIndexPlan",
    "BucketPlan",
    "CommitStream",
    "CreateTask",
    "EngineContext",
    "FileSlice",
    "FileSystemView",
    "GlobalBloomIndex",
    "GlobalIndex",
    "GlobalTagger",
    "IndexContext",
    "KeyLookup",
    "Lookup",
    "ReadPlan",
    "ReadRequest",
    "StoredRecordReader",
    "TableReader",
    "WriteClient",
    "WriteJob",
    "WritePlanner",
    "WriteSettings",
    "WriteStat",
    "WriteTask",
    "avro_to_arrow",
    "ensure_partition_metadata",
    "hash_keys",
    "match_keys",
    "match_keys_globally",
    "new_file_id",
    "read_request",
    "run_boundaries",
    "running_attempt",
    "without_located",
]
