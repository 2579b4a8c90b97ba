"""Testbeds: hosts over SSH or this machine, the DUT's ports and the generator ports they are
cabled to (a YAML file), checked before use and restored after."""

from vsperf.testbed.file import load_testbed, parse_testbed
from vsperf.testbed.model import Cable, DutPort, GenPortSpec, Testbed, TestbedHost
from vsperf.testbed.session import TestbedSession

__all__ = ["Cable", "DutPort", "GenPortSpec", "Testbed", "TestbedHost", "TestbedSession", "load_testbed",
           "parse_testbed"]
