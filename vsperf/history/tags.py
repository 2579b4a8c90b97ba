"""A run's tags: `--tag KEY=VALUE` and the CI variables of GitLab and Jenkins when present."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit, urlunsplit

from vsperf.errors import UserError

# CI variable -> tag, in the order a person reads them.
CI_VARIABLES = (
    ("CI_PIPELINE_ID", "ci.pipeline"),  # GitLab
    ("CI_JOB_ID", "ci.job"),
    ("CI_COMMIT_SHA", "ci.commit"),
    ("CI_COMMIT_REF_NAME", "ci.ref"),
    ("BUILD_NUMBER", "ci.build"),  # Jenkins
    ("BUILD_URL", "ci.url"),
    ("GIT_COMMIT", "ci.commit"),
)
_KEY = re.compile(r"[A-Za-z0-9_.:/-]{1,128}")


def without_credentials(value: str) -> str:
    """A URL with any user:password@ removed (other text as it is)."""
    try:
        parts = urlsplit(value)
    except ValueError:
        return value
    if parts.scheme and parts.netloc and "@" in parts.netloc:
        return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
    return value


def parse_tags(options: Iterable[str]) -> dict[str, str]:
    """`--tag KEY=VALUE` options as a mapping; raises UserError for a malformed one."""
    tags: dict[str, str] = {}
    for option in options:
        key, sep, value = option.partition("=")
        key = key.strip()
        if not sep or not _KEY.fullmatch(key):
            raise UserError(f"--tag {option!r}: write KEY=VALUE (KEY: letters, digits and _.:/-, at most 128)")
        tags[key] = value.strip()
    return tags


def ci_tags(environ: Mapping[str, str]) -> dict[str, str]:
    """Tags from the CI variables that are set (empty outside CI)."""
    tags: dict[str, str] = {}
    for variable, tag in CI_VARIABLES:
        value = environ.get(variable, "").strip()
        if value and tag not in tags:
            tags[tag] = without_credentials(value)
    return tags
