"""The bucket index (hoodie.index.type=BUCKET, hoodie.index.bucket.engine=SIMPLE).

Every partition has a fixed number of buckets, one file group each; a key's bucket is a hash
of its hash-field values (index.bucket_id), and a bucket's file group is found by its file id,
which starts with the bucket number. So a write reads no stored keys: it lists the file groups
of the partitions it touches and sends every row to its bucket's file group, making the file
group on the bucket's first write.

Under non-blocking concurrency control a bucket's file group has one fixed file id, and its
first write appends a log file rather than creating a base file: two writers creating a bucket
at once then write to the same file group (Apache Hudi's answer, too).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.arrow_utils import single_chunk
from hudi_core.config import index_options as I
from hudi_core.config import lock_options as L
from hudi_core.config.option import Options
from hudi_core.errors import InvalidOptionError, UnsupportedTableFeatureError
from hudi_core.index.bucket_id import (
    bucket_file_id,
    bucket_ids,
    bucket_of_file_id,
    fixed_bucket_file_id,
)
from hudi_core.model.file_group import FileSlice

BucketGroups = dict[tuple[str, int], FileSlice]  # (partition, bucket) -> its file group's slice


@dataclass(frozen=True)
class BucketIndex:
    buckets: int
    hash_fields: tuple[str, ...]
    fixed_file_ids: bool = False  # non-blocking concurrency: see the module's doc

    @classmethod
    def from_options(cls, options: Options, record_key_fields: Sequence[str]) -> BucketIndex | None:
        """The table's bucket index, None unless hoodie.index.type is BUCKET."""
        if options.get_option(I.INDEX_TYPE) != "BUCKET":
            return None
        options.get_option(I.BUCKET_ENGINE)  # refuses CONSISTENT_HASHING
        buckets = options.get_option(I.BUCKET_NUM_BUCKETS)
        if buckets < 1:
            raise InvalidOptionError(
                f"{I.BUCKET_NUM_BUCKETS.key}={buckets}: needs 1 bucket or more"
            )
        given = options.get_option(I.BUCKET_HASH_FIELD)
        fields = tuple(f.strip() for f in given.split(",") if f.strip()) or tuple(record_key_fields)
        outside = [f for f in fields if f not in record_key_fields]
        if outside:
            raise InvalidOptionError(
                f"{I.BUCKET_HASH_FIELD.key}={given}: {', '.join(outside)} is not a record key "
                f"field ({', '.join(record_key_fields)}); the hash fields must be among them"
            )
        fixed = options.get_option(L.CONCURRENCY_MODE) == "NON_BLOCKING_CONCURRENCY_CONTROL"
        return cls(buckets, fields, fixed)

    def new_file_id(self, bucket: int) -> str:
        """The file id of a bucket's new file group."""
        return fixed_bucket_file_id(bucket) if self.fixed_file_ids else bucket_file_id(bucket)

    def bucket_ids(self, record_keys: pa.Array | pa.ChunkedArray) -> np.ndarray:
        return bucket_ids(record_keys, self.hash_fields, self.buckets)

    def file_groups(self, slices: Iterable[FileSlice]) -> BucketGroups:
        """The file group of each bucket that has one; a file group that is no bucket of this
        table, or a second one in a bucket, is a table the bucket index cannot write."""
        groups: BucketGroups = {}
        for file_slice in slices:
            bucket = bucket_of_file_id(file_slice.file_id)
            where = f"{file_slice.partition_path or '(no partition)'}/{file_slice.file_id}"
            if bucket is None or bucket >= self.buckets:
                raise InvalidOptionError(
                    f"file group {where} is not one of {self.buckets} buckets "
                    f"({I.BUCKET_NUM_BUCKETS.key}); the table was written with another index "
                    "or another number of buckets"
                )
            other = groups.setdefault((file_slice.partition_path, bucket), file_slice)
            if other is not file_slice:
                raise UnsupportedTableFeatureError(
                    f"bucket {bucket} of partition {file_slice.partition_path or '(none)'} has "
                    f"two file groups, {other.file_id} and {file_slice.file_id}: the bucket "
                    "index cannot tell which one holds a key (two writers created the bucket "
                    "at once?); cluster or rewrite the partition"
                )
        return groups

    def locate(
        self,
        partitions: pa.ChunkedArray | pa.Array,
        record_keys: pa.ChunkedArray | pa.Array,
        groups: BucketGroups,
    ) -> pa.DictionaryArray:
        """The file id each row goes to: its bucket's file group, or a new file id for a bucket
        that has none yet (one per bucket, shared by its rows)."""
        partition_codes = pc.dictionary_encode(single_chunk(partitions))
        codes = partition_codes.indices.to_numpy().astype(np.int64) * self.buckets
        codes += self.bucket_ids(record_keys)
        if len(partition_codes.dictionary) * self.buckets <= 4 * len(codes) + 4096:
            # the (partition, bucket) pairs present, numbered in order: a count, not a sort
            present = np.bincount(codes, minlength=1) > 0
            pairs = np.flatnonzero(present)
            row_pair = (np.cumsum(present) - 1)[codes]
        else:
            pairs, row_pair = np.unique(codes, return_inverse=True)
        names = partition_codes.dictionary.to_pylist()
        file_ids = []
        for code in pairs.tolist():
            partition, bucket = names[code // self.buckets], code % self.buckets
            found = groups.get((partition, bucket))
            file_ids.append(found.file_id if found is not None else self.new_file_id(bucket))
        return pa.DictionaryArray.from_arrays(
            pa.array(row_pair.astype(np.int32)), pa.array(file_ids, pa.string())
        )


def bucket_table_properties(options: Options, record_key_fields: Sequence[str]) -> dict[str, str]:
    """What a table created with the bucket index records in hoodie.properties: the index
    and its number of buckets (and hash fields, when given), which its writes must keep."""
    index = BucketIndex.from_options(options, record_key_fields)
    if index is None:
        return {}
    properties = {I.INDEX_TYPE.key: "BUCKET", I.BUCKET_NUM_BUCKETS.key: str(index.buckets)}
    if options.get_option(I.BUCKET_HASH_FIELD):
        properties[I.BUCKET_HASH_FIELD.key] = ",".join(index.hash_fields)
    return properties
