"""Settings for tests, built the way production builds them: the shipped conf/ plus overrides.

Backends and config objects read complete `Settings` (every default lives in conf/*.yaml only), so
a test states just the values it cares about and gets every other one from the shipped defaults.
"""

from __future__ import annotations

from typing import Any

from vsperf.config import Settings, load_settings


def make_settings(overrides: dict[str, Any] | None = None, **kwargs: Any) -> Settings:
    """The shipped defaults with `overrides` (and keyword overrides) layered on top, validated."""
    values = {**(overrides or {}), **kwargs}
    return load_settings(env={}).merged(values, "test")
