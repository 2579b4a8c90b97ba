"""vsperf.backends: every built-in backend registered in its family, under the names users type."""

from __future__ import annotations

from vsperf.backends import BUILTIN, build_registries, empty_registries


def test_every_builtin_backend_is_registered_in_its_family() -> None:
    regs = build_registries()
    for family, cls in BUILTIN:
        assert regs.families()[family].get(cls.NAME).cls is cls


def test_the_names_users_type() -> None:
    regs = build_registries()
    assert sorted(e.name for e in regs.trafficgens) == ["dummy", "otg", "pktgen", "trafgen", "trex", "vsgen"]
    assert sorted(e.name for e in regs.vswitches) == ["linux-bridge", "none", "ovs", "ovs-dpdk"]
    assert sorted(e.name for e in regs.collectors) == ["cpu", "ifstats", "pidstat"]
    assert regs.loadgens.resolve("stress-ng") == "stress-ng"


def test_registries_start_empty_and_take_a_custom_builtin_set() -> None:
    assert all(list(registry) == [] for registry in empty_registries().families().values())
    only_dummy = build_registries(lambda regs: regs.trafficgens.register(BUILTIN[0][1]))
    assert [e.name for e in only_dummy.trafficgens] == ["dummy"] and list(only_dummy.vswitches) == []
