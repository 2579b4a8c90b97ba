"""What a run has created, recorded in memory and on disk as it is created.

Each run keeps `<state root>/<run_id>/state.json` (default root /run/vsperf) listing the
vsperf process that owns it (PID + start time) and every namespace, link, process and directory
the run created, in creation order. Teardown removes them in reverse order; when vsperf is
killed with SIGKILL, the file survives and `vsperf.lab.leftovers.cleanup_leftovers` finds the
run (its owner PID is gone, or belongs to another process now) and removes what it lists.

The file is rewritten atomically (write + rename) after every change, so it is complete at any
moment a kill can happen.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from vsperf.lab.names import check_run_id
from vsperf.lab.process import process_start_time

DEFAULT_STATE_ROOT = Path("/run/vsperf")
STATE_FILE = "state.json"
STATE_VERSION = 1

ResourceKind = Literal["netns", "link", "process", "dir"]


@dataclass(frozen=True)
class Resource:
    """One thing a run created.

    - netns: `name` is the namespace name.
    - link: `name` is the interface name, `netns` its namespace (None: the root namespace).
    - process: `name` a label ("ovs-vswitchd"), `pid` and `start_time` (seconds since the
      epoch, as psutil reports it) identify it even after its PID is reused.
    - dir: `name` is an absolute path, removed recursively.
    """

    kind: ResourceKind
    name: str
    netns: str | None = None
    pid: int = 0
    start_time: float = 0.0

    def describe(self) -> str:
        """A short human description, for logs and cleanup reports."""
        if self.kind == "process":
            return f"process {self.name} (pid {self.pid})"
        if self.kind == "link":
            return f"link {self.name}" + (f" in {self.netns}" if self.netns else "")
        return f"{self.kind} {self.name}"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Resource:
        kind = data["kind"]
        if kind not in ("netns", "link", "process", "dir"):
            raise ValueError(f"unknown resource kind {kind!r}")
        return cls(
            kind=kind,
            name=str(data["name"]),
            netns=data.get("netns"),
            pid=int(data.get("pid", 0)),
            start_time=float(data.get("start_time", 0.0)),
        )


@dataclass(frozen=True)
class Owner:
    """The vsperf process that owns a run's resources."""

    pid: int
    start_time: float

    @classmethod
    def current(cls) -> Owner:
        pid = os.getpid()
        return cls(pid, process_start_time(pid) or 0.0)


class RunState:
    """The resources of one run, mirrored to its state file after every change."""

    def __init__(
        self,
        run_id: str,
        *,
        root: Path = DEFAULT_STATE_ROOT,
        owner: Owner | None = None,
        resources: list[Resource] | None = None,
    ) -> None:
        self.run_id = check_run_id(run_id)
        self.root = root
        self.owner = owner or Owner.current()
        self._resources: list[Resource] = list(resources or [])

    @property
    def directory(self) -> Path:
        return self.root / self.run_id

    @property
    def path(self) -> Path:
        return self.directory / STATE_FILE

    def resources(self) -> list[Resource]:
        """Every recorded resource, in creation order."""
        return list(self._resources)

    def __iter__(self) -> Iterator[Resource]:
        return iter(list(self._resources))

    def __len__(self) -> int:
        return len(self._resources)

    def add(self, resource: Resource) -> Resource:
        """Record `resource` (call right after creating it) and save."""
        if resource not in self._resources:
            self._resources.append(resource)
            self.save()
        return resource

    def discard(self, resource: Resource) -> None:
        """Forget `resource` (call after removing it) and save."""
        if resource in self._resources:
            self._resources.remove(resource)
            self.save()

    def as_dict(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "run_id": self.run_id,
            "owner_pid": self.owner.pid,
            "owner_start_time": self.owner.start_time,
            "resources": [asdict(r) for r in self._resources],
        }

    def save(self) -> None:
        """Write the state file atomically."""
        self.directory.mkdir(parents=True, exist_ok=True)
        tmp = self.directory / f".{STATE_FILE}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(self.as_dict(), indent=1), encoding="utf-8")
        os.replace(tmp, self.path)

    def close(self) -> None:
        """Remove the state directory once every resource is gone."""
        if self._resources:
            self.save()
            return
        shutil.rmtree(self.directory, ignore_errors=True)

    @classmethod
    def load(cls, path: Path) -> RunState:
        """Read a state file; raise ValueError when it is not one of ours."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: unreadable state file: {exc}") from exc
        if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
            raise ValueError(f"{path}: not a vsperf state file of version {STATE_VERSION}")
        return cls(
            str(data["run_id"]),
            root=path.parent.parent,
            owner=Owner(int(data["owner_pid"]), float(data["owner_start_time"])),
            resources=[Resource.from_dict(r) for r in data.get("resources", [])],
        )
