"""Layered settings: defaults < conf file < environment < --test-params < test case.

Each layer is validated against the schema as it is applied, so an error names the setting, the
problem and the layer it came from. `Settings` is immutable: every layer makes a new one.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from vsperf import paths
from vsperf.config.params import load_yaml, parse_test_params, parse_value, render_value
from vsperf.config.pyconf import expand_params, is_file_variable, looks_like_pyconf, read_pyconf
from vsperf.config.schema import CONSTRAINTS, SETTINGS_SCHEMA
from vsperf.config.types import Constraint, Setting, SpecError, UnknownKey, show, type_name
from vsperf.config.vsperf_compat import drop_building_blocks, split_test_params, translate_layer
from vsperf.errors import ConfigError
from vsperf.inputs import read_text_file
from vsperf.inputs.limits import SETTINGS_FILE_MAX_BYTES

ENVIRONMENT = "environment"
TEST_PARAMS = "--test-params"


class Settings(Mapping[str, Any]):
    """Every setting's typed value and the layer it came from.

    Reading a value returns a deep copy: mutating it never changes the Settings. Build one with
    `load_settings`, then layer more values with `merged`.
    """

    __slots__ = ("_constraints", "_schema", "_sources", "_values")

    def __init__(self, values: Mapping[str, Any], sources: Mapping[str, str],
                 schema: Mapping[str, Setting] = SETTINGS_SCHEMA,
                 constraints: Sequence[Constraint] = CONSTRAINTS) -> None:
        """Wrap already validated and complete `values`; use load_settings or merged instead."""
        self._values = copy.deepcopy(dict(values))
        self._sources = dict(sources)
        self._schema = schema
        self._constraints = tuple(constraints)

    def __getitem__(self, name: str) -> Any:
        return copy.deepcopy(self._values[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Settings({len(self)} settings)"

    def source(self, name: str) -> str:
        """Where `name`'s value came from: 'default (00_common.yaml)', 'conf file /x.yaml',
        'environment', '--test-params', 'test case NAME'; for a nested mapping, the highest
        layer that changed any of its keys."""
        return self._sources[name]

    def sources(self) -> dict[str, str]:
        """Every setting's source (see `source`)."""
        return dict(self._sources)

    def as_dict(self) -> dict[str, Any]:
        """Plain values (dict, list, str, int, float, bool, None), ready for results.json."""
        return copy.deepcopy(self._values)

    def describe(self) -> list[tuple[str, str, str]]:
        """(name, value rendered as --test-params would take it, source), sorted by name."""
        return [(name, render_value(self._values[name]), self._sources[name])
                for name in sorted(self._values)]

    def merged(self, overrides: Mapping[str, Any], source: str) -> Settings:
        """A new Settings with raw `overrides` validated and layered on top, coming from `source`.

        VSPERF's spellings are read first (vsperf_compat.translate_layer), then its #PARAM macros
        are expanded against this layer and the settings below it.
        """
        values, sources = dict(self._values), dict(self._sources)
        if isinstance(overrides, Mapping):
            raw = translate_layer(overrides, source, self._schema)

            def lookup(name: str) -> Any:
                return raw[name] if name in raw else self._values[name]
            overrides = {k: expand_params(v, lookup, f"{k} ({source})") for k, v in raw.items()}
        apply_layer(values, sources, overrides, source, self._schema)
        check_layer(values, sources, self._schema, self._constraints)
        return Settings(values, sources, self._schema, self._constraints)


def validate_layer(raw: object, origin: str, schema: Mapping[str, Setting]) -> dict[str, Any]:
    """Validate one layer of raw values (a mapping of setting names) coming from `origin`."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{origin}: expected a mapping of SETTING: value, got {type_name(raw)} {show(raw)}")
    out: dict[str, Any] = {}
    for name, value in raw.items():
        if isinstance(name, str) and is_file_variable(name) and name not in schema:
            out[name] = value  # VSPERF's '_NAME' file variables: any value, read by TestSteps as $_NAME
            continue
        try:
            if not isinstance(name, str) or name not in schema:
                raise UnknownKey("", str(name), schema, noun="setting",
                                 fallback="vsperf --list-settings shows them all")
            out[name] = schema[name].spec.validate(value, name)
        except SpecError as exc:
            raise exc.located(origin) from None
    return out


def apply_layer(values: dict[str, Any], sources: dict[str, str], raw: object, origin: str,
                schema: Mapping[str, Setting]) -> None:
    """Validate `raw` and merge it into `values` (in place), recording `origin` as the source."""
    for name, value in validate_layer(raw, origin, schema).items():
        values[name] = schema[name].spec.merge(values[name], value) if name in values and name in schema else value
        sources[name] = origin


def check_layer(values: Mapping[str, Any], sources: Mapping[str, str], schema: Mapping[str, Setting],
                constraints: Sequence[Constraint]) -> None:
    """After a layer: every nested key has a value and every constraint holds."""
    for name, setting in schema.items():
        if name not in values:
            raise ConfigError(f"setting {name} has no default: no conf/*.yaml file sets it")
        missing = setting.spec.missing(values[name], name)
        if missing:
            raise ConfigError(f"{missing[0]}: missing, and there is no default for it (from {sources[name]})")
    for rule in constraints:
        if all(n in values for n in rule.names):
            problem = rule.problem(values)
            if problem:
                where = ", ".join(f"{n} from {sources[n]}" for n in rule.names)
                raise ConfigError(f"{problem} ({where})")


def read_conf_file(path: Path, origin: str, names: Mapping[str, Any] | None = None) -> dict[Any, Any]:
    """The raw mapping in a conf file, YAML or VSPERF's Python form (an empty file is an empty mapping).

    A file ending in .conf or .py, or whose first statement is `NAME = ...`, is read as VSPERF's
    form (vsperf.config.pyconf: parsed, never executed); any other as YAML. Read through
    vsperf.inputs: a regular UTF-8 file of at most SETTINGS_FILE_MAX_BYTES, bounded YAML. A Python
    file's expressions may use `names` (the settings loaded before it).
    """
    text = read_text_file(path, origin, SETTINGS_FILE_MAX_BYTES)
    if path.suffix in (".conf", ".py") or looks_like_pyconf(text):
        return read_pyconf(text, origin, names)
    data = load_yaml(text, origin)
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        # VSPERF's conf files were Python ('KEY = value'); say what we expect instead.
        raise ConfigError(f"{origin}: expected a YAML mapping of settings ('KEY: value' lines) or "
                          f"VSPERF's 'KEY = value' lines, got {type_name(data)} {show(data)}")
    return dict(data)


def default_files(conf_dir: Path | None = None) -> list[Path]:
    """The shipped default conf files, in the order they are applied (by name)."""
    try:
        folder = conf_dir if conf_dir is not None else paths.data_dir("conf")
    except FileNotFoundError as exc:  # a broken installation, not a user's mistake, but say it in one line
        raise ConfigError(f"{exc}: reinstall vsperf") from None
    return sorted(folder.glob("*.yaml"), key=lambda p: p.name)


def environment_layer(env: Mapping[str, str], schema: Mapping[str, Setting]) -> dict[str, Any]:
    """Raw values of the environment variables named like a setting, parsed like --test-params."""
    return {name: parse_value(env[name], f"environment variable {name}") for name in schema if name in env}


def load_settings(conf_file: Path | None = None, env: Mapping[str, str] | None = None,
                  test_params: str | None = None, *, conf_dir: Path | None = None) -> Settings:
    """Build the settings from every layer, lowest first.

    1. defaults: the conf/*.yaml files shipped with vsperf (or in `conf_dir`), in name order;
    2. `conf_file`, a user's file, YAML or VSPERF's Python form; its TEST_PARAMS (VSPERF's) on top;
    3. `env`: variables named like a known setting (os.environ when None; pass {} for none);
    4. `test_params`, VSPERF's "KEY=VALUE;KEY2=VALUE2".
    A test case's Parameters come later, through `Settings.merged`. Raises ConfigError.
    """
    schema, constraints = SETTINGS_SCHEMA, CONSTRAINTS
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for path in default_files(conf_dir):
        origin = f"default ({path.name})"
        apply_layer(values, sources, read_conf_file(path, origin), origin, schema)
    check_layer(values, sources, schema, constraints)
    settings = Settings(values, sources, schema, constraints)
    if conf_file is not None:
        origin = f"conf file {conf_file}"
        raw = read_conf_file(Path(conf_file), origin, settings.as_dict())
        raw, file_params = split_test_params(drop_building_blocks(raw, origin, schema), origin)
        settings = settings.merged(raw, origin)
        if file_params:
            settings = settings.merged(file_params, f"TEST_PARAMS of {origin}")
    env_values = environment_layer(os.environ if env is None else env, schema)
    if env_values:
        settings = settings.merged(env_values, ENVIRONMENT)
    if test_params:
        settings = settings.merged(parse_test_params(test_params), TEST_PARAMS)
    return settings
