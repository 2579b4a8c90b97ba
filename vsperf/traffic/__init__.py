"""The traffic a test sends (`model`), the generator ports it leaves and enters by (`ports`), and
its streams between them (`streams`)."""

from vsperf.traffic.model import L2, L3, L4, StreamType, Traffic, TrafficType, Vlan

__all__ = ["L2", "L3", "L4", "StreamType", "Traffic", "TrafficType", "Vlan"]
