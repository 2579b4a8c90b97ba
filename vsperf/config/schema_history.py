"""The results store: where every run is recorded, its tags, and what trends and the dashboard
show by default. Defaults: conf/12_history.yaml. See docs/history.rst.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from vsperf.config.types import NAME, Bool, Int, InvalidValue, ListOf, MapOf, Setting, Str


@dataclass(frozen=True)
class DatabaseUrl(Str):
    """A database URL or path that holds no password (a refused value is never echoed)."""

    def validate(self, value: object, path: str) -> str:
        text = super().validate(value, path)
        try:
            password = urlsplit(text).password if "://" in text else None
        except ValueError:
            password = None
        if password is not None:
            raise InvalidValue(path, "a password in the URL is refused (it would reach results.json and the logs): "
                               "leave it out and put it in PGPASSWORD or ~/.pgpass")
        return text


SETTINGS: dict[str, Setting] = {
    "HISTORY": Setting(
        Bool(),
        "Record every run into the results store (HISTORY_DB) after each test and at its end; a store "
        "that is down costs one warning line, never the run."),
    "HISTORY_DB": Setting(
        DatabaseUrl(),
        "The results store: empty for LOG_DIR/vsperf-history.sqlite, an SQLite path or sqlite:///FILE, or "
        "postgresql://USER@HOST:PORT/DB (password in PGPASSWORD or ~/.pgpass, never in the URL)."),
    "HISTORY_TAGS": Setting(
        MapOf(Str(min_len=1), Str()),
        "Tags recorded with the run (--tag KEY=VALUE adds to them; GitLab's and Jenkins' CI variables "
        "are added when present)."),
    "HISTORY_METRICS": Setting(
        ListOf(NAME, min_len=1),
        "The metrics vsperf trend and vsperf dashboard show when no --metric is given (every numeric "
        "metric is stored)."),
    "HISTORY_TREND_RUNS": Setting(
        Int(min=3, max=1000, unit="runs"),
        "How many of a series' newest runs change detection (jumpavg) classifies: vsperf trend, its "
        "--gate and the dashboard's groups."),
    "HISTORY_REPORT_URL": Setting(
        Str(),
        "Where the dashboard links a run's report: a template with {run_id} and {dir} (the run "
        "directory's name), e.g. https://ci.example.org/vsperf/{dir}/report.html; empty: the file."),
}
