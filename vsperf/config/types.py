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

import ipaddress
import math
import re
from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from vsperf.config.compound import AnyValue, ListOf, MapOf, OneOf, Optional, Struct
from vsperf.config.spec import (
    InvalidValue,
    Spec,
    SpecError,
    UnknownKey,
    bounds_text,
    closest,
    show,
    type_name,
)

__all__ = [  # the specs a schema module uses, from this one module
    "LABEL", "MAX_COUNT", "MAX_CPU", "MAX_MEMORY_MB", "MAX_RATE_FPS", "NAME", "PORT_SPEED_GBPS", "REPEATS", "SECONDS",
    "SECONDS_OR_ZERO", "AnyValue", "Bool", "Constraint", "Float", "IPv4Address", "Int", "InvalidValue", "ListOf",
    "MacAddress", "MapOf", "OneOf", "Optional", "Setting", "Spec", "SpecError", "Str", "Struct", "UnknownKey",
    "closest", "show", "type_name",
]


class _Number(Spec):
    """What Int and Float say alike: their noun, their range, their unit."""

    NOUN: ClassVar[str]
    unit: str  # a field of each subclass

    @abstractmethod
    def bounds(self) -> str:
        """The range part of the description (see `bounds_text`)."""

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
        return bounds_text(self.min, self.max)

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
        return bounds_text(self.min, self.max, self.gt, self.lt)

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
