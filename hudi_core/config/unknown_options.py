"""Options nobody reads: what a misspelt or foreign `hoodie.*` key given by a user comes to.

Every entry point taking a user's options (HudiTable.create/open/bootstrap/write/read, the
table services, spark_jobs' writer and `--hoodie-conf`, the Airflow tables file) calls
`check_options` on them before using them:

- a key that is not a `hoodie.*` key passes silently: storage settings (fs.*), Spark's, the
  partition commit options and the like are read, or ignored, by whoever takes them;
- a `hoodie.*` key hudi_core reads passes (a declared option, one of its alternatives, or a key
  the Spark jobs read by name);
- an unknown `hoodie.*` key that is clearly a typo of exactly one known key (within two edits,
  a swap of neighbouring letters counting as one, or differing only in case) raises
  InvalidOptionError naming the known key;
- any other unknown `hoodie.*` key is logged once per process as ignored: Apache Hudi has many
  options hudi_core does not implement (hoodie.metrics.*, most hoodie.streamer.*, ...), and a
  config carried over from Apache Hudi must keep working.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Mapping
from typing import Any

from hudi_core.config.option import Options, declared_options
from hudi_core.config.write_options import COMMIT_METADATA_KEY_PREFIX
from hudi_core.errors import InvalidOptionError

_LOG = logging.getLogger(__name__)

PREFIX = "hoodie."
# Edits (insertions, deletions, substitutions, swaps of neighbours) within which an unknown key
# is a typo of a known one.
MAX_EDITS = 2
# Where the options hudi_core reads are listed.
OPTIONS_DOC = "docs/options.md"

# hoodie.* keys read by name rather than declared as options: those of the Spark ingest job
# (Apache Hudi's streamer options, each under its current hoodie.streamer.* and older
# hoodie.deltastreamer.* name).
_STREAMER_KEYS = (
    "source.hoodieincr.num_instants",
    "source.hoodieincr.missing.checkpoint.strategy",
    "source.hoodieincr.drop.all.meta.fields",
    "transformer.sql",
)
READ_BY_NAME = frozenset(
    {
        *(
            f"hoodie.{tool}.{key}"
            for tool in ("streamer", "deltastreamer")
            for key in _STREAMER_KEYS
        ),
        "hoodie.deltastreamer.multiwriter.source.checkpoint.id",
    }
)

_warned: set[str] = set()
_warned_lock = threading.Lock()


@functools.cache
def known_keys() -> frozenset[str]:
    """Every hoodie.* key hudi_core reads: declared options, their alternatives, and the keys
    read by name. (Importing this module imports the hudi_core.config package first, which
    declares every option.)"""
    keys = {key for option in declared_options() for key in (option.key, *option.alternatives)}
    return frozenset(key for key in keys | READ_BY_NAME if key.startswith(PREFIX))


def check_options(options: Mapping[str, Any] | None) -> None:
    """Refuses a user's hoodie.* key that is a typo of a known one; logs (once per process)
    any other unknown hoodie.* key as ignored. Other keys pass.

    An `Options` object is one hudi_core resolved itself (its layers may hold a table's
    properties, which Apache Hudi's writers fill with keys of their own): it is not checked;
    its user layers were, where they came in."""
    if options is None or isinstance(options, Options):
        return
    known = known_keys()
    passed_on = _commit_metadata_prefix(options)
    for raw_key in options:
        key = str(raw_key)
        if not key.startswith(PREFIX) or key in known:
            continue
        if passed_on and key.startswith(passed_on):
            continue  # copied into the commit's extraMetadata (see write.commit_extra)
        near = nearest_known(key)
        if len(near) == 1:
            raise InvalidOptionError(
                f"unknown option {key}: did you mean {near[0]}? (the options hudi_core reads "
                f"are listed in {OPTIONS_DOC})"
            )
        _warn_once(key, near)


def _commit_metadata_prefix(options: Mapping[str, Any]) -> str:
    value = options.get(COMMIT_METADATA_KEY_PREFIX.key)
    return COMMIT_METADATA_KEY_PREFIX.default if value is None else str(value)


@functools.cache
def nearest_known(key: str) -> tuple[str, ...]:
    """The known keys within MAX_EDITS of `key` (case aside) at the smallest distance."""
    lowered = key.lower()
    best, found = MAX_EDITS + 1, []
    for candidate in sorted(known_keys()):
        other = candidate.lower()
        if abs(len(other) - len(lowered)) > min(best, MAX_EDITS):
            continue
        distance = edit_distance(lowered, other, MAX_EDITS)
        if distance < best:
            best, found = distance, [candidate]
        elif distance == best:
            found.append(candidate)
    return tuple(found) if best <= MAX_EDITS else ()


def edit_distance(a: str, b: str, limit: int) -> int:
    """Edits turning `a` into `b` (insert, delete, substitute, swap two neighbours; the
    optimal string alignment distance), or limit + 1 once more than `limit` are needed."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before: list[int] | None = None
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if before is not None and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        before, previous = previous, current
    return min(previous[len(b)], limit + 1)


def _warn_once(key: str, near: tuple[str, ...]) -> None:
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    why = (
        f"did you mean {' or '.join(near)}?"
        if near
        else "an Apache Hudi option hudi_core does not implement, or a misspelling"
    )
    _LOG.warning(
        "option %s is not one hudi_core reads: it is ignored (%s; %s lists the options "
        "hudi_core reads)",
        key,
        why,
        OPTIONS_DOC,
    )
