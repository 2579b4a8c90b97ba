"""The generator ports' qdiscs on a testbed: a port whose root qdisc is not a kernel default (or
that has someone's ingress qdisc) is refused, each qdisc vsperf adds is journaled before it is
added, and restore (this run's, or the next run's after a SIGKILL) deletes what is still there."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import pytest

from vsperf.executor import Executor
from vsperf.testbed.journal import PortJournal
from vsperf.testbed.model import Testbed
from vsperf.host.ports import PortError
from vsperf.host.qdisc import DEFAULT_ROOT_QDISCS, check_port_qdiscs, remove_added_qdisc
from vsperf.testbed.session import TestbedSession

NOQUEUE = {"kind": "noqueue", "handle": "0:", "root": True, "refcnt": 2, "options": {}}
TBF = {"kind": "tbf", "handle": "824d:", "root": True, "refcnt": 3, "options": {"rate": 125000}}
CLSACT = {"kind": "clsact", "handle": "ffff:", "parent": "ffff:fff1", "options": {}}


class TcHost:
    """A host's `tc`: qdiscs per interface, as `tc -j qdisc show` prints them; deletions applied."""

    host = "gen"

    def __init__(self, qdiscs: dict[str, list[dict[str, Any]]]) -> None:
        self.qdiscs = qdiscs
        self.runs: list[list[str]] = []

    def run(self, argv: Sequence[str], **_: Any) -> subprocess.CompletedProcess[str]:
        argv = list(argv)
        self.runs.append(argv)
        if argv[:4] == ["tc", "-j", "qdisc", "show"]:
            return subprocess.CompletedProcess(argv, 0, json.dumps(self.qdiscs.get(argv[-1], [])), "")
        if argv[:3] == ["tc", "qdisc", "del"]:
            dev, which = argv[4], argv[5]
            self.qdiscs[dev] = [q for q in self.qdiscs[dev] if not (q.get("root") if which == "root"
                                                                     else q["kind"] == which)]
            return subprocess.CompletedProcess(argv, 0, "", "")
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


def test_a_port_with_someones_clsact_is_refused() -> None:
    with pytest.raises(PortError, match=r"^host gen: interface b0 has a clsact qdisc .*\(tc qdisc del dev b0 "
                                        r"clsact\)"):
        check_port_qdiscs(_executor(TcHost({"b0": [NOQUEUE, CLSACT]})), "b0")


def test_what_vsperf_added_is_deleted_and_a_default_left_alone() -> None:
    host = TcHost({"b0": [TBF, CLSACT], "b1": [NOQUEUE]})
    assert remove_added_qdisc(_executor(host), "b0", "clsact") == "clsact qdisc deleted"
    assert remove_added_qdisc(_executor(host), "b0", "root") == "root qdisc tbf deleted"
    assert host.qdiscs["b0"] == []
    assert remove_added_qdisc(_executor(host), "b1", "root") == ""  # no pacer there: the default stays
    assert remove_added_qdisc(_executor(host), "b1", "clsact") == ""
    assert host.qdiscs["b1"] == [NOQUEUE]
    assert [r[:3] for r in host.runs].count(["tc", "qdisc", "del"]) == 2


def test_qdiscs_are_journaled_and_an_older_journal_without_them_loads(tmp_path: Path) -> None:
    journal = PortJournal.create(tmp_path, "abc123")
    journal.record_qdisc("gen", "b0", "clsact", "noqueue")
    journal.record_qdisc("gen", "b0", "clsact", "noqueue")  # once
    journal.record_qdisc("gen", "b0", "root", "noqueue")
    saved = json.loads(journal.path.read_text())
    assert saved["qdiscs"] == [{"host": "gen", "interface": "b0", "qdisc": "clsact", "root_before": "noqueue"},
                               {"host": "gen", "interface": "b0", "qdisc": "root", "root_before": "noqueue"}]
    assert PortJournal.load(journal.path).qdiscs == journal.qdiscs
    journal.forget_qdisc("gen", "b0", "clsact")
    journal.forget_qdisc("gen", "b0", "root")
    assert not journal.path.exists()  # nothing left to restore
    journal.record_link("dut", "vspabc123b0")
    older = {k: v for k, v in journal.as_dict().items() if k != "qdiscs"}  # as vsperf wrote it before
    journal.path.write_text(json.dumps(older))
    loaded = PortJournal.load(journal.path)
    assert loaded.qdiscs == [] and loaded.links == [("dut", "vspabc123b0")]


def test_restore_deletes_the_journaled_qdiscs_still_there(tmp_path: Path) -> None:
    host = TcHost({"b0": [TBF, CLSACT], "b1": [NOQUEUE]})
    journal = PortJournal.create(tmp_path, "abc123")
    journal.record_qdisc("gen", "b0", "root", "noqueue")
    journal.record_qdisc("gen", "b0", "clsact", "noqueue")
    journal.record_qdisc("gen", "b1", "clsact", "noqueue")  # the agent removed it already
    done = TestbedSession._restore(journal, {"gen": _executor(host)})
    assert done == ["host gen: b0: root qdisc tbf deleted", "host gen: b0: clsact qdisc deleted"]
    assert host.qdiscs == {"b0": [], "b1": [NOQUEUE]} and journal.qdiscs == []
    assert not journal.path.exists()


def test_the_session_journals_a_qdisc_with_the_root_the_preflight_found(tmp_path: Path) -> None:
    session = TestbedSession(cast(Testbed, None), {}, PortJournal.create(tmp_path, "abc123"))
    session.root_qdiscs[("gen", "b0")] = "fq_codel"
    session.record_qdisc("gen", "b0", "root")
    assert session.journal.qdiscs == [("gen", "b0", "root", "fq_codel")]
    assert PortJournal.load(session.journal.path).qdiscs == session.journal.qdiscs  # on disk already
    with pytest.raises(ValueError, match="vsperf adds only root, clsact"):
        session.record_qdisc("gen", "b0", "htb")
