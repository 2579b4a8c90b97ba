"""The whole settings schema: the SETTINGS (and CONSTRAINTS) of every section module, merged.

A section module (schema_core.py, schema_lab.py, ...) defines `SETTINGS: dict[str, Setting]` and
may define `CONSTRAINTS: tuple[Constraint, ...]`; its defaults live in a conf/*.yaml file.
Adding a section is adding its module name to `SECTIONS`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from types import MappingProxyType, ModuleType

from vsperf.config.types import Constraint, Setting

# Section modules inside vsperf.config, merged in this order; those in OPTIONAL_SECTIONS may be
# absent (the lab settings are written separately from the core ones).
SECTIONS: tuple[str, ...] = ("schema_core", "schema_lab", "schema_report", "schema_search", "schema_vsgen",
                             "schema_otg", "schema_bench", "schema_pktgen", "schema_testbed", "schema_guest",
                             "schema_history", "schema_trials", "schema_trex", "schema_integration")
OPTIONAL_SECTIONS = frozenset({"schema_lab"})


def _import_sections(names: Sequence[str]) -> list[ModuleType]:
    modules = []
    for name in names:
        full_name = f"{__package__}.{name}"
        try:
            modules.append(importlib.import_module(full_name))
        except ModuleNotFoundError as exc:
            # Only the section itself may be missing; a failing import inside it is a bug to show.
            if exc.name != full_name or name not in OPTIONAL_SECTIONS:
                raise
    return modules


def merge_sections(modules: Sequence[ModuleType]) -> tuple[dict[str, Setting], tuple[Constraint, ...]]:
    """Merge the sections' SETTINGS and CONSTRAINTS; a name defined twice is a programming error."""
    settings: dict[str, Setting] = {}
    owners: dict[str, str] = {}
    constraints: list[Constraint] = []
    for module in modules:
        section = getattr(module, "SETTINGS", None)
        if not isinstance(section, Mapping):
            raise TypeError(f"{module.__name__} must define SETTINGS: dict[str, Setting]")
        for name, setting in section.items():
            if not isinstance(setting, Setting):
                raise TypeError(f"{module.__name__}: {name} is not a Setting")
            if name in settings:
                raise ValueError(f"setting {name} is defined in both {owners[name]} and {module.__name__}")
            settings[name] = setting
            owners[name] = module.__name__
        constraints.extend(getattr(module, "CONSTRAINTS", ()))
    unknown = [n for c in constraints for n in c.names if n not in settings]
    if unknown:
        raise ValueError(f"constraints name unknown settings: {', '.join(unknown)}")
    return settings, tuple(constraints)


_SETTINGS, CONSTRAINTS = merge_sections(_import_sections(SECTIONS))
SETTINGS_SCHEMA: Mapping[str, Setting] = MappingProxyType(_SETTINGS)
