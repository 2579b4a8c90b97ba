"""Compound type specs of settings: lists, structs, maps, optional values and alternatives
(`ListOf`, `Struct`, `MapOf`, `Optional`, `OneOf`, `AnyValue`); vsperf.config.types holds the
scalars and re-exports these.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vsperf.config.spec import InvalidValue, Spec, UnknownKey, show, type_name


@dataclass(frozen=True)
class ListOf(Spec):
    """A list (a tuple becomes a list) of `item`, at least `min_len` long."""

    item: Spec
    min_len: int = 0

    def kind(self) -> str:
        return f"a list of {self.item.kind()}"

    def describe(self) -> str:
        return ("a non-empty list" if self.min_len == 1 else "a list") + f" of {self.item.describe()}"

    def matches(self, value: object) -> bool:
        return isinstance(value, list | tuple)

    def validate(self, value: object, path: str) -> list[Any]:
        if not isinstance(value, list | tuple):
            raise self.wrong_type(value, path)
        if len(value) < self.min_len:
            raise self.out_of_range(value, path)
        return [self.item.validate(x, f"{path}[{i}]") for i, x in enumerate(value)]

    def missing(self, value: Any, path: str) -> list[str]:
        return [m for i, x in enumerate(value) for m in self.item.missing(x, f"{path}[{i}]")]


@dataclass(frozen=True)
class Struct(Spec):
    """A mapping with known string keys; any subset in one layer, merged key by key."""

    fields: Mapping[str, Spec]

    def kind(self) -> str:
        return "a mapping with keys " + ", ".join(self.fields)

    def matches(self, value: object) -> bool:
        return isinstance(value, Mapping)

    def validate(self, value: object, path: str) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            raise self.wrong_type(value, path)
        out: dict[str, Any] = {}
        for key, raw in value.items():
            if not isinstance(key, str) or key not in self.fields:
                raise UnknownKey(path, str(key), self.fields)
            out[key] = self.fields[key].validate(raw, f"{path}.{key}")
        return out

    def merge(self, base: Any, override: Any) -> Any:
        out = dict(base)
        for key, value in override.items():
            out[key] = self.fields[key].merge(out[key], value) if key in out else value
        return out

    def missing(self, value: Any, path: str) -> list[str]:
        absent = [f"{path}.{key}" for key in self.fields if key not in value]
        return absent + [m for key, spec in self.fields.items() if key in value
                         for m in spec.missing(value[key], f"{path}.{key}")]


@dataclass(frozen=True)
class MapOf(Spec):
    """A mapping of `key` to `value` (e.g. frame size -> fps). It replaces the lower layer's map,
    unless `merge_keys`, where it is merged key by key."""

    key: Spec
    value: Spec
    min_len: int = 0
    merge_keys: bool = False

    def kind(self) -> str:
        return f"a mapping of {self.key.kind()} to {self.value.kind()}"

    def describe(self) -> str:
        return ("a non-empty mapping" if self.min_len == 1 else "a mapping") + \
            f" of {self.key.describe()} to {self.value.describe()}"

    def matches(self, value: object) -> bool:
        return isinstance(value, Mapping)

    def validate(self, value: object, path: str) -> dict[Any, Any]:
        if not isinstance(value, Mapping):
            raise self.wrong_type(value, path)
        if len(value) < self.min_len:
            raise self.out_of_range(dict(value), path)
        return {self.key.validate(k, f"{path}.{k}"): self.value.validate(v, f"{path}.{k}")
                for k, v in value.items()}

    def merge(self, base: Any, override: Any) -> Any:
        if not self.merge_keys:
            return override
        out = dict(base)
        for key, value in override.items():
            out[key] = self.value.merge(out[key], value) if key in out else value
        return out

    def missing(self, value: Any, path: str) -> list[str]:
        return [m for k, v in value.items() for m in self.value.missing(v, f"{path}.{k}")]


@dataclass(frozen=True)
class Optional(Spec):
    """`inner`, or null (None)."""

    inner: Spec

    def kind(self) -> str:
        return f"{self.inner.kind()} or null"

    def describe(self) -> str:
        return f"{self.inner.describe()} or null"

    def matches(self, value: object) -> bool:
        return value is None or self.inner.matches(value)

    def validate(self, value: object, path: str) -> Any:
        return None if value is None else self.inner.validate(value, path)

    def merge(self, base: Any, override: Any) -> Any:
        return override if base is None or override is None else self.inner.merge(base, override)

    def missing(self, value: Any, path: str) -> list[str]:
        return [] if value is None else self.inner.missing(value, path)


@dataclass(frozen=True, init=False)
class OneOf(Spec):
    """The first of `options` whose Python type the value has, e.g. OneOf(Float(), MapOf(Int(), Float()))."""

    options: tuple[Spec, ...]

    def __init__(self, *options: Spec) -> None:
        if len(options) < 2:
            raise ValueError("OneOf needs at least two options")
        object.__setattr__(self, "options", options)

    def kind(self) -> str:
        return " or ".join(o.kind() for o in self.options)

    def describe(self) -> str:
        return " or ".join(o.describe() for o in self.options)

    def matches(self, value: object) -> bool:
        return any(o.matches(value) for o in self.options)

    def _option(self, value: object) -> Spec | None:
        return next((o for o in self.options if o.matches(value)), None)

    def validate(self, value: object, path: str) -> Any:
        option = self._option(value)
        if option is None:
            raise self.wrong_type(value, path)
        return option.validate(value, path)

    def merge(self, base: Any, override: Any) -> Any:
        option = self._option(override)
        if option is not None and option.matches(base):
            return option.merge(base, override)
        return override

    def missing(self, value: Any, path: str) -> list[str]:
        option = self._option(value)
        return [] if option is None else option.missing(value, path)


def _plain(value: object, path: str) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list | tuple):
        return [_plain(x, f"{path}[{i}]") for i, x in enumerate(value)]
    if isinstance(value, Mapping):
        return {k: _plain(v, f"{path}.{k}") for k, v in value.items()}
    raise InvalidValue(path, f"expected a plain value (mapping, list, string, number, boolean, null), "
                             f"got {type_name(value)} {show(value)}")


@dataclass(frozen=True)
class AnyValue(Spec):
    """Any plain value (tuples become lists), for data a later stage validates (e.g. test cases)."""

    def kind(self) -> str:
        return "a value"

    def matches(self, value: object) -> bool:
        return True

    def validate(self, value: object, path: str) -> Any:
        return _plain(value, path)
