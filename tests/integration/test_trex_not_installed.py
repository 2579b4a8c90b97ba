"""`--trafficgen trex` where TRex is not installed: one line naming what to install, exit 2, nothing
deployed (root: the local lab's own checks come first). Runs whether TRex is installed or not."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import vsperf
from conftest import lab_skip_reason

pytestmark = pytest.mark.root


def test_missing_trex_is_one_line_before_anything_is_deployed(tmp_path: Path) -> None:
    reason = lab_skip_reason({"ip": "iproute2"})
    if reason:
        pytest.skip(reason)
    proc = vsperf("phy2phy_tput", "--trafficgen", "Trex", "--vswitch", "linux-bridge", "--results-dir",
                  str(tmp_path / "run"), "--test-params", f"TRAFFICGEN_TREX_BASE_DIR={tmp_path / 'no-trex'}")
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert "TRex is not installed" in lines[0] and "TRAFFICGEN_TREX_BASE_DIR" in lines[0]
    assert "docs/trafficgens.rst" in lines[0] and "Traceback" not in proc.stderr
    assert not (tmp_path / "run").exists()
