"""`vsperf testbed status` and `vsperf testbed unlock --force` on testbeds of this machine (one
lock directory each): the holder, the lease's age by the host's clock, who waits, what dead
runs left; a forced unlock logged on the host, what the holder left kept for the next run."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from vsperf.cli.main import main
from vsperf.executor import LocalExecutor
from vsperf.pool import state as st
from vsperf.pool.hostlock import LockPlace, change, read_state
from vsperf.pool.poolfile import candidates
from vsperf.pool.state import Holder
from vsperf.pool.status import force_unlock, status_of
from vsperf.pool.testbedlock import LockSite, TestbedLock

TESTBED = """
hosts:
  local: {{lock_dir: {locks}}}
dut_host: local
trafficgen_host: local
ports:
  - dut: {{interface: zz0a0}}
    trafficgen: {{interface: zz0b0}}
"""


def holder(run_id: str) -> Holder:
    return Holder(run_id, f"t-{run_id}", "bob", "ctl2", 777, "2031-01-01T08:00:00+00:00", "lab.yaml",
                  ("phy2phy_tput", "back2back"))


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    path = tmp_path / "lab.yaml"
    path.write_text(TESTBED.format(locks=tmp_path / "locks"))
    return path


def lock(lab: Path, run_id: str) -> TestbedLock:
    site = LockSite("local", LockPlace(LocalExecutor(), str(lab.parent / "locks")), ("dut", "port:zz0b0"), True)
    return TestbedLock(str(lab), (site,), holder(run_id), 60)


def test_free_busy_waiting_and_expired(lab: Path) -> None:
    [cand] = candidates([str(lab)])
    assert status_of(cand) == ("free", [])
    holding = lock(lab, "aaa")
    assert holding.take() is None
    lock(lab, "bbb").queue()
    word, lines = status_of(cand)
    assert word == "busy"
    assert lines[0] == ("  host local: dut, port:zz0b0 held by run aaa (bob@ctl2, pid 777, started 2031-01-01 "
                        "08:00:00 by its controller's clock), tests phy2phy_tput, back2back; lease renewed 0 s ago "
                        "(lease 60 s)")
    assert lines[1].startswith("  waiting: run bbb (bob@ctl2, pid 777") and len(lines) == 2
    place = holding.sites[0].place  # the host's clock passes the lease: the holder died
    change(place, lambda s, c: (replace(s, holds=tuple(replace(h, lease=replace(h.lease, renewed_s=c.uptime_s - 90))
                                                          for h in s.holds)), None))
    word, lines = status_of(cand)
    assert word == "free"
    assert "lease EXPIRED, renewed 90 s ago (lease 60 s): the next run takes it over" in lines[0]


def test_unlock_force_removes_the_lock_logs_it_and_keeps_what_the_holder_left(lab: Path) -> None:
    [cand] = candidates([str(lab)])
    holding = lock(lab, "aaa")
    assert holding.take() is None
    holding.renew({"local": [{"kind": "dir", "host": "local", "name": "/tmp/vsperf-aaa-files"}]})
    done = force_unlock(cand)
    assert done == [f"testbed {lab}: host local: removed the lock of run aaa (bob@ctl2, pid 777, started 2031-01-01 "
                    f"08:00:00 by its controller's clock) (logged in {lab.parent}/locks/unlock.log)"]
    state, _ = read_state(holding.sites[0].place)
    assert state.holds == () and [o.holder.run_id for o in state.leftovers] == ["aaa"]
    logged = (lab.parent / "locks" / "unlock.log").read_text()
    assert f"vsperf testbed unlock --force {lab}: removed the lock of run aaa" in logged
    assert state.log and state.log[-1] in logged
    word, lines = status_of(cand)
    assert word == "free" and any("1 things left by dead run aaa" in line for line in lines)
    assert any("last forced unlock: " in line for line in lines)
    assert force_unlock(cand) == []
    assert st.leftovers_on(state, ("dut",))


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out = capsys.readouterr()
    return int(info.value.code or 0), out.out, out.err


def test_the_cli(lab: Path, capsys: pytest.CaptureFixture[str]) -> None:
    holding = lock(lab, "aaa")
    assert holding.take() is None
    code, out, _ = run_cli(capsys, "testbed", "status", str(lab))
    assert code == 0 and out.startswith(f"testbed {lab}: busy\n  host local: dut, port:zz0b0 held by run aaa")
    code, _, err = run_cli(capsys, "testbed", "unlock", str(lab))
    assert code == 2 and err.strip() == (f"vsperf: error: vsperf testbed unlock takes the testbed away from whoever "
                                         f"holds it; add --force if you know its run is gone (see vsperf testbed "
                                         f"status {lab})")
    assert read_state(holding.sites[0].place)[0].holds  # untouched
    code, out, _ = run_cli(capsys, "testbed", "unlock", str(lab), "--force")
    assert code == 0 and "removed the lock of run aaa" in out
    code, out, _ = run_cli(capsys, "testbed", "status", str(lab))
    assert code == 0 and out.startswith(f"testbed {lab}: free")
    code, _, err = run_cli(capsys, "testbed", "status", str(lab.parent / "nope.yaml"))
    assert code == 2 and "nope.yaml: no such file" in err and err.count("\n") == 1
