"""What a run changed on a testbed's ports, on disk before each change, for the next run.

Like the lab's state files (vsperf.lab.state): `<root>/testbed-<run_id>.json` on the controller
names the vsperf process that owns it (PID + start time) and, per host, each port's state, each
PCI device's binding and each kernel setting (hugepages) as they were before vsperf touched them,
each link it created there (the DUT's bridge, a VNF's veths), each network namespace (a
VNF's) and each qdisc it adds to a port (the trafgen generator's pacer and clsact, with the
port's root qdisc before: `vsperf.testbed.qdisc`), recorded before it is created.
Teardown restores them and removes the file; after a SIGKILL the file survives and
`leftover_journals` finds it (its owner is gone), so the next run restores the ports through the
hosts' executors.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vsperf.lab.process import is_same_process, process_start_time
from vsperf.testbed.pci import PciBinding
from vsperf.testbed.ports import PortState

JOURNAL_VERSION = 1
PREFIX = "testbed-"


@dataclass
class PortJournal:
    """The original state of every port and device a run changes, saved at each addition."""

    path: Path
    owner_pid: int = field(default_factory=os.getpid)
    owner_start_time: float = 0.0
    ports: list[tuple[str, PortState]] = field(default_factory=list)  # (host, state)
    bindings: list[tuple[str, PciBinding]] = field(default_factory=list)  # (host, binding)
    knobs: list[tuple[str, str, str]] = field(default_factory=list)  # (host, sysfs/procfs path, value)
    links: list[tuple[str, str]] = field(default_factory=list)  # (host, interface vsperf creates there)
    # (host, PID, start time in clock ticks, label): daemons vsperf started there (a private OVS)
    processes: list[tuple[str, int, int, str]] = field(default_factory=list)
    namespaces: list[tuple[str, str]] = field(default_factory=list)  # (host, namespace vsperf creates there)
    # (host, interface, qdisc vsperf adds: "root" (a pacer) or "clsact", the port's root qdisc before it)
    qdiscs: list[tuple[str, str, str, str]] = field(default_factory=list)

    @classmethod
    def create(cls, root: Path, run_id: str) -> PortJournal:
        """A new, empty journal of this process for run `run_id` (written on first record)."""
        pid = os.getpid()
        return cls(root / f"{PREFIX}{run_id}.json", pid, process_start_time(pid) or 0.0)

    def record_port(self, host: str, state: PortState) -> None:
        """Remember `state` (call before changing the port); the first record of a port wins."""
        if not any(h == host and s.interface == state.interface for h, s in self.ports):
            self.ports.append((host, state))
            self.save()

    def record_binding(self, host: str, binding: PciBinding) -> None:
        """Remember `binding` (call before re-binding the device); the first record wins."""
        if not any(h == host and b.pci == binding.pci for h, b in self.bindings):
            self.bindings.append((host, binding))
            self.save()

    def record_knob(self, host: str, path: str, value: str) -> None:
        """Remember a kernel setting's value (e.g. nr_hugepages) before changing it."""
        if not any(h == host and p == path for h, p, _ in self.knobs):
            self.knobs.append((host, path, value))
            self.save()

    def _remember(self, entries: list[tuple[str, str]], host: str, name: str) -> None:
        if (host, name) not in entries:
            entries.append((host, name))
            self.save()

    def _forget(self, entries: list[tuple[str, str]], host: str, name: str) -> None:
        entries[:] = [(h, n) for h, n in entries if (h, n) != (host, name)]
        self.save()

    def record_link(self, host: str, name: str) -> None:
        """Remember an interface vsperf is about to create on `host` (deleted at restore)."""
        self._remember(self.links, host, name)

    def forget_link(self, host: str, name: str) -> None:
        """Drop a created interface once it has been deleted."""
        self._forget(self.links, host, name)

    def record_netns(self, host: str, name: str) -> None:
        """Remember a network namespace vsperf is about to create on `host` (deleted at restore)."""
        self._remember(self.namespaces, host, name)

    def forget_netns(self, host: str, name: str) -> None:
        """Drop a created namespace once it has been deleted."""
        self._forget(self.namespaces, host, name)

    def record_process(self, host: str, pid: int, start_ticks: int, label: str) -> None:
        """Remember a daemon vsperf started on `host` (stopped at restore, by PID and start time)."""
        if not any(h == host and p == pid for h, p, _, _ in self.processes):
            self.processes.append((host, pid, start_ticks, label))
            self.save()

    def forget_process(self, host: str, pid: int) -> None:
        """Drop a daemon once it has stopped."""
        self.processes = [e for e in self.processes if not (e[0] == host and e[1] == pid)]
        self.save()

    def record_qdisc(self, host: str, interface: str, qdisc: str, root_before: str) -> None:
        """Remember a qdisc vsperf is about to add to `interface` of `host` ("root": its pacer,
        replacing root qdisc `root_before`; "clsact"): deleted at restore."""
        if not any(e[:3] == (host, interface, qdisc) for e in self.qdiscs):
            self.qdiscs.append((host, interface, qdisc, root_before))
            self.save()

    def forget_qdisc(self, host: str, interface: str, qdisc: str) -> None:
        """Drop a qdisc once it has been deleted."""
        self.qdiscs = [e for e in self.qdiscs if e[:3] != (host, interface, qdisc)]
        self.save()

    def forget_knob(self, host: str, path: str) -> None:
        """Drop a kernel setting once it has been put back."""
        self.knobs = [(h, p, v) for h, p, v in self.knobs if not (h == host and p == path)]
        self.save()

    def forget_port(self, host: str, interface: str) -> None:
        """Drop a port once it has been restored."""
        self.ports = [(h, s) for h, s in self.ports if not (h == host and s.interface == interface)]
        self.save()

    def forget_binding(self, host: str, pci: str) -> None:
        """Drop a device once it has been given back."""
        self.bindings = [(h, b) for h, b in self.bindings if not (h == host and b.pci == pci)]
        self.save()

    def as_dict(self) -> dict[str, Any]:
        return {
            "version": JOURNAL_VERSION,
            "owner_pid": self.owner_pid,
            "owner_start_time": self.owner_start_time,
            "ports": [{"host": h, **s.as_dict()} for h, s in self.ports],
            "bindings": [{"host": h, **asdict(b)} for h, b in self.bindings],
            "knobs": [{"host": h, "path": p, "value": v} for h, p, v in self.knobs],
            "links": [{"host": h, "name": n} for h, n in self.links],
            "processes": [{"host": h, "pid": p, "start_ticks": t, "label": label}
                          for h, p, t, label in self.processes],
            "namespaces": [{"host": h, "name": n} for h, n in self.namespaces],
            "qdiscs": [{"host": h, "interface": i, "qdisc": q, "root_before": r} for h, i, q, r in self.qdiscs],
        }

    def save(self) -> None:
        """Write atomically; an empty journal is removed."""
        if not (self.ports or self.bindings or self.knobs or self.links or self.processes or self.namespaces
                or self.qdiscs):
            self.path.unlink(missing_ok=True)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.as_dict(), indent=1), encoding="utf-8")
        os.replace(tmp, self.path)

    @classmethod
    def load(cls, path: Path) -> PortJournal:
        """Read a journal; ValueError when it is not one of ours."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("version") != JOURNAL_VERSION:
                raise ValueError(f"{path}: not a testbed journal of version {JOURNAL_VERSION}")
            ports = [(p.pop("host"), PortState.from_dict(p)) for p in data["ports"]]
            bindings = [(b.pop("host"), PciBinding(**b)) for b in data["bindings"]]
            knobs = [(str(k["host"]), str(k["path"]), str(k["value"])) for k in data["knobs"]]
            links = [(str(x["host"]), str(x["name"])) for x in data.get("links", [])]  # absent before links
            processes = [(str(x["host"]), int(x["pid"]), int(x["start_ticks"]), str(x["label"]))
                         for x in data.get("processes", [])]
            namespaces = [(str(x["host"]), str(x["name"])) for x in data.get("namespaces", [])]
            qdiscs = [(str(x["host"]), str(x["interface"]), str(x["qdisc"]), str(x["root_before"]))
                      for x in data.get("qdiscs", [])]  # absent before qdiscs were journaled
            return cls(path, int(data["owner_pid"]), float(data["owner_start_time"]), ports, bindings, knobs,
                       links, processes, namespaces, qdiscs)
        except (OSError, json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{path}: unreadable testbed journal: {exc}") from exc

    @property
    def run_id(self) -> str:
        """The run that wrote it (from its file name)."""
        return self.path.stem.removeprefix(PREFIX)

    @property
    def owner_alive(self) -> bool:
        """True while the run that wrote it still runs."""
        return is_same_process(self.owner_pid, self.owner_start_time)


def leftover_journals(root: Path) -> list[PortJournal]:
    """Journals of runs whose vsperf process is gone (killed before it restored its ports)."""
    found = []
    for path in sorted(root.glob(f"{PREFIX}*.json")):
        try:
            journal = PortJournal.load(path)
        except ValueError:
            continue  # not ours to judge
        if not journal.owner_alive:
            found.append(journal)
    return found
