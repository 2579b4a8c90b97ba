"""Where the dashboard's pages point: relative files of a static site, or the live server's paths."""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

_SAFE = re.compile(r"[0-9A-Za-z_.-]{1,80}")


def slug(run_id: str) -> str:
    """A run id as a file name (a hash when it has characters a file name should not)."""
    return run_id if _SAFE.fullmatch(run_id) else hashlib.sha1(run_id.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Links:
    """Hrefs for one page. `root` is how the page reaches the site's top ("" or "../" for a
    static page, "/" on the server); `served` switches reports to the server's /report/ path."""

    root: str = ""
    served: bool = False
    report_url: str = ""  # HISTORY_REPORT_URL: a template with {run_id} and {dir}

    def index(self) -> str:
        return f"{self.root}index.html"

    def runs(self) -> str:
        return f"{self.root}runs.html"

    def asset(self, name: str) -> str:
        return f"{self.root}assets/{name}"

    def series(self, series_id: int) -> str:
        return f"{self.root}series/s{series_id}.html"

    def compare(self, run_a: str, run_b: str) -> str:
        return f"{self.root}compare/{slug(run_a)}__{slug(run_b)}.html"

    def report(self, run_id: str, report_path: str | None) -> str:
        """The run's report: HISTORY_REPORT_URL filled in, the server's copy, or the file."""
        if self.report_url:
            short = run_id.rsplit("-", 1)[-1]
            folder = Path(report_path).parent.name if report_path and report_path.endswith(".html") else \
                Path(report_path or "").name
            return self.report_url.format(run_id=quote(short), dir=quote(folder))
        if self.served:
            return f"/report/{quote(run_id)}/"
        return _file_uri(report_path) if report_path else ""


@functools.lru_cache(maxsize=65536)  # a site links each run from every series it is in
def _file_uri(path: str) -> str:
    return Path(path).as_uri() if Path(path).is_absolute() else ""
