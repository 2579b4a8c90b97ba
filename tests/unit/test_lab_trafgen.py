"""The trafgen backend's decisions that need no root: sender CPUs, expected VLAN, argument checks."""

from pathlib import Path
from typing import Any

import pytest
from settings_util import make_settings

from vsperf.host.workdir import RunContext
from vsperf.deploy.base import GenPort
from vsperf.errors import TrafficGenError
from vsperf.executor import LocalExecutor
from vsperf.trafficgen.cpus import pmd_cpus
from vsperf.traffic import Traffic, Vlan
from vsperf.trafficgen.trafgen.backend import TrafgenTrafficGenerator
from vsperf.trafficgen.trafgen.rxcount import NO_VLAN


def _gen(**settings: Any) -> TrafgenTrafficGenerator:
    ctx = RunContext("abc123", Path("/tmp"), Path("/tmp"), LocalExecutor())
    return TrafgenTrafficGenerator(make_settings(settings), ctx)


def test_explicit_cpus_repeat_over_ports() -> None:
    gen = _gen(TRAFGEN_CPUS=[3])
    assert gen._cpu_for(0) == 3 and gen._cpu_for(1) == 3


def test_senders_avoid_pmd_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.sched_getaffinity", lambda _pid: {0, 1, 2, 3})
    gen = _gen(VSWITCH="ovs", VSWITCH_PMD_CPU_MASK="0x2")
    assert [gen._cpu_for(i) for i in range(3)] == [0, 2, 3]
    bridge = _gen(VSWITCH="linux-bridge", VSWITCH_PMD_CPU_MASK="0x2")
    assert [bridge._cpu_for(i) for i in range(2)] == [0, 1]


def test_masks() -> None:
    assert pmd_cpus(make_settings(VSWITCH="ovs", VSWITCH_PMD_CPU_MASK="0x6")) == {1, 2}
    assert pmd_cpus(make_settings(VSWITCH="linux-bridge", VSWITCH_PMD_CPU_MASK="0x6")) == set()


def test_expected_vlan() -> None:
    gen = _gen()
    plain = GenPort(None, "g1", "02:00:00:00:00:01", "198.18.1.1")
    pushed = GenPort(None, "g1", "02:00:00:00:00:01", "198.18.1.1", rx_vlan_id=100)
    assert gen._expected_vlan(Traffic(), plain) == NO_VLAN
    assert gen._expected_vlan(Traffic(vlan=Vlan(enabled=True, id=9)), plain) == 9
    assert gen._expected_vlan(Traffic(vlan=Vlan(enabled=True, id=9)), pushed) == 100


def test_bad_requests() -> None:
    gen = _gen()
    with pytest.raises(TrafficGenError, match="positive"):
        gen.trial(Traffic(), 0, 1)
    with pytest.raises(TrafficGenError, match="before start"):
        gen.trial(Traffic(), 100, 1)
    with pytest.raises(TrafficGenError, match="two generator ports"):
        gen.start([])
