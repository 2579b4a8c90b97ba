"""Type specs for settings: each one validates a raw value and returns it typed and normalised.

Usage, in a section module such as schema_core.py:

    SETTINGS = {
        "TRAFFICGEN_DURATION": Setting(Float(gt=0, unit="seconds"), "Length of one trial."),
        "TRAFFICGEN_PKT_SIZES": Setting(ListOf(Int(min=64, max=9018), min_len=1), "Frame sizes."),
        "TRAFFIC": Setting(Struct({"bidir": Bool(), "l4": Struct({"srcport": Int(min=0)})}), "..."),
    }

`spec.validate(raw, "KEY")` returns the value normalised (tuple -> list, int -> float for Float) or
raises a `SpecError` (a ConfigError) naming the dotted key; the loader adds the value's origin.
A Struct may be partial in any one layer and merges key by key; every key needs a default in conf/.
Every other value (lists, maps, scalars) replaces the lower layer's value as a whole.
"""

from __future__ import annotations

import difflib
import ipaddress
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

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


def _num(x: float) -> str:
    return f"{x:g}"


def _bounds(lo: float | None, hi: float | None, gt: float | None = None, lt: float | None = None) -> str:
    """' in 0..100', ' > 0', ' >= 1 and < 1', ...: the range part of a description."""
    if lo is not None and hi is not None:
        return f" in {_num(lo)}..{_num(hi)}"
    parts = [f"{op} {_num(v)}" for op, v in ((">=", lo), (">", gt), ("<=", hi), ("<", lt)) if v is not None]
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


class _Number(Spec):
    """What Int and Float say alike: their noun, their range, their unit."""

    NOUN: ClassVar[str]
    unit: str  # a field of each subclass

    @abstractmethod
    def bounds(self) -> str:
        """The range part of the description (see `_bounds`)."""

    def kind(self) -> str:
        return self.NOUN + self._unit()

    def describe(self) -> str:
        return self.NOUN + self.bounds() + self._unit()

    def _unit(self) -> str:
        return f" ({self.unit})" if self.unit else ""


@dataclass(frozen=True)
class Int(_Number):
    """An integer (never a bool), `min` <= value <= `max`."""

    NOUN = "an integer"
    min: int | None = None
    max: int | None = None
    unit: str = ""

    def bounds(self) -> str:
        return _bounds(self.min, self.max)

    def matches(self, value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    def validate(self, value: object, path: str) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.wrong_type(value, path)
        if (self.min is not None and value < self.min) or (self.max is not None and value > self.max):
            raise self.out_of_range(value, path)
        return int(value)


@dataclass(frozen=True)
class Float(_Number):
    """A finite number (an int is accepted and becomes a float; a bool is not): inclusive `min`/`max`,
    exclusive `gt`/`lt`."""

    NOUN = "a number"
    min: float | None = None
    max: float | None = None
    gt: float | None = None
    lt: float | None = None
    unit: str = ""

    def bounds(self) -> str:
        return _bounds(self.min, self.max, self.gt, self.lt)

    def matches(self, value: object) -> bool:
        return isinstance(value, int | float) and not isinstance(value, bool)

    def validate(self, value: object, path: str) -> float:
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise self.wrong_type(value, path)
        number = float(value)
        if (not math.isfinite(number)
                or (self.min is not None and number < self.min)
                or (self.max is not None and number > self.max)
                or (self.gt is not None and number <= self.gt)
                or (self.lt is not None and number >= self.lt)):
            raise self.out_of_range(value, path)
        return number


_BOOL_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "y", "n", "1", "0"})
# VSPERF's spellings of booleans ('bidir': 'True', 'pre_installed_flows': 'No'), read case-insensitively.
_VSPERF_BOOLS = {"true": True, "yes": True, "false": False, "no": False}


@dataclass(frozen=True)
class Bool(Spec):
    """true or false; VSPERF's strings 'True', 'False', 'Yes' and 'No' (any case) are read as such."""

    def kind(self) -> str:
        return "true or false"

    def matches(self, value: object) -> bool:
        return isinstance(value, bool)

    def validate(self, value: object, path: str) -> bool:
        if isinstance(value, str) and value.strip().lower() in _VSPERF_BOOLS:
            return _VSPERF_BOOLS[value.strip().lower()]
        if not isinstance(value, bool):
            quoted = isinstance(value, str) and value.strip().lower() in _BOOL_WORDS
            raise self.wrong_type(value, path, ": write true or false" if quoted else "")
        return value


STRING_MAX_CHARS = 4096  # Linux's PATH_MAX: no setting's string needs more


@dataclass(frozen=True)
class Str(Spec):
    """A string, optionally one of `choices`, `min_len` to `max_len` characters long.

    With `ignore_case`, a choice given in another case (VSPERF's 'l4' for 'L4') is accepted and
    returned as the choice is spelled.
    """

    choices: tuple[str, ...] = ()
    min_len: int = 0
    ignore_case: bool = False
    max_len: int = STRING_MAX_CHARS

    def kind(self) -> str:
        return "a string"

    def describe(self) -> str:
        if self.choices:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        return "a non-empty string" if self.min_len == 1 else self.kind()

    def matches(self, value: object) -> bool:
        return isinstance(value, str)

    def convert(self, text: str) -> str:
        """Check and normalise a string; raise ValueError when it is not acceptable."""
        return text

    def validate(self, value: object, path: str) -> str:
        if not isinstance(value, str):
            raise self.wrong_type(value, path)
        if self.ignore_case and self.choices and value not in self.choices:
            value = next((c for c in self.choices if c.lower() == value.lower()), value)
        if self.choices and value not in self.choices:
            guess = closest(value, self.choices)
            hint = f" (did you mean {guess!r}?)" if guess else ""
            raise InvalidValue(path, f"expected {self.describe()}, got {show(value)}{hint}")
        if len(value) < self.min_len:
            raise self.out_of_range(value, path)
        if len(value) > self.max_len:
            raise InvalidValue(path, f"{len(value):,} characters, more than the {self.max_len:,} this setting "
                                     f"holds: {show(value)}")
        try:
            return self.convert(value)
        except ValueError:
            raise self.out_of_range(value, path) from None


_MAC_RE = re.compile(r"[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}")


@dataclass(frozen=True)
class MacAddress(Str):
    """An Ethernet MAC address 'xx:xx:xx:xx:xx:xx', returned in lower case."""

    def kind(self) -> str:
        return "a MAC address like 00:11:22:33:44:55"

    def describe(self) -> str:
        return self.kind()

    def convert(self, text: str) -> str:
        if not _MAC_RE.fullmatch(text):
            raise ValueError(text)
        return text.lower()


@dataclass(frozen=True)
class IPv4Address(Str):
    """A dotted-quad IPv4 address, optionally inside `network` (`why` says why, in messages)."""

    network: str | None = None
    why: str = ""

    def kind(self) -> str:
        return "an IPv4 address"

    def describe(self) -> str:
        inside = f" inside {self.network}" if self.network else ""
        return self.kind() + inside + (f" ({self.why})" if self.why else "")

    def convert(self, text: str) -> str:
        address = ipaddress.IPv4Address(text)  # AddressValueError is a ValueError
        if self.network is not None and address not in ipaddress.IPv4Network(self.network):
            raise ValueError(text)
        return str(address)


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


@dataclass(frozen=True)
class Setting:
    """One top-level setting: its spec and the one-line doc `vsperf --list-settings -v` shows."""

    spec: Spec
    doc: str


# Specs many settings share, each stated once, with bounds vsperf can stand behind: every
# number has an upper bound (tests/unit/test_config_schema.py checks it), every string a length.
WEEK_S = 7 * 24 * 3600
SECONDS = Float(min=0.001, max=WEEK_S, unit="seconds")  # a duration: at least 1 ms, at most a week
SECONDS_OR_ZERO = Float(min=0, max=WEEK_S, unit="seconds")  # a wait or a phase that may be skipped (0)
NAME = Str(min_len=1)  # a name, a path, a command: never empty
LABEL = Str(min_len=1, max_len=200)  # a string a person reads in a report's title block or table
REPEATS = Int(min=1, max=100)  # searches, trials or resets per frame size (RFC 2544 asks for 50 at most)
MAX_COUNT = 10**9  # frames, addresses, messages, streams: beyond any real test
MAX_RATE_FPS = 1e10  # 1.6 Tbit/s Ethernet carries 2.4e9 frames/s of 64 bytes
MAX_CPU = 4095  # CPU numbers (Linux's NR_CPUS on big machines)
MAX_MEMORY_MB = 4 * 1024 * 1024  # 4 TiB
PORT_SPEED_GBPS = Float(min=0.001, max=1600, unit="Gbit/s")  # 1 Mbit/s .. 1.6 Tbit/s


@dataclass(frozen=True)
class Constraint:
    """A rule over several settings, checked after each layer once all of `names` have values.

    `problem` gets the merged values (a mapping holding at least `names`) and returns what is
    wrong as one line, or None when the rule holds.
    """

    names: tuple[str, ...]
    problem: Callable[[Mapping[str, Any]], str | None] = field(compare=False)
