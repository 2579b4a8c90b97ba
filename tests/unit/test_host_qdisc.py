"""The generator ports' qdiscs: a port whose root qdisc is not a kernel default (or that has
someone's ingress qdisc) is refused, each qdisc vsperf adds is journaled before it is added, and
release (this run's, or the next run's after a SIGKILL) deletes what is still there."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import pytest

from vsperf.errors import CommandError
from vsperf.executor import Executor
from vsperf.host.host import Host
from vsperf.host.journal import Journal
from vsperf.host.names import RunNames
from vsperf.host.ports import PortError
from vsperf.host.qdisc import (
    ADDED_QDISCS,
    DEFAULT_ROOT_QDISCS,
    check_port_qdiscs,
    read_qdiscs,
    record_qdisc,
    remove_added_qdisc,
    root_kind,
)
from vsperf.host.release import release

NOQUEUE = {"kind": "noqueue", "handle": "0:", "root": True, "refcnt": 2, "options": {}}
TBF = {"kind": "tbf", "handle": "824d:", "root": True, "refcnt": 3, "options": {"rate": 125000}}
CLSACT = {"kind": "clsact", "handle": "ffff:", "parent": "ffff:fff1", "options": {}}


class TcHost:
    """A host's `tc`: qdiscs per interface, as `tc -j qdisc show` prints them; deletions applied.
    `links` lists the interfaces that exist (`ip link show`); `broken` makes tc fail."""

    host = "gen"

    def __init__(self, qdiscs: dict[str, list[dict[str, Any]]], links: tuple[str, ...] = ()) -> None:
        self.qdiscs = qdiscs
        self.links = set(links) | set(qdiscs)
        self.broken = False
        self.runs: list[list[str]] = []
        self.netns: list[str | None] = []

    def run(self, argv: Sequence[str], *, netns: str | None = None, **_: Any) -> subprocess.CompletedProcess[str]:
        argv = list(argv)
        self.runs.append(argv)
        self.netns.append(netns)
        if argv[0] == "tc" and self.broken:
            return subprocess.CompletedProcess(argv, 1, "", "Cannot find device")
        if argv[:4] == ["tc", "-j", "qdisc", "show"]:
            return subprocess.CompletedProcess(argv, 0, json.dumps(self.qdiscs.get(argv[-1], [])), "")
        if argv[:3] == ["tc", "qdisc", "del"]:
            dev, which = argv[4], argv[5]
            self.qdiscs[dev] = [q for q in self.qdiscs[dev] if not (q.get("root") if which == "root"
                                                                     else q["kind"] == which)]
            return subprocess.CompletedProcess(argv, 0, "", "")
        if argv[0] == "ip" and argv[-3:-1] == ["show", "dev"]:
            return subprocess.CompletedProcess(argv, 0 if argv[-1] in self.links else 1, "", "")
        raise AssertionError(f"unexpected command {argv}")


def _executor(host: TcHost) -> Executor:
    return cast(Executor, host)


@pytest.mark.parametrize("root", [k for k in DEFAULT_ROOT_QDISCS if k])
def test_a_port_with_a_kernel_default_root_qdisc_is_taken(root: str) -> None:
    host = TcHost({"b0": [{**NOQUEUE, "kind": root}]})
    assert check_port_qdiscs(_executor(host), "b0") == root


def test_a_port_without_any_qdisc_is_taken() -> None:
    assert check_port_qdiscs(_executor(TcHost({})), "b0") == ""


def test_a_port_with_a_configured_root_qdisc_is_refused_in_one_line() -> None:
    host = TcHost({"b0": [{**TBF, "kind": "htb"}]})
    with pytest.raises(PortError) as info:
        check_port_qdiscs(_executor(host), "b0")
    message = str(info.value)
    assert message.startswith("host gen: interface b0 has root qdisc htb") and "\n" not in message
    assert "(tc qdisc del dev b0 root)" in message
    assert host.runs == [["tc", "-j", "qdisc", "show", "dev", "b0"]]  # read only: nothing changed


@pytest.mark.parametrize("ingress", ["clsact", "ingress"])
def test_a_port_with_someones_ingress_qdisc_is_refused(ingress: str) -> None:
    with pytest.raises(PortError, match=rf"^host gen: interface b0 has a {ingress} qdisc .*\(tc qdisc del dev b0 "
                                        rf"{ingress}\)"):
        check_port_qdiscs(_executor(TcHost({"b0": [NOQUEUE, {**CLSACT, "kind": ingress}]})), "b0")


def test_reading_qdiscs() -> None:
    host = TcHost({"b0": [NOQUEUE, CLSACT]})
    assert read_qdiscs(_executor(host), "b0", "ns1") == [NOQUEUE, CLSACT] and host.netns == ["ns1"]
    assert root_kind([CLSACT, TBF]) == "tbf" and root_kind([CLSACT]) == ""
    host.broken = True
    with pytest.raises(CommandError, match="tc -j qdisc show dev b0: Cannot find device"):
        read_qdiscs(_executor(host), "b0")


def test_what_vsperf_added_is_deleted_and_a_default_left_alone() -> None:
    host = TcHost({"b0": [TBF, CLSACT], "b1": [NOQUEUE]})
    assert remove_added_qdisc(_executor(host), "b0", "clsact") == "clsact qdisc deleted"
    assert remove_added_qdisc(_executor(host), "b0", "root") == "root qdisc tbf deleted"
    assert host.qdiscs["b0"] == []
    assert remove_added_qdisc(_executor(host), "b1", "root") == ""  # no pacer there: the default stays
    assert remove_added_qdisc(_executor(host), "b1", "clsact") == ""
    assert host.qdiscs["b1"] == [NOQUEUE]
    assert [r[:3] for r in host.runs].count(["tc", "qdisc", "del"]) == 2


def test_a_qdisc_in_a_namespace_is_deleted_there() -> None:
    host = TcHost({"vspabc123g0": [TBF]})
    assert remove_added_qdisc(_executor(host), "vspabc123g0", "root", "vspabc123g0") == "root qdisc tbf deleted"
    assert list(zip(map(tuple, host.runs), host.netns, strict=True)) == [
        (("tc", "-j", "qdisc", "show", "dev", "vspabc123g0"), "vspabc123g0"),
        (("tc", "qdisc", "del", "dev", "vspabc123g0", "root"), "vspabc123g0")]


def test_an_interface_that_is_gone_took_its_qdiscs_with_it() -> None:
    gone = TcHost({})
    gone.broken = True
    assert remove_added_qdisc(_executor(gone), "b0", "root", "ns1") == ""
    assert gone.runs[-1] == ["ip", "-n", "ns1", "link", "show", "dev", "b0"]
    there = TcHost({}, links=("b0",))
    there.broken = True  # tc fails on an interface that exists: an error, not silence
    with pytest.raises(CommandError):
        remove_added_qdisc(_executor(there), "b0", "clsact")


def _host(tmp_path: Path, tc: TcHost) -> Host:
    return Host("gen", _executor(tc), RunNames("abc123"), Journal("abc123", root=tmp_path))


def test_qdiscs_are_journaled_before_they_are_added_with_the_root_found_then(tmp_path: Path) -> None:
    tc = TcHost({"b0": [{**NOQUEUE, "kind": "fq_codel"}]})
    host = _host(tmp_path, tc)
    record_qdisc(host, "b0", "clsact")
    record_qdisc(host, "b0", "clsact")  # once
    tc.qdiscs["b0"] = [TBF]  # the pacer is there now: the recorded root stays the one before
    record_qdisc(host, "b0", "root")
    assert host.journal is not None
    saved = json.loads(host.journal.path.read_text())["entries"]
    assert [(e["kind"], e["host"], e["name"], e["state"]) for e in saved] == [
        ("qdisc", "gen", "b0", {"qdisc": "clsact", "root_before": "fq_codel"}),
        ("qdisc", "gen", "b0", {"qdisc": "root", "root_before": "tbf"})]
    tc.broken = True
    record_qdisc(host, "vspabc123g0", "root", netns="vspabc123g0")
    last = host.journal.entries()[-1]
    assert (last.netns, dict(last.state)) == ("vspabc123g0", {"qdisc": "root", "root_before": "unknown"})


def test_vsperf_records_only_the_qdiscs_it_adds(tmp_path: Path) -> None:
    host = _host(tmp_path, TcHost({"b0": [NOQUEUE]}))
    with pytest.raises(ValueError, match="vsperf adds only root, clsact"):
        record_qdisc(host, "b0", "htb")  # type: ignore[arg-type]
    assert host.journal is not None and len(host.journal) == 0
    assert ADDED_QDISCS == ("root", "clsact")


def test_release_deletes_the_journaled_qdiscs_still_there(tmp_path: Path) -> None:
    tc = TcHost({"b0": [NOQUEUE], "b1": [NOQUEUE]})
    host = _host(tmp_path, tc)
    record_qdisc(host, "b0", "root")
    record_qdisc(host, "b0", "clsact")
    record_qdisc(host, "b1", "clsact")  # the agent removed it already
    tc.qdiscs["b0"] = [TBF, CLSACT]  # what the generator added
    assert host.journal is not None
    done = release(host.journal, {"gen": _executor(tc)})
    assert done.done == ["host gen: b0: clsact qdisc deleted", "host gen: b0: root qdisc tbf deleted"]
    assert tc.qdiscs == {"b0": [], "b1": [NOQUEUE]} and len(host.journal) == 0
    assert not host.journal.path.exists()
