"""The qdiscs of a testbed's generator ports: checked before use, and what vsperf adds removed.

The trafgen generator (`vsperf.trafficgen.trafgen`) paces a port with a ``tbf`` root qdisc
(which replaces the port's root qdisc) and counts received frames with a tc program on a
``clsact`` qdisc. vsperf cannot rebuild a root qdisc someone configured (its classes, filters
and options), so a generator port whose root qdisc is not one the kernel sets up by itself is
refused before anything is created; deleting vsperf's pacer then gives the port back exactly
what it had (the kernel's default). A ``clsact`` or ``ingress`` qdisc already there (tc filters
someone attached) is refused too: the receive agent would replace it.

Each qdisc vsperf adds is recorded in the run's journal before it is added (`record_qdisc`);
`remove_added_qdisc` deletes it at the end of the run, and after a SIGKILL of vsperf the next
run does.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Literal

from vsperf.errors import CommandError
from vsperf.executor import Executor
from vsperf.host.host import Host
from vsperf.host.ports import PortError

log = logging.getLogger(__name__)

# Root qdiscs the kernel attaches by itself ("" : none shown, e.g. a port that is down).
DEFAULT_ROOT_QDISCS = ("", "noqueue", "pfifo_fast", "fq_codel", "mq")
# The qdiscs that hold tc filters at a port's ingress: vsperf's receive counter adds a clsact.
INGRESS_QDISCS = ("clsact", "ingress")
AddedQdisc = Literal["root", "clsact"]  # vsperf's pacer (the root qdisc), the receive counter's
ADDED_QDISCS: tuple[AddedQdisc, ...] = ("root", "clsact")


def read_qdiscs(executor: Executor, interface: str, netns: str | None = None) -> list[dict[str, Any]]:
    """`tc -j qdisc show dev INTERFACE` on the executor's host; CommandError when tc fails."""
    argv = ["tc", "-j", "qdisc", "show", "dev", interface]
    proc = executor.run(argv, netns=netns, check=False, timeout_s=10)
    if proc.returncode != 0:
        raise CommandError(argv, proc.returncode, proc.stderr)
    data = json.loads(proc.stdout or "[]")
    return [q for q in data if isinstance(q, dict)] if isinstance(data, list) else []


def root_kind(qdiscs: list[dict[str, Any]]) -> str:
    """The kind of the root qdisc among `qdiscs` ("" when none is shown)."""
    return next((str(q.get("kind", "")) for q in qdiscs if q.get("root")), "")


def check_port_qdiscs(executor: Executor, interface: str) -> str:
    """The generator port's root qdisc kind ("" : none), after refusing a port whose root qdisc
    is not a kernel default or that has an ingress qdisc (PortError: one line, with the fix)."""
    qdiscs = read_qdiscs(executor, interface)
    where = f"host {executor.host}: interface {interface}"
    root = root_kind(qdiscs)
    if root not in DEFAULT_ROOT_QDISCS:
        raise PortError(f"{where} has root qdisc {root}, which vsperf's pacer would replace and could not put "
                        f"back; remove it (tc qdisc del dev {interface} root) or pick another port")
    ingress = next((str(q["kind"]) for q in qdiscs if q.get("kind") in INGRESS_QDISCS), "")
    if ingress:
        raise PortError(f"{where} has a {ingress} qdisc (tc filters of someone else), which vsperf's receive "
                        f"counter would replace; remove it (tc qdisc del dev {interface} {ingress}) or pick "
                        f"another port")
    return root


def record_qdisc(host: Host, interface: str, qdisc: AddedQdisc, *, netns: str | None = None) -> None:
    """Record in the run's journal, before it is added, a qdisc on port `interface` of `host`
    ("root": a pacer that replaces the port's root qdisc; "clsact"), with the port's root qdisc
    as it is now: the end of the run, or the next run after a SIGKILL, deletes it."""
    if qdisc not in ADDED_QDISCS:  # release would forget any other kind without deleting it
        raise ValueError(f"qdisc {qdisc!r}: vsperf adds only {', '.join(ADDED_QDISCS)}")
    try:
        before = root_kind(read_qdiscs(host.executor, interface, netns))
    except CommandError:
        before = "unknown"
    host.record("qdisc", interface, netns=netns, state={"qdisc": qdisc, "root_before": before})


def remove_added_qdisc(executor: Executor, interface: str, qdisc: AddedQdisc, netns: str | None = None) -> str:
    """Delete a qdisc vsperf added to `interface` if it is still there; what was done ("": nothing).

    "root": the port's root qdisc, when it is not a kernel default (vsperf's pacer: its ports had
    a default, `check_port_qdiscs`); deleting it brings the kernel's default back. "clsact": the
    receive counter's, with its filter."""
    try:
        kinds = read_qdiscs(executor, interface, netns)
    except CommandError:
        if executor.run(["ip", *(("-n", netns) if netns else ()), "link", "show", "dev", interface],
                        check=False, timeout_s=10).returncode != 0:
            return ""  # the interface (or its namespace) is gone, and its qdiscs with it
        raise
    if qdisc == "root":
        root = root_kind(kinds)
        if root in DEFAULT_ROOT_QDISCS:
            return ""
        executor.run(["tc", "qdisc", "del", "dev", interface, "root"], netns=netns, timeout_s=10)
        return f"root qdisc {root} deleted"
    if not any(q.get("kind") == "clsact" for q in kinds):
        return ""
    executor.run(["tc", "qdisc", "del", "dev", interface, "clsact"], netns=netns, timeout_s=10)
    return "clsact qdisc deleted"
