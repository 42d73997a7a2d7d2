"""Typed hoodie.* options: a declared option (name, default, doc) and a layered lookup.

Options travel as strings, exactly as they would in a Java properties file or a Spark
`.option(...)` call, so users can carry their Apache Hudi configs over unchanged. Each
option parses and validates its own value when read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

from hudi_core.errors import InvalidOptionError

T = TypeVar("T")
# Covariant: an option of `str` values is also an option of `str | None` values, as far as
# reading goes (options are immutable).
T_co = TypeVar("T_co", covariant=True)

_REGISTRY: dict[str, ConfigOption[Any]] = {}


def parse_bool(raw: str) -> bool:
    lowered = raw.strip().lower()
    if lowered not in ("true", "false"):
        raise InvalidOptionError("expected true or false")
    return lowered == "true"


def parse_list(raw: str) -> list[str]:
    return [part.strip() for part in raw.split(",") if part.strip()]


@dataclass(frozen=True, init=False)
class ConfigOption(Generic[T_co]):
    """One option: its Apache Hudi key, default, one line of doc, and how to parse it.

    The value type comes from the default and the parser, so `Options.get_option`
    returns an `int` for an option parsed by `int`; an option without a parser is a `str`
    (or `str | None` when it has no default).
    """

    key: str
    default: T_co
    doc: str
    parse: Callable[[str], T_co]
    choices: tuple[str, ...]
    alternatives: tuple[str, ...]

    @overload
    def __init__(
        self: ConfigOption[str],
        key: str,
        default: str,
        doc: str,
        *,
        choices: tuple[str, ...] = (),
        alternatives: tuple[str, ...] = (),
    ) -> None: ...

    @overload
    def __init__(
        self: ConfigOption[str | None],
        key: str,
        default: None,
        doc: str,
        *,
        choices: tuple[str, ...] = (),
        alternatives: tuple[str, ...] = (),
    ) -> None: ...

    @overload
    def __init__(
        self,
        key: str,
        default: T_co,
        doc: str,
        parse: Callable[[str], T_co],
        choices: tuple[str, ...] = (),
        alternatives: tuple[str, ...] = (),
    ) -> None: ...

    def __init__(
        self,
        key: str,
        default: Any,
        doc: str,
        parse: Callable[[str], Any] = str,
        choices: tuple[str, ...] = (),
        alternatives: tuple[str, ...] = (),
    ) -> None:
        if key in _REGISTRY:
            raise InvalidOptionError(f"option {key} declared twice")
        # Frozen dataclass: fields are set once, here, through object's own setattr.
        for name, value in (
            ("key", key),
            ("default", default),
            ("doc", doc),
            ("parse", parse),
            ("choices", choices),
            ("alternatives", alternatives),
        ):
            object.__setattr__(self, name, value)
        _REGISTRY[key] = self

    def from_raw(self, raw: object) -> T_co:
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
        except (TypeError, ValueError, InvalidOptionError) as exc:
            raise InvalidOptionError(f"option {self.key}={raw!r} is invalid: {exc}") from exc


def declared_options() -> list[ConfigOption[Any]]:
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

    def get_option(self, option: ConfigOption[T]) -> T:
        """The parsed value of `option`, falling back to its alternatives, then its default."""
        for key in (option.key, *option.alternatives):
            if key in self._values:
                return option.from_raw(self._values[key])
        return option.default

    def is_set(self, option: ConfigOption[Any]) -> bool:
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
