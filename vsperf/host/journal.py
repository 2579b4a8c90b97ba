"""The run's journal: everything a run creates or changes on any of its hosts, on disk before it
happens, so that teardown, and the next run after a SIGKILL, can put each host back.

One file per run on the controller, `<state root>/<run_id>/journal.json` (default root
/run/vsperf), names the vsperf process that owns it (PID and start time in clock ticks) and lists
entries in the order they were recorded, each tagged with the host it concerns (`local` for this
machine, or the testbed's name for a host):

- netns, link, dir: something the run creates (deleted at release);
- process: a process the run started (stopped at release, by PID and start time);
- port, binding, knob, qdisc: something of the host the run changes (an existing interface's
  state, a PCI device's driver, a kernel setting, a qdisc added to a port), with what it was
  before (put back at release).

The file is rewritten atomically (write + rename) after every change, so it is complete at any
moment a kill can happen, and removed once it is empty. Versioned: an unknown version is refused
with a one-line reason (the sweep then leaves the file alone).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from vsperf.host.names import check_run_id
from vsperf.host.proc import own_start_ticks, same_local_process

DEFAULT_STATE_ROOT = Path("/run/vsperf")
JOURNAL_FILE = "journal.json"
JOURNAL_VERSION = 2

EntryKind = Literal["process", "netns", "link", "dir", "port", "binding", "knob", "qdisc"]
ENTRY_KINDS: tuple[str, ...] = get_args(EntryKind)


@dataclass(frozen=True)
class Entry:
    """One thing a run created or changed on host `host`.

    - netns: `name` is the namespace; link: `name` the interface, `netns` its namespace (None:
      the host's own); dir: `name` an absolute path on the host, removed recursively;
    - process: `name` a label, `pid` and `start_ticks` (field 22 of /proc/PID/stat) its identity;
    - port: `name` the interface, `state` its `PortState` before; binding: `name` the PCI
      address, `state` its `PciBinding` before; knob: `name` a sysfs/procfs path, `state`
      {"value": before}; qdisc: `name` the interface, `state` {"qdisc": "root" | "clsact",
      "root_before": the port's root qdisc before}.
    """

    kind: EntryKind
    host: str
    name: str
    netns: str | None = None
    pid: int = 0
    start_ticks: int = 0
    state: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in ENTRY_KINDS:
            raise ValueError(f"unknown journal entry kind {self.kind!r}")

    def same(self, other: Entry) -> bool:
        """True when `other` records the same object (for a process: the same PID; for a qdisc:
        the same interface and qdisc)."""
        if (self.kind, self.host, self.name, self.netns) != (other.kind, other.host, other.name, other.netns):
            return False
        if self.kind == "process":
            return self.pid == other.pid
        if self.kind == "qdisc":
            return self.state.get("qdisc") == other.state.get("qdisc")
        return True

    def describe(self) -> str:
        """A short human description, for logs and cleanup reports."""
        where = "" if self.host == "local" else f"host {self.host}: "
        if self.kind == "process":
            return f"{where}process {self.name} (pid {self.pid})"
        if self.kind == "link":
            return f"{where}link {self.name}" + (f" in {self.netns}" if self.netns else "")
        if self.kind == "qdisc":
            return f"{where}{self.name}: {self.state.get('qdisc')} qdisc"
        if self.kind in ("port", "binding", "knob"):
            return f"{where}{self.kind} {self.name}"
        return f"{where}{self.kind} {self.name}"

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["state"] = dict(self.state)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Entry:
        return cls(kind=data["kind"], host=str(data["host"]), name=str(data["name"]),
                   netns=None if data.get("netns") is None else str(data["netns"]), pid=int(data.get("pid", 0)),
                   start_ticks=int(data.get("start_ticks", 0)), state=dict(data.get("state") or {}))


@dataclass(frozen=True)
class Owner:
    """The vsperf process that owns a journal: PID and start time (clock ticks) on the controller."""

    pid: int
    start_ticks: int

    @classmethod
    def current(cls) -> Owner:
        return cls(os.getpid(), own_start_ticks())

    @property
    def alive(self) -> bool:
        """True while that same process runs."""
        return same_local_process(self.pid, self.start_ticks)


class Journal:
    """The entries of one run, mirrored to its file after every change."""

    def __init__(self, run_id: str, *, root: Path = DEFAULT_STATE_ROOT, owner: Owner | None = None,
                 entries: list[Entry] | None = None) -> None:
        self.run_id = check_run_id(run_id)
        self.root = root
        self.owner = owner or Owner.current()
        self._entries: list[Entry] = list(entries or [])

    @property
    def path(self) -> Path:
        return self.root / self.run_id / JOURNAL_FILE

    def entries(self) -> list[Entry]:
        """Every entry, in the order recorded."""
        return list(self._entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def hosts(self) -> set[str]:
        """The hosts the entries concern."""
        return {e.host for e in self._entries}

    def record(self, entry: Entry) -> Entry:
        """Record `entry` (before the change it describes); the first record of an object wins
        (a port's state before the run touched it)."""
        if not any(e.same(entry) for e in self._entries):
            self._entries.append(entry)
            self.save()
        return entry

    def forget(self, entry: Entry) -> None:
        """Drop the entry of the same object (after it was removed or put back)."""
        kept = [e for e in self._entries if not e.same(entry)]
        if len(kept) != len(self._entries):
            self._entries = kept
            self.save()

    def as_dict(self) -> dict[str, Any]:
        return {
            "version": JOURNAL_VERSION,
            "run_id": self.run_id,
            "owner_pid": self.owner.pid,
            "owner_start_ticks": self.owner.start_ticks,
            "entries": [e.as_dict() for e in self._entries],
        }

    def save(self) -> None:
        """Write the file atomically; an empty journal's file (and directory) is removed."""
        if not self._entries:
            self.path.unlink(missing_ok=True)
            with contextlib.suppress(OSError):  # not empty (another file of the run), or gone already
                self.path.parent.rmdir()
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{JOURNAL_FILE}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.as_dict(), indent=1), encoding="utf-8")
        os.replace(tmp, self.path)

    @classmethod
    def load(cls, path: Path) -> Journal:
        """Read a journal; ValueError (one line) when it is not one of ours."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: unreadable journal: {exc}") from exc
        if not isinstance(data, dict) or data.get("version") != JOURNAL_VERSION:
            version = data.get("version") if isinstance(data, dict) else None
            raise ValueError(f"{path}: not a vsperf journal of version {JOURNAL_VERSION} (version {version!r})")
        try:
            return cls(str(data["run_id"]), root=path.parent.parent,
                       owner=Owner(int(data["owner_pid"]), int(data["owner_start_ticks"])),
                       entries=[Entry.from_dict(e) for e in data.get("entries", [])])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: malformed journal: {exc}") from exc


def leftover_journals(root: Path = DEFAULT_STATE_ROOT) -> tuple[list[Journal], list[str]]:
    """Journals of runs whose vsperf process is gone (killed before it cleaned up), and one line
    per file that could not be read (left alone: not ours to judge)."""
    found: list[Journal] = []
    problems: list[str] = []
    if not root.is_dir():
        return found, problems
    for path in sorted(root.glob(f"*/{JOURNAL_FILE}")):
        try:
            journal = Journal.load(path)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        if not journal.owner.alive:
            found.append(journal)
    return found, problems
