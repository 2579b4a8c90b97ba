"""VSPERF's jumbo frames, read once into the test's plan: with VSWITCH_JUMBO_FRAMES_ENABLED, every
port the switch adds (the deployment's, and TestSteps' add_phy_port and add_vport) asks for the IP
MTU VSWITCH_JUMBO_FRAMES_SIZE, as VSPERF's OvsDpdkVhost did with OVS's mtu_request on its dpdk and
vhost-user ports; a test whose frames need more gets theirs (vsperf.deploy.deployment.mtu_for).

The schema (vsperf.config.schema_lab) reads VSPERF's strings ('True', as upstream's integration
tests write it) and bounds the size to OVS-DPDK's range; this reads a plain mapping the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vsperf.config.schema_lab import MAX_JUMBO_MTU_BYTES, MIN_JUMBO_MTU_BYTES
from vsperf.errors import ConfigError

JUMBO_ENABLED = "VSWITCH_JUMBO_FRAMES_ENABLED"
JUMBO_SIZE = "VSWITCH_JUMBO_FRAMES_SIZE"
_TRUE, _FALSE = ("true", "yes"), ("false", "no")


def jumbo_mtu_bytes(settings: Mapping[str, Any]) -> int | None:
    """VSWITCH_JUMBO_FRAMES_SIZE when VSWITCH_JUMBO_FRAMES_ENABLED, None when disabled (or unset);
    ConfigError naming the setting for a value that is neither."""
    enabled = settings.get(JUMBO_ENABLED, False)
    if isinstance(enabled, str) and enabled.strip().lower() in (*_TRUE, *_FALSE):
        enabled = enabled.strip().lower() in _TRUE
    if not isinstance(enabled, bool):
        raise ConfigError(f"{JUMBO_ENABLED}: expected true or false, got {enabled!r}")
    if not enabled:
        return None
    size = settings.get(JUMBO_SIZE)
    if isinstance(size, bool) or not isinstance(size, int) or not MIN_JUMBO_MTU_BYTES <= size <= MAX_JUMBO_MTU_BYTES:
        raise ConfigError(f"{JUMBO_SIZE}: expected an IP MTU of {MIN_JUMBO_MTU_BYTES} to {MAX_JUMBO_MTU_BYTES} "
                          f"bytes, got {size!r}")
    return size
