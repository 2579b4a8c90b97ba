"""The testbed file: a complete file loads; each mistake is one line naming the file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from vsperf.errors import ConfigError
from vsperf.testbed.file import load_testbed

GOOD = """
hosts:
  dut: {address: 198.18.0.2, port: 2222, user: root, key_file: /k/id, known_hosts_file: /k/known}
  tgen: {address: 198.18.0.6}
  local: {}
dut_host: dut
trafficgen_host: tgen
ports:
  - dut: {interface: ens1f0}
    trafficgen: {interface: ens2f0}
  - dut: {pci: "3b:00.1", driver: vfio-pci}
    trafficgen: {location: "192.0.2.50;1;2"}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "lab.yaml"
    path.write_text(text)
    return path


def test_a_complete_file(tmp_path: Path) -> None:
    tb = load_testbed(write(tmp_path, GOOD))
    assert [h.name for h in tb.hosts] == ["dut", "tgen", "local"]
    dut = tb.dut.ssh
    assert dut is not None and (dut.address, dut.port, dut.user) == ("198.18.0.2", 2222, "root")
    assert dut.key_file == Path("/k/id") and dut.known_hosts_file == Path("/k/known")
    tgen = tb.trafficgen.ssh
    assert tgen is not None and tgen.port == 22 and tgen.key_file is None  # the agent's keys
    assert tgen.known_hosts_file == Path("~/.ssh/known_hosts").expanduser()
    assert tb.host("local").is_local
    first, second = tb.cables
    assert (first.dut.interface, first.dut.driver, first.trafficgen.interface) == ("ens1f0", "kernel", "ens2f0")
    assert (second.dut.pci, second.dut.driver, second.trafficgen.location) == ("0000:3b:00.1", "vfio-pci",
                                                                             "192.0.2.50;1;2")


@pytest.mark.parametrize(("change", "message"), [
    (("port: 2222", "port: 99999"), r"^testbed .*lab\.yaml: hosts\.dut\.port: .*1\.\.65535"),
    (("user: root,", "usr: root,"), r"hosts\.dut\.usr.*did you mean 'hosts\.dut\.user'"),
    (("dut_host: dut", "dut_host: dutt"), r"dut_host: no host 'dutt' under hosts \(hosts: dut, tgen, local\)"),
    (("trafficgen_host: tgen\n", ""), r"lab\.yaml: trafficgen_host: missing$"),
    (('pci: "3b:00.1"', 'pci: "3b:00"'), r"ports\[1\]\.dut\.pci: expected a PCI address"),
    (('pci: "3b:00.1", ', "interface: ens1f1, "), r"ports\[1\]\.dut\.pci: missing: driver vfio-pci binds a PCI device"),
    (("driver: vfio-pci", "driver: igb_uio"), r"ports\[1\]\.dut\.driver: expected one of 'kernel', 'vfio-pci'"),
    (("{location: ", "{interface: x, location: "), r"ports\[1\]\.trafficgen: give exactly one of"),
    (("local: {}", "local: {address: 1.2.3.4}"), r"hosts\.local: the host named 'local' is this machine"),
    (("tgen: {address: 198.18.0.6}", "tgen: {port: 22}"), r"hosts\.tgen\.address: missing"),
    (("local: {}", "local: {lock_dir: locks}"), r"hosts\.local\.lock_dir: expected an absolute path on the host"),
    (('{pci: "3b:00.1", driver: vfio-pci}', "{interface: ens1f0}"), r"ports\[1\]: dut ens1f0 is cabled twice"),
])
def test_each_mistake_is_one_line_naming_the_key(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    text = GOOD.replace(*change)
    assert text != GOOD
    with pytest.raises(ConfigError, match=message) as info:
        load_testbed(write(tmp_path, text))
    assert "\n" not in str(info.value)


def test_read_like_every_input_file(tmp_path: Path) -> None:
    """The shared strict loader (vsperf.inputs): YAML 1.2 scalars, no duplicate key, UTF-8, a
    regular file."""
    sexagesimal = GOOD.replace("port: 2222", "port: 37:02")
    assert sexagesimal != GOOD
    with pytest.raises(ConfigError, match=r"hosts\.dut\.port: expected an integer .*got str '37:02'"):
        load_testbed(write(tmp_path, sexagesimal))
    duplicate = r"lab\.yaml: malformed YAML at line \d+, column \d+: duplicate key 'dut_host'"
    with pytest.raises(ConfigError, match=duplicate):
        load_testbed(write(tmp_path, GOOD + "dut_host: dut\n"))
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(GOOD.replace("ens1f0", "ens1f\u00e9").encode("latin-1"))
    with pytest.raises(ConfigError, match=r"latin1\.yaml: not UTF-8 text \(byte 0xe9 on line \d+\); save it as UTF-8"):
        load_testbed(bad)
    with pytest.raises(ConfigError, match=r"testbed /dev/null: is a character device, not a regular file"):
        load_testbed(Path("/dev/null"))


def test_unreadable_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"testbed .*nope\.yaml: no such file"):
        load_testbed(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match=r"lab\.yaml: malformed YAML at line \d, column \d+: "):
        load_testbed(write(tmp_path, "hosts:\n  - [\n"))
    with pytest.raises(ConfigError, match=r"lab\.yaml: expected a mapping with keys hosts, dut_host"):
        load_testbed(write(tmp_path, "- just a list\n"))


def test_lock_dir_is_the_hosts_own_and_defaults_to_run_vsperf_locks(tmp_path: Path) -> None:
    tb = load_testbed(write(tmp_path, GOOD.replace("local: {}", "local: {lock_dir: /srv/locks}").replace(
        "tgen: {address: 198.18.0.6}", "tgen: {address: 198.18.0.6, lock_dir: /run/tgen-locks}")))
    assert [h.lock_dir for h in tb.hosts] == ["/run/vsperf/locks", "/run/tgen-locks", "/srv/locks"]
