"""Names of what a run creates on a host: tagged with the run id, within IFNAMSIZ, recognisable,
and found again (only them) by the next run after a kill."""

from __future__ import annotations

import subprocess
from pathlib import Path, PurePosixPath

import pytest

from vsperf.host.names import (
    IFNAME_MAX_CHARS,
    RunNames,
    VnfNames,
    check_run_id,
    is_tagged,
    run_dirs_removal,
)
from vsperf.host.workdir import new_run_id


def test_every_name_carries_the_run_id_and_fits_ifnamsiz() -> None:
    names = RunNames("a1b2c3")
    vnf = names.vnf(9)
    made = [
        names.switch_netns, names.gen_netns(1), names.gen_if(1), names.phy_if(1), vnf.netns, *vnf.switch_ifs,
        *vnf.inner_ifs, vnf.bridge, names.bridge(3), names.dpdk_prefix("pg9"),
    ]
    assert names.tag == "vspa1b2c3"
    assert all(n.startswith("vspa1b2c3") for n in made)
    assert all(len(n) <= IFNAME_MAX_CHARS for n in made)
    assert len(set(made)) == len(made) - 1  # only a generator namespace and its link share a name
    assert all(names.owns(n) for n in made if not n.endswith("pg9"))  # interfaces and namespaces


def test_layout_is_the_documented_one() -> None:
    names = RunNames("0f0f0f")
    assert names.switch_netns == "vsp0f0f0fs"
    assert names.gen_netns(0) == "vsp0f0f0fg0" == names.gen_if(0)
    assert names.phy_if(1) == "vsp0f0f0fp1"
    assert names.vnf(2) == VnfNames("vsp0f0f0fv2", ("vsp0f0f0fv2s0", "vsp0f0f0fv2s1"),
                                    ("vsp0f0f0fv2i0", "vsp0f0f0fv2i1"), "vsp0f0f0fv2b")
    assert names.bridge() == "vsp0f0f0fb0"
    assert names.dpdk_prefix("o") == "vsp0f0f0fo"
    assert names.run_dir("logs") == PurePosixPath("/tmp/vsperf-0f0f0f-logs")


def test_too_long_names_are_refused() -> None:
    names = RunNames("12345678")
    with pytest.raises(ValueError, match="'vsp12345678v10s0' is longer than 15"):
        names.vnf(10)


@pytest.mark.parametrize("bad", ["", "ABC", "a-b", "123456789", "x y", "../x"])
def test_run_ids_that_cannot_be_in_names_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="must be 1-8 lower-case letters or digits"):
        check_run_id(bad)
    with pytest.raises(ValueError):
        RunNames(bad)


def test_generated_run_ids_are_accepted_and_differ() -> None:
    ids = {new_run_id() for _ in range(20)}
    assert all(check_run_id(i) == i and len(i) == 6 for i in ids) and len(ids) == 20


@pytest.mark.parametrize("bad", ["", "-x", "a/b", "..", "a..b", "x y"])
def test_run_directory_names_are_single_safe_components(bad: str) -> None:
    with pytest.raises(ValueError, match="bad directory name"):
        RunNames("abc123").run_dir(bad)


@pytest.mark.parametrize("bad", ["", "a", "4o", "O", "p-0", "p 0", "../o"])
def test_dpdk_roles_start_with_a_letter_no_run_id_can_end_with(bad: str) -> None:
    with pytest.raises(ValueError, match="bad DPDK role"):
        RunNames("abc123").dpdk_prefix(bad)


def test_ownership_and_tag_recognition() -> None:
    names = RunNames("abc123")
    assert names.owns("vspabc123g0")
    assert not names.owns("vspabc124g0")
    assert not names.owns("vspabc123")
    assert not names.owns("vspabc123x0")  # not a role letter
    assert is_tagged("vspabc123s")
    assert not is_tagged("dpxns0")
    assert not is_tagged("vspzzzg0")  # not a hex run id


@pytest.mark.parametrize("path, owned", [
    ("/tmp/vsperf-abc123-logs", True),
    ("/tmp/vsperf-abc123-files/", True),
    ("/tmp/vsperf-abc1234-logs", False),  # another run whose id starts with this one's
    ("/tmp/vsperf-abc123", False),  # the controller's own scratch directory (vsperf.host.workdir)
    ("/tmp/sub/vsperf-abc123-logs", False),
    ("/var/run/dpdk/vspabc123o", True),
    ("/var/run/dpdk/vspabc123pg1", True),
    ("/var/run/dpdk/vspabc1234o", False),  # run abc1234's OVS-DPDK
    ("/var/run/dpdk/vspabc123", False),
    ("/var/run/dpdk/rte", False),
    ("/run/dpdk/vspabc123o", False),
    ("/", False),
])
def test_owned_paths_are_the_runs_directories_only(path: str, owned: bool) -> None:
    assert RunNames("abc123").owns_path(path) is owned


def test_a_killed_runs_host_directories_are_found_by_its_run_id(tmp_path: Path) -> None:
    names = RunNames("abc123")
    mine = [tmp_path / "vsperf-abc123-vsgen", tmp_path / names.dpdk_prefix("o"), tmp_path / names.dpdk_prefix("pg0")]
    other = [tmp_path / "vsperf-abc124-vsgen", tmp_path / "vspabc1234o", tmp_path / "vspabc123",
             tmp_path / "vsperf-abc1234-vsgen", tmp_path / "vspabc124o"]
    for d in mine + other:
        d.mkdir()
        (d / "vsgen-engine").write_text("x")
    argv = run_dirs_removal("abc123")
    assert argv[:3] == ["find", "/tmp", "/var/run/dpdk"]  # its files, its DPDK runtime directories
    subprocess.run([argv[0], str(tmp_path), *argv[3:]], check=True)  # the same command, on tmp_path
    assert not any(d.exists() for d in mine) and all(d.exists() for d in other)
    with pytest.raises(ValueError):
        run_dirs_removal("*")
