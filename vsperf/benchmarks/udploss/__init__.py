"""UDP message loss against scheduler, receive buffer, payload and connected mode (seeds/004).

Two C programs (csrc/, package data, built on first use): udp_msg_receiver counts messages,
udp_msg_sender sends them as fast as its socket takes them.
"""

from vsperf.benchmarks.udploss.measure import run_udp_loss
from vsperf.benchmarks.udploss.rows import UdpLossResult, UdpLossRow

__all__ = ["UdpLossResult", "UdpLossRow", "run_udp_loss"]
