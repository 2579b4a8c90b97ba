from abc import ABC, abstractmethod

import pytest

from vsperf.backends import build_registries
from vsperf.errors import ConfigError, UnknownNameError
from vsperf.registry import Registry


class Base(ABC):
    @abstractmethod
    def go(self) -> int: ...


class Good(Base):
    """A good backend."""

    NAME = "good"
    ALIASES = ("GoodOne",)

    def go(self) -> int:
        return 1


class Incomplete(Base):
    NAME = "incomplete"


def test_register_resolve_and_aliases() -> None:
    reg: Registry[Base] = Registry("thing", Base)
    reg.register(Good)
    assert reg.resolve("good") == "good"
    assert reg.resolve("GOODONE") == "good"
    assert reg.get("GoodOne").description == "A good backend."


def test_unknown_name_lists_valid_ones_and_suggests() -> None:
    reg: Registry[Base] = Registry("thing", Base)
    reg.register(Good)
    with pytest.raises(UnknownNameError, match=r"unknown thing 'goood' \(did you mean 'good'\?\); valid things: good"):
        reg.resolve("goood")


def test_backend_must_implement_the_interface() -> None:
    reg: Registry[Base] = Registry("thing", Base)
    with pytest.raises(ConfigError, match="does not implement go"):
        reg.register(Incomplete)
    class Stranger:
        NAME = "stranger"

    with pytest.raises(ConfigError, match="must subclass Base"):
        reg.register(Stranger)  # type: ignore[arg-type]


def test_builtin_backends_are_registered() -> None:
    regs = build_registries()
    assert "dummy" in regs.trafficgens.names()
    assert "trafgen" in regs.trafficgens.names()
    assert {"ovs", "ovs-dpdk", "linux-bridge", "none"} <= set(regs.vswitches.names())
    assert {"netns", "testpmd-vhost"} <= set(regs.vnfs.names())
    assert regs.vswitches.resolve("OvsDpdkVhost") == "ovs-dpdk"
    assert regs.loadgens.resolve("stress-ng") == "stress-ng"
