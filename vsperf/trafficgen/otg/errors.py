"""What vsgen's OTG server refuses (vsperf.trafficgen.otg.translate, .tunnel)."""

from __future__ import annotations


class Unsupported(ValueError):
    """The request is valid OTG but asks for what vsgen cannot do; the message says what."""
