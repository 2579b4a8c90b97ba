"""Backends by short lower-case name: traffic generators, vswitches, VNFs, collectors, loadgens.

The registries are built once in main (`vsperf.backends.build_registries`) and passed down. Third parties add
backends through the entry-point groups `vsperf.trafficgens`, `vsperf.vswitches`, `vsperf.vnfs`,
`vsperf.collectors` and `vsperf.loadgens`; an entry point names a class with a `NAME`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Generic, TypeVar

from vsperf.errors import ConfigError, UnknownNameError

T = TypeVar("T")


@dataclass(frozen=True)
class Entry(Generic[T]):
    """A registered backend class and what `--list-*` prints about it."""

    name: str
    cls: type[T]
    description: str
    aliases: tuple[str, ...] = ()


@dataclass
class Registry(Generic[T]):
    """Backends of one family (e.g. 'trafficgen'), checked against the family's base class."""

    family: str
    base: type[T]
    _entries: dict[str, Entry[T]] = field(default_factory=dict)
    _aliases: dict[str, str] = field(default_factory=dict)

    def register(self, cls: type[T], aliases: tuple[str, ...] = ()) -> type[T]:
        name = getattr(cls, "NAME", None)
        if not isinstance(name, str) or name != name.lower() or not name:
            raise ConfigError(f"{self.family} backend {cls!r} needs a lower-case NAME")
        if not (isinstance(cls, type) and issubclass(cls, self.base)):
            raise ConfigError(f"{self.family} backend {name!r} must subclass {self.base.__name__}")
        missing = sorted(getattr(cls, "__abstractmethods__", ()))
        if missing:
            raise ConfigError(f"{self.family} backend {name!r} does not implement {', '.join(missing)}")
        doc = (cls.__doc__ or "").strip().splitlines()
        self._entries[name] = Entry(name, cls, doc[0] if doc else "", tuple(aliases))
        for alias in (*aliases, *getattr(cls, "ALIASES", ())):
            self._aliases[alias.lower()] = name
        return cls

    def resolve(self, name: str) -> str:
        """The canonical name of `name` (case-insensitive; VSPERF class names as aliases)."""
        key = name.strip().lower()
        if key in self._entries:
            return key
        if key in self._aliases:
            return self._aliases[key]
        valid = sorted(self._entries)
        close = difflib.get_close_matches(key, [*valid, *self._aliases], n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UnknownNameError(
            f"unknown {self.family} {name!r}{hint}; valid {self.family}s: {', '.join(valid)}"
        )

    def get(self, name: str) -> Entry[T]:
        return self._entries[self.resolve(name)]

    def __iter__(self) -> Iterator[Entry[T]]:
        return iter(sorted(self._entries.values(), key=lambda e: e.name))

    def names(self) -> list[str]:
        return sorted(self._entries)


@dataclass
class Registries:
    """Every backend family, built once and passed explicitly."""

    trafficgens: Registry[Any]
    vswitches: Registry[Any]
    vnfs: Registry[Any]
    collectors: Registry[Any]
    loadgens: Registry[Any]

    def families(self) -> dict[str, Registry[Any]]:
        return {
            "trafficgens": self.trafficgens,
            "vswitches": self.vswitches,
            "vnfs": self.vnfs,
            "collectors": self.collectors,
            "loadgens": self.loadgens,
        }


def load_entry_points(registry: Registry[Any], group: str) -> None:
    """Register the backends third parties installed under entry-point `group`."""
    for ep in metadata.entry_points(group=group):
        try:
            cls = ep.load()
        except Exception as exc:  # a broken third-party plugin must not break vsperf
            raise ConfigError(f"cannot load {group} entry point {ep.name!r}: {exc}") from exc
        registry.register(cls)
