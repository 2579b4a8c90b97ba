"""vsperf: RFC 2544 test orchestration for virtual switches."""

__version__ = "0.1.0"
