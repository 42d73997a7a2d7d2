"""What each write operation means, decided in one place for every engine.

An operation's policy says how its rows meet the keys the table stores (the key lookup), which
file groups its commit replaces, and which options tune it. The write planner
(write.planner) applies a policy to a table's file slices; the local engine and the Spark
writer only move rows as the planner says.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from hudi_core.choices import WriteOperation
from hudi_core.config import write_options as W
from hudi_core.config.option import ConfigOption, Options
from hudi_core.timeline.instant import COMMIT, DELTA_COMMIT, REPLACE_COMMIT


class KeyLookup(Enum):
    """How a write's rows meet the keys the table stores."""

    NONE = "none"  # every row is new: no stored key is read
    TAG = "tag"  # each row takes the file group holding its key (an update) or none (new)
    DROP_STORED = "drop_stored"  # rows whose key is stored are dropped; the rest are new


class Replaces(Enum):
    """Which file groups the operation's replacecommit replaces."""

    NOTHING = "nothing"
    TOUCHED_PARTITIONS = "touched_partitions"  # every file group of a partition the rows reach
    TABLE = "table"  # every file group of the table
    LISTED_PARTITIONS = "listed_partitions"  # delete_partition: partitions named, no rows written


@dataclass(frozen=True)
class OperationPolicy:
    lookup: KeyLookup
    replaces: Replaces
    combine_option: ConfigOption[bool]  # whether duplicate keys of a batch are pre-combined
    parallelism_option: ConfigOption[int]  # hoodie.*.shuffle.parallelism
    uses_small_files: bool  # whether inserts may top up existing small file groups
    sorts_new_files: bool = False  # bulk_insert: Spark-style sorted new file groups only


_POLICIES = {
    WriteOperation.UPSERT: OperationPolicy(
        KeyLookup.TAG, Replaces.NOTHING, W.COMBINE_BEFORE_UPSERT, W.UPSERT_PARALLELISM, True
    ),
    WriteOperation.DELETE: OperationPolicy(
        KeyLookup.TAG, Replaces.NOTHING, W.COMBINE_BEFORE_DELETE, W.DELETE_PARALLELISM, True
    ),
    WriteOperation.INSERT: OperationPolicy(
        KeyLookup.NONE, Replaces.NOTHING, W.COMBINE_BEFORE_INSERT, W.INSERT_PARALLELISM, True
    ),
    WriteOperation.BULK_INSERT: OperationPolicy(
        KeyLookup.NONE,
        Replaces.NOTHING,
        W.COMBINE_BEFORE_INSERT,
        W.BULK_INSERT_PARALLELISM,
        uses_small_files=False,
        sorts_new_files=True,
    ),
    WriteOperation.INSERT_OVERWRITE: OperationPolicy(
        KeyLookup.NONE,
        Replaces.TOUCHED_PARTITIONS,
        W.COMBINE_BEFORE_INSERT,
        W.INSERT_PARALLELISM,
        uses_small_files=False,
    ),
    WriteOperation.INSERT_OVERWRITE_TABLE: OperationPolicy(
        KeyLookup.NONE,
        Replaces.TABLE,
        W.COMBINE_BEFORE_INSERT,
        W.INSERT_PARALLELISM,
        uses_small_files=False,
    ),
    WriteOperation.DELETE_PARTITION: OperationPolicy(
        KeyLookup.NONE,
        Replaces.LISTED_PARTITIONS,
        W.COMBINE_BEFORE_INSERT,
        W.INSERT_PARALLELISM,
        uses_small_files=False,
    ),
}


def policy_for(operation: WriteOperation, options: Options) -> OperationPolicy:
    """The operation's policy under the write's options: an insert with
    hoodie.datasource.write.insert.drop.duplicates drops the keys the table holds."""
    policy = _POLICIES[operation]
    if operation is WriteOperation.INSERT and options.get_option(W.INSERT_DROP_DUPLICATES):
        return OperationPolicy(
            KeyLookup.DROP_STORED,
            policy.replaces,
            policy.combine_option,
            policy.parallelism_option,
            policy.uses_small_files,
        )
    return policy


def commit_action(operation: WriteOperation, merge_on_read: bool) -> str:
    """The timeline action an operation's instant takes."""
    if _POLICIES[operation].replaces is not Replaces.NOTHING:
        return REPLACE_COMMIT
    return DELTA_COMMIT if merge_on_read else COMMIT
