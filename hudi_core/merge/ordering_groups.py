"""Ordering groups: several streams writing their own columns of the same rows, each ordered by
its own event-time field.

`hoodie.datasource.write.precombine.field = _ts1:name,price;_ts2:age` declares two groups:
`_ts1` orders `name` and `price` (and itself), `_ts2` orders `age`. Streams are separated by
`;`, a group's field and its columns by `:`, columns by `,`. A plain field name (no `:`) keeps
the single-field meaning. Upstream Apache Hudi never merged per-group ordering; the spelling is
the one its users of this pattern write.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from hudi_core.errors import InvalidOptionError, PrecombineFieldError


@dataclass(frozen=True)
class OrderingGroup:
    field: str  # the event-time field ordering the group
    columns: tuple[str, ...]  # the columns it owns, its field first

    @property
    def data_columns(self) -> tuple[str, ...]:
        return self.columns[1:]


@dataclass(frozen=True)
class OrderingGroups:
    groups: tuple[OrderingGroup, ...]

    @classmethod
    def parse(cls, text: str | None) -> OrderingGroups | None:
        """The groups `text` declares; None for a plain field name or no field at all."""
        if not text or ":" not in text:
            return None
        groups = []
        for part in (p.strip() for p in text.split(";")):
            if not part:
                continue
            field, sep, rest = (s.strip() for s in part.partition(":"))
            columns = tuple(c.strip() for c in rest.split(",") if c.strip())
            if not field or not sep or not columns:
                raise InvalidOptionError(
                    f"ordering groups '{text}': '{part}' is not <ordering field>:<column>,...; "
                    "write them as _ts1:name,price;_ts2:age"
                )
            groups.append(OrderingGroup(field, (field, *columns)))
        _require_disjoint(text, groups)
        return cls(tuple(groups))

    @property
    def ordering_fields(self) -> tuple[str, ...]:
        return tuple(g.field for g in self.groups)

    def owner(self) -> dict[str, OrderingGroup]:
        """The group of every column a group owns."""
        return {column: group for group in self.groups for column in group.columns}

    def require_batch_fits(self, schema: pa.Schema) -> None:
        """A stream's batch carries whole groups: at least one group's ordering field, and for
        every group column it carries, that group's ordering field."""
        names = set(schema.names)
        carried = [g for g in self.groups if g.field in names]
        if not carried:
            raise PrecombineFieldError(
                "the batch carries none of the ordering fields "
                f"{', '.join(self.ordering_fields)}: a stream's batch holds the key, the "
                f"partition fields and one group's columns, its ordering field included; its "
                f"columns are: {', '.join(schema.names)}"
            )
        owner = self.owner()
        orphans = sorted(c for c in names if c in owner and owner[c].field not in names)
        if orphans:
            column = orphans[0]
            raise PrecombineFieldError(
                f"column '{column}' belongs to the ordering group of '{owner[column].field}', "
                "which the batch lacks: without its ordering value the column's version "
                "cannot be ordered; add the field to the batch"
            )


def _require_disjoint(text: str, groups: list[OrderingGroup]) -> None:
    seen: set[str] = set()
    for group in groups:
        for column in group.columns:
            if column in seen:
                raise InvalidOptionError(
                    f"ordering groups '{text}': column '{column}' is named twice; every column "
                    "belongs to at most one group"
                )
            seen.add(column)
