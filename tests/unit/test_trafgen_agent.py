"""The trafgen receive agent's pure parts: netlink messages, /proc/net/dev, its command lines."""

from __future__ import annotations

import struct

import pytest

from vsperf.trafficgen.trafgen import agent

PROC_NET_DEV = "\n".join([
    "Inter-|   Receive                                                |  Transmit",
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls "
    "carrier compressed",
    "    lo:     100       2    0    0    0     0          0         0      100       2    0    0    0     0 0 0",
    "v9t1b0: 6400000  100000    0    0    0     0          0         0  3200000   50000    0    7    0     0 0 0",
])

def _attrs(data: bytes) -> dict[int, bytes]:
    found: dict[int, bytes] = {}
    while data:
        length, kind = struct.unpack_from("=HH", data)
        found[kind] = data[4:length]
        data = data[(length + 3) & ~3:]
    return found


def test_tx_frames_are_sent_plus_dropped_of_the_named_interface() -> None:
    assert agent.tx_frames(PROC_NET_DEV, "v9t1b0") == 50_007
    assert agent.tx_frames(PROC_NET_DEV, "lo") == 2
    with pytest.raises(OSError, match="no interface v9t1b1"):
        agent.tx_frames(PROC_NET_DEV, "v9t1b1")


def test_rtattr_is_padded_to_four_bytes() -> None:
    assert agent.rtattr(1, b"bpf\0") == struct.pack("=HH", 8, 1) + b"bpf\0"
    assert agent.rtattr(1, b"clsact\0") == struct.pack("=HH", 11, 1) + b"clsact\0" + b"\0"


def test_the_filter_request_is_tc_filter_add_ingress_bpf_direct_action() -> None:
    msg = agent.filter_message(7, 42)
    length, msg_type, flags, _seq, _pid = struct.unpack_from("=IHHII", msg)
    assert length == len(msg) and msg_type == agent.RTM_NEWTFILTER
    assert flags == agent.NLM_F_REQUEST | agent.NLM_F_ACK | agent.NLM_F_CREATE | agent.NLM_F_EXCL
    _family, _p1, _p2, ifindex, handle, parent, info = struct.unpack_from("=BBHiIII", msg, 16)
    assert (ifindex, handle, parent) == (7, 1, 0xFFFFFFF2)
    assert info == (1 << 16) | 0x0300  # prio 1, ETH_P_ALL in network order
    attrs = _attrs(msg[36:])
    assert attrs[agent.TCA_KIND] == b"bpf\0"
    options = _attrs(attrs[agent.TCA_OPTIONS])
    assert struct.unpack("=I", options[agent.TCA_BPF_FD]) == (42,)
    assert struct.unpack("=I", options[agent.TCA_BPF_FLAGS]) == (agent.TCA_BPF_FLAG_ACT_DIRECT,)
    assert options[agent.TCA_BPF_NAME] == b"vsperf_rx\0"


def test_clsact_and_root_qdisc_requests() -> None:
    add = agent.clsact_message(agent.RTM_NEWQDISC, 3)
    _len, msg_type, flags, _seq, _pid = struct.unpack_from("=IHHII", add)
    assert msg_type == agent.RTM_NEWQDISC and flags & agent.NLM_F_CREATE
    assert struct.unpack_from("=iII", add, 20) == (3, 0xFFFF0000, 0xFFFFFFF1)
    assert _attrs(add[36:])[agent.TCA_KIND] == b"clsact\0"
    delete = agent.root_qdisc_deletion(3)
    assert struct.unpack_from("=H", delete, 4) == (agent.RTM_DELQDISC,)
    assert struct.unpack_from("=iII", delete, 20) == (3, 0, 0xFFFFFFFF)


def test_ack_error_reads_the_kernels_errno() -> None:
    ack = struct.pack("=IHHII", 36, agent.NLMSG_ERROR, 0, 1, 0) + struct.pack("=i", -2) + b"\0" * 16
    assert agent.ack_error(ack) == 2
    ok = struct.pack("=IHHII", 36, agent.NLMSG_ERROR, 0, 1, 0) + struct.pack("=i", 0) + b"\0" * 16
    assert agent.ack_error(ok) == 0
    with pytest.raises(OSError, match="unexpected netlink reply type 16"):
        agent.ack_error(struct.pack("=IHHII", 16, 16, 0, 1, 0))


def test_commands_answer_ok_or_one_error_line_and_close_removes_what_it_added() -> None:
    sent: list[bytes] = []

    def send(request: bytes) -> int:
        sent.append(request)
        return 0

    ag = agent.Agent(send)
    assert ag.handle("paced lo\n") == "ok"
    assert ag.handle("frobnicate\n") == "error frobnicate: unknown command 'frobnicate'"
    assert ag.handle("read 99\n") == "error read: 99"
    assert ag.handle("attach 99 lo 00\n") == "error attach: 'no map 99'"
    assert ag.handle("paced no-such-if0\n").startswith("error paced: ")
    assert ag.handle("\n") == "error : empty command"
    ag.close()
    # the pacer it was told about is deleted at the end (root qdisc of lo)
    assert [struct.unpack_from("=HIxxxxI", r, 4)[0] for r in sent] == [agent.RTM_DELQDISC]
    assert ag.pacers == set()


def test_a_refused_request_is_an_error_answer() -> None:
    ag = agent.Agent(lambda _request: 1)  # EPERM
    ag.clsacts.add("lo")
    assert ag.handle("detach lo\n").startswith("error detach: ")
    ag.close()
