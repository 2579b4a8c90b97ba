"""The base of the settings' type specs (vsperf.config.types): `Spec`, its errors, and the
helpers their messages use (a value shown short, a type named, the closest valid name).
"""

from __future__ import annotations

import difflib
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

from vsperf.errors import ConfigError

_SHOW_MAX_CHARS = 60


def show(value: object) -> str:
    """A one-line, bounded repr of a user's value, for error messages."""
    text = repr(value)
    return text if len(text) <= _SHOW_MAX_CHARS else text[: _SHOW_MAX_CHARS - 3] + "..."


def type_name(value: object) -> str:
    """The name a user recognises for the type of `value` (YAML's null for None)."""
    return "null" if value is None else type(value).__name__


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate most like `name` (ignoring case), or None when none is close."""
    by_lower = {c.lower(): c for c in candidates}
    match = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.6)
    return by_lower[match[0]] if match else None


class SpecError(ConfigError):
    """A value does not fit its spec; `path` is the dotted key, e.g. 'TRAFFIC.l3.srcip'."""

    path: str

    def located(self, origin: str) -> SpecError:
        """The same error, saying where the value came from ('--test-params', 'conf file X')."""
        raise NotImplementedError


class InvalidValue(SpecError):
    """A value of the wrong type or out of range: 'KEY: expected ..., got ... (from ORIGIN)'."""

    def __init__(self, path: str, problem: str, origin: str | None = None) -> None:
        self.path = path
        self.problem = problem
        self.origin = origin
        super().__init__(f"{path}: {problem}" + (f" (from {origin})" if origin else ""))

    def located(self, origin: str) -> InvalidValue:
        return InvalidValue(self.path, self.problem, origin)


class UnknownKey(SpecError):
    """A key the spec does not know: "unknown key 'P.k' in ORIGIN (did you mean 'P.key'?)"."""

    def __init__(self, parent: str, key: str, valid: Iterable[str], *, noun: str = "key",
                 fallback: str = "", origin: str | None = None) -> None:
        self.parent, self.key, self.valid, self.noun = parent, key, tuple(valid), noun
        self.fallback, self.origin = fallback, origin
        self.path = f"{parent}.{key}" if parent else key
        prefix = f"{parent}." if parent else ""
        guess = closest(key, self.valid)
        if guess is not None:
            hint = f" (did you mean '{prefix}{guess}'?)"
        elif fallback:
            hint = f" ({fallback})"
        else:
            hint = f" (valid keys: {', '.join(self.valid)})"
        where = f" in {origin}" if origin else ""
        super().__init__(f"unknown {noun} {show(self.path)}{where}{hint}")

    def located(self, origin: str) -> UnknownKey:
        return UnknownKey(self.parent, self.key, self.valid, noun=self.noun, fallback=self.fallback,
                          origin=origin)


def number_text(x: float) -> str:
    return f"{x:g}"


def bounds_text(lo: float | None, hi: float | None, gt: float | None = None, lt: float | None = None) -> str:
    """' in 0..100', ' > 0', ' >= 1 and < 1', ...: the range part of a description."""
    if lo is not None and hi is not None:
        return f" in {number_text(lo)}..{number_text(hi)}"
    parts = [f"{op} {number_text(v)}" for op, v in ((">=", lo), (">", gt), ("<=", hi), ("<", lt)) if v is not None]
    return " " + " and ".join(parts) if parts else ""


class Spec(ABC):
    """What a setting (or a key inside one) accepts."""

    @abstractmethod
    def kind(self) -> str:
        """The accepted type without its range, e.g. 'a number (seconds)' (used for type errors)."""

    def describe(self) -> str:
        """Everything accepted, e.g. 'a number > 0 (seconds)'."""
        return self.kind()

    @abstractmethod
    def matches(self, value: object) -> bool:
        """Whether `value` has this spec's Python type (OneOf picks its branch with it)."""

    @abstractmethod
    def validate(self, value: object, path: str) -> Any:
        """Return `value` typed and normalised, or raise SpecError naming `path`."""

    def merge(self, base: Any, override: Any) -> Any:
        """Layer a validated `override` on a validated `base`: here the override replaces it."""
        return override

    def missing(self, value: Any, path: str) -> list[str]:
        """Dotted paths of Struct keys absent from a merged `value` (none for scalars)."""
        return []

    def wrong_type(self, value: object, path: str, hint: str = "") -> InvalidValue:
        """The error for a value of the wrong Python type."""
        return InvalidValue(path, f"expected {self.kind()}, got {type_name(value)} {show(value)}{hint}")

    def out_of_range(self, value: object, path: str) -> InvalidValue:
        """The error for a value of the right type that the spec still refuses."""
        return InvalidValue(path, f"expected {self.describe()}, got {show(value)}")
