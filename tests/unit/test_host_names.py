"""Names of lab resources: tagged with the run id, within IFNAMSIZ, recognisable."""

import pytest

from vsperf.host.workdir import new_run_id
from vsperf.host.names import IFNAME_MAX_CHARS, RunNames, check_run_id, is_tagged


def test_every_name_carries_the_run_id_and_fits_ifnamsiz() -> None:
    names = RunNames("a1b2c3")
    made = [
        names.switch_netns, names.gen_netns(1), names.gen_if(1), names.phy_if(1), names.vnf_netns(9),
        names.vnf_switch_if(9, 1), names.vnf_inner_if(9, 1), names.vnf_bridge(9), names.bridge(3),
    ]
    assert all(n.startswith("vspa1b2c3") for n in made)
    assert all(len(n) <= IFNAME_MAX_CHARS for n in made)
    assert len(set(made)) == len(made) - 1  # only a generator namespace and its link share a name


def test_layout_is_the_documented_one() -> None:
    names = RunNames("0f0f0f")
    assert names.switch_netns == "vsp0f0f0fs"
    assert names.gen_netns(0) == "vsp0f0f0fg0"
    assert names.phy_if(1) == "vsp0f0f0fp1"
    assert names.vnf_switch_if(2, 0) == "vsp0f0f0fv2s0"
    assert names.vnf_inner_if(2, 1) == "vsp0f0f0fv2i1"
    assert names.bridge() == "vsp0f0f0fb0"


def test_too_long_names_are_refused() -> None:
    names = RunNames("12345678")
    with pytest.raises(ValueError, match="longer than 15"):
        names.vnf_switch_if(10, 10)


@pytest.mark.parametrize("bad", ["", "ABC", "a-b", "123456789", "x y"])
def test_run_ids_that_cannot_be_in_names_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        check_run_id(bad)


def test_generated_run_ids_are_accepted() -> None:
    assert check_run_id(new_run_id())


def test_ownership_and_tag_recognition() -> None:
    names = RunNames("abc123")
    assert names.owns("vspabc123g0")
    assert not names.owns("vspabc124g0")
    assert not names.owns("vspabc123")
    assert is_tagged("vspabc123s")
    assert not is_tagged("dpxns0")
    assert not is_tagged("vspzzzg0")  # not a hex run id
