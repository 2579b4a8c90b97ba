"""The testbeds of a run: testbed files and pool files, each read and validated before any host
is contacted; every mistake one line naming the file and the entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from vsperf.errors import ConfigError
from vsperf.pool.poolfile import candidates

TESTBED = """
hosts:
  dut: {{address: 198.18.0.2}}
  tgen: {{address: 198.18.0.6}}
dut_host: dut
trafficgen_host: tgen
ports:
  - dut: {{interface: {dut}}}
    trafficgen: {{interface: ens2f0}}
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_testbeds_and_pools_in_order_each_once(tmp_path: Path) -> None:
    one = write(tmp_path / "one.yaml", TESTBED.format(dut="ens1f0"))
    write(tmp_path / "racks" / "r1.yaml", TESTBED.format(dut="ens3f0"))
    write(tmp_path / "racks" / "r2.yaml", TESTBED.format(dut="ens4f0"))
    pool = write(tmp_path / "racks" / "pool.yaml", "testbeds: [r1.yaml, r2.yaml]\n")
    found = candidates([str(one), str(pool)])
    assert [(c.path.name, c.named_by) for c in found] == [("one.yaml", "--testbed"), ("r1.yaml", f"pool {pool}"),
                                                          ("r2.yaml", f"pool {pool}")]
    assert found[2].testbed.cables[0].dut.interface == "ens4f0"
    assert found[1].path == tmp_path / "racks" / "r1.yaml"  # relative to the pool file


@pytest.mark.parametrize(("pool", "message"), [
    ("testbeds: r1.yaml\n", r"^pool .*pool\.yaml: testbeds: expected a list of a string, got str 'r1\.yaml' "
                            r"\(a pool file lists testbed "
                            r"files: testbeds: \[FILE, \.\.\.\]\)$"),
    ("testbeds: []\n", r"^pool .*pool\.yaml: testbeds: "),
    ("testbeds: [r1.yaml]\nname: x\n", r"^pool .*pool\.yaml: unknown key 'name' \(valid keys: testbeds\)"),
    ("testbeds: [r9.yaml]\n", r"^pool .*pool\.yaml: testbeds\[0\]: no testbed file .*r9\.yaml \(a pool names testbed "
                              r"files relative to itself\)$"),
    ("testbeds: [r1.yaml, r1.yaml]\n", r"testbeds\[1\]: testbed .*r1\.yaml is given twice \(first by pool "),
    ("testbeds: [pool.yaml]\n", r"testbeds\[0\]: .*pool\.yaml is a pool; a pool lists testbed files, not pools$"),
    ("testbeds: [bad.yaml]\n", r"^testbed .*bad\.yaml: dut_host: missing$"),
    ("- r1.yaml\n", r"^testbed .*pool\.yaml: expected a mapping: a testbed \(keys hosts, dut_host, trafficgen_host, "
                    r"ports\) or a pool \(testbeds: \[FILE, \.\.\.\]\)$"),
])
def test_a_pool_file_that_is_not_one(tmp_path: Path, pool: str, message: str) -> None:
    write(tmp_path / "r1.yaml", TESTBED.format(dut="ens3f0"))
    write(tmp_path / "bad.yaml", TESTBED.format(dut="ens3f0").replace("dut_host: dut\n", ""))
    path = write(tmp_path / "pool.yaml", pool)
    with pytest.raises(ConfigError, match=message) as info:
        candidates([str(path)])
    assert "\n" not in str(info.value)


def test_the_same_testbed_given_twice_and_a_missing_file(tmp_path: Path) -> None:
    one = write(tmp_path / "one.yaml", TESTBED.format(dut="ens1f0"))
    with pytest.raises(ConfigError, match=r"^--testbed .*one\.yaml: testbed .*one\.yaml is given twice "
                                          r"\(first by --testbed\); name each testbed once$"):
        candidates([str(one), str(tmp_path / "." / "one.yaml")])
    with pytest.raises(ConfigError, match=r"testbed .*nope\.yaml: no such file"):
        candidates([str(tmp_path / "nope.yaml")])
