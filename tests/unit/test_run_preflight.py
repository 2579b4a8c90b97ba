"""Prerequisites are checked before anything exists, one line naming the fix."""

import os
from typing import Any

import pytest

from vsperf.backends import build_registries
from vsperf.config.loader import load_settings
from vsperf.errors import PrerequisiteError, UnknownNameError
from vsperf.deploy.preflight import check_prerequisites

REGS = build_registries()


def _check(deployment: str = "p2p", **overrides: Any) -> None:
    settings = {**load_settings(env={}), **overrides}
    check_prerequisites(settings=settings, registries=REGS, deployment=deployment)


def test_not_root_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(PrerequisiteError, match="vsperf needs root for the local lab: run as root, or use "
                                                "--trafficgen dummy"):
        _check()


def test_missing_ovs_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(PrerequisiteError, match="apt-get install"):
        _check()


def test_unknown_deployment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    with pytest.raises(UnknownNameError):
        _check("p2z")


@pytest.mark.skipif(os.geteuid() != 0, reason="the checks below run after the root check")
def test_pvpv_needs_streams_and_a_matching_switch() -> None:
    with pytest.raises(PrerequisiteError, match="multistream >= 2"):
        _check("pvpv")
    with pytest.raises(PrerequisiteError, match="linux-bridge cannot"):
        _check("pvpv", VSWITCH="linux-bridge", TRAFFIC={**load_settings(env={})["TRAFFIC"], "multistream": 2})


@pytest.mark.skipif(os.geteuid() != 0, reason="the checks below run after the root check")
def test_vm_only_loopbacks_are_refused() -> None:
    with pytest.raises(PrerequisiteError, match="needs a VM"):
        _check("pvp", GUEST_LOOPBACK=["l2fwd"])


@pytest.mark.skipif(os.geteuid() != 0, reason="the checks below run after the root check")
def test_hugepages_for_ovs_dpdk_are_a_testbed_setting() -> None:
    with pytest.raises(PrerequisiteError, match=r"^VSWITCH_DPDK_HUGEPAGES: the local lab runs OVS-DPDK without "
                                                r"hugepages \(--no-huge\); set it false, or run on a testbed"):
        _check(VSWITCH="ovs-dpdk", VSWITCH_DPDK_HUGEPAGES=True)
