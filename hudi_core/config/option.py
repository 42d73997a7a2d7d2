"""Typed hoodie.* options: a declared option (name, default, doc) and a layered lookup.

Options travel as strings, exactly as they would in a Java properties file or a Spark
`.option(...)` call, so users can carry their Apache Hudi configs over unchanged. Each
option parses and validates its own value when read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from hudi_core.errors import InvalidOptionError

_REGISTRY: dict[str, ConfigOption] = {}


def parse_bool(raw: str) -> bool:
    lowered = raw.strip().lower()
    if lowered not in ("true", "false"):
        raise ValueError("expected true or false")
    return lowered == "true"


def parse_list(raw: str) -> list[str]:
    return [part.strip() for part in raw.split(",") if part.strip()]


@dataclass(frozen=True)
class ConfigOption:
    """One option: its Apache Hudi key, default, one line of doc, and how to parse it."""

    key: str
    default: Any
    doc: str
    parse: Callable[[str], Any] = str
    choices: tuple[str, ...] = ()
    alternatives: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.key in _REGISTRY:
            raise ValueError(f"option {self.key} declared twice")
        _REGISTRY[self.key] = self

    def from_raw(self, raw: Any) -> Any:
        if raw is None:
            return self.default
        text = str(raw).lower() if isinstance(raw, bool) else str(raw)
        if self.choices:
            text = text.strip().upper()
            if text not in self.choices:
                raise InvalidOptionError(
                    f"option {self.key}={raw!r} is not one of {', '.join(self.choices)}"
                )
        try:
            return self.parse(text)
        except (TypeError, ValueError) as exc:
            raise InvalidOptionError(f"option {self.key}={raw!r} is invalid: {exc}") from exc


def declared_options() -> list[ConfigOption]:
    """Every option declared so far (import hudi_core.config to declare them all)."""
    return sorted(_REGISTRY.values(), key=lambda opt: opt.key)


class Options(Mapping[str, str]):
    """hoodie.* options from several layers; a later layer wins over an earlier one."""

    def __init__(self, *layers: Mapping[str, Any] | None) -> None:
        merged: dict[str, str] = {}
        for layer in layers:
            for key, value in (layer or {}).items():
                if value is not None:
                    merged[key] = str(value).lower() if isinstance(value, bool) else str(value)
        self._values = merged

    def get_option(self, option: ConfigOption) -> Any:
        """The parsed value of `option`, falling back to its alternatives, then its default."""
        for key in (option.key, *option.alternatives):
            if key in self._values:
                return option.from_raw(self._values[key])
        return option.default

    def is_set(self, option: ConfigOption) -> bool:
        return any(key in self._values for key in (option.key, *option.alternatives))

    def with_values(self, values: Mapping[str, Any]) -> Options:
        return Options(self._values, values)

    def __getitem__(self, key: str) -> str:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Options({self._values!r})"
