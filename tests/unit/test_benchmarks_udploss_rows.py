"""UDP message-loss rows: validation, the settings they come from, loss and rates."""

from __future__ import annotations

import pytest

from vsperf.benchmarks.udploss.rows import UdpLossResult, UdpLossRow, rows_from_settings, wire_bytes
from vsperf.errors import ConfigError

SCALARS = {
    "UDPLOSS_ROWS": [], "UDPLOSS_SENDER_SCHED": "FIFO", "UDPLOSS_SENDER_PRIORITY": 10,
    "UDPLOSS_RECEIVER_SCHED": "OTHER", "UDPLOSS_RECEIVER_PRIORITY": 0, "UDPLOSS_RCVBUF_BYTES": 4194304,
    "UDPLOSS_PAYLOAD_BYTES": 1472, "UDPLOSS_MESSAGES": 5000, "UDPLOSS_CONNECTED": True, "UDPLOSS_METHOD": "epoll",
}


def test_wire_bytes_adds_the_seeds_42_bytes_and_a_header_per_fragment() -> None:
    assert wire_bytes(64) == 106  # 64 + UDP 8 + IPv4 20 + Ethernet 14
    assert wire_bytes(1472) == 1514  # a full 1500-byte packet
    assert wire_bytes(1500) == 1500 + 8 + 2 * 34  # two IPv4 fragments at MTU 1500
    assert wire_bytes(1500, mtu_bytes=9000) == 1542
    assert wire_bytes(0) == 42


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sender_sched": "FIFO", "sender_priority": 0}, "sender priority must be 1..99 with scheduler FIFO"),
        ({"receiver_sched": "OTHER", "receiver_priority": 5}, "receiver priority must be 0 with scheduler OTHER"),
        ({"sender_sched": "DEADLINE"}, "sender scheduler 'DEADLINE'"),
        ({"payload_bytes": 1501}, "payload 1501 B is outside 0..1500"),
        ({"method": "poll"}, "receive method 'poll'"),
        ({"messages": 0}, "messages must be >= 1"),
    ],
)
def test_invalid_rows_are_refused_with_the_reason(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        UdpLossRow(**kwargs)  # type: ignore[arg-type]


def test_rows_come_from_the_scalar_settings_when_no_sweep_is_given() -> None:
    (row,) = rows_from_settings(SCALARS)
    assert row == UdpLossRow("FIFO", 10, "OTHER", 0, 4194304, 1472, 5000, True, "epoll")


def test_a_sweep_gives_one_row_per_entry_in_order() -> None:
    entries = [UdpLossRow(payload_bytes=p).as_dict() for p in (64, 1500)]
    rows = rows_from_settings({**SCALARS, "UDPLOSS_ROWS": entries})
    assert [r.payload_bytes for r in rows] == [64, 1500]
    assert rows[0].sender_sched == "OTHER"  # the row's own values, not the scalars


def test_loss_and_rates_are_computed_from_the_counts() -> None:
    result = UdpLossResult(
        row=UdpLossRow(payload_bytes=64, messages=1000), sent_messages=1000, received_messages=990,
        reordered_messages=0, send_retries=3, sender_elapsed_s=0.5, receiver_elapsed_s=0.25,
        rcvbuf_effective_bytes=524288,
    )
    assert result.loss_percent == pytest.approx(1.0)
    assert result.data_mbps == pytest.approx(990 * 64 * 8 / 0.25 / 1e6)
    assert result.wire_mbps == pytest.approx(990 * 106 * 8 / 0.25 / 1e6)
    assert result.tx_messages_per_s == pytest.approx(2000.0)
    flat = result.as_dict()
    assert flat["payload_bytes"] == 64 and flat["loss_percent"] == pytest.approx(1.0)


def test_nothing_received_gives_full_loss_and_zero_rates() -> None:
    result = UdpLossResult(UdpLossRow(), 100, 0, 0, 0, 0.1, 0.0, 0)
    assert result.loss_percent == 100.0 and result.data_mbps == 0.0 and result.wire_mbps == 0.0
