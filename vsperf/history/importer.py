"""`vsperf history import DIR...`: record past run directories (a folder of them works too)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from vsperf.history.db import Store
from vsperf.history.recorder import NotARunError, Recorded, record_dir
from vsperf.results.model import RESULTS_FILENAME


def run_dirs(path: Path) -> Iterator[Path]:
    """`path` when it is a run directory, else the run directories directly inside it (by name);
    NotARunError when it is neither."""
    if (path / RESULTS_FILENAME).is_file():
        yield path
        return
    if not path.is_dir():
        raise NotARunError(f"{path} is not a vsperf run directory (no such directory)")
    found = sorted(p for p in path.iterdir() if (p / RESULTS_FILENAME).is_file())
    if not found:
        raise NotARunError(f"{path} is not a vsperf run directory (no results.json in it or in its folders)")
    yield from found


@dataclass
class ImportReport:
    """What an import did, for its summary line and exit code."""

    recorded: list[Recorded] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # one line per directory that could not be read

    def count(self, action: str) -> int:
        return sum(1 for r in self.recorded if r.action == action)

    def summary(self) -> str:
        text = (f"import: {self.count('recorded')} recorded, {self.count('updated')} updated, "
                f"{self.count('unchanged')} unchanged")
        return text + (f", {len(self.problems)} not run directories" if self.problems else "")


def import_dirs(store: Store, paths: Iterable[Path],
                on_run: Callable[[Path, Recorded], None] | None = None) -> ImportReport:
    """Record every run directory under `paths` (each run in its own transaction). A directory
    that is not a run is reported, not fatal; a store error stops the import (StoreError)."""
    report = ImportReport()
    for path in paths:
        try:
            for run_dir in run_dirs(path):
                try:
                    recorded = record_dir(store, run_dir)
                except NotARunError as exc:
                    report.problems.append(str(exc))
                    continue
                report.recorded.append(recorded)
                if on_run is not None:
                    on_run(run_dir, recorded)
        except NotARunError as exc:
            report.problems.append(str(exc))
    return report
