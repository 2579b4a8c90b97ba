"""VSPERF's --mode values besides normal.

- trafficgen: nothing deployed; the TRAFFIC setting is sent once at its l2 framesize (as VSPERF
  sends it) and its result written, also as VSPERF's `result.csv`;
- trafficgen-off: the tests' topologies are deployed and nothing is sent: vsperf holds until Enter
  (or SIGTERM) so the user can run traffic of their own, then tears everything down;
- trafficgen-pause: deployed, held the same way, then the tests' traffic is sent.

Waiting for the user is the CLI's job: the runner gets `hold_until_enter_or_sigterm` as a callback.
"""

from __future__ import annotations

import shutil
import signal
import sys
from pathlib import Path
from typing import Any

import click

from vsperf.catalog import TestCase
from vsperf.signals import Terminated, resume

MODES = ("normal", "trafficgen", "trafficgen-off", "trafficgen-pause")
# --mode -> the runner's hold ("off": deploy and hold, no traffic; "pause": hold, then traffic)
HOLDS = {"trafficgen-off": "off", "trafficgen-pause": "pause"}
TRAFFICGEN_TEST = "trafficgen"
VSPERF_RESULT_CSV = "result.csv"  # the file VSPERF's --mode trafficgen writes


def trafficgen_mode_test(settings: Any) -> TestCase:
    """The one 'test' of --mode trafficgen: the TRAFFIC setting at its l2 framesize."""
    return TestCase(
        name=TRAFFICGEN_TEST,
        deployment="p2p",  # traffic only: the lab joins the generator's ports back to back
        description="--mode trafficgen: the TRAFFIC setting sent once, nothing deployed",
        parameters={"TRAFFICGEN_PKT_SIZES": [settings["TRAFFIC"]["l2"]["framesize"]]},
    )


def write_trafficgen_csv(results_dir: Path) -> Path | None:
    """Copy the trafficgen test's CSV to VSPERF's result.csv (scripts read that name)."""
    found = sorted(results_dir.glob(f"result_*_{TRAFFICGEN_TEST}_*.csv"))
    if not found:
        return None
    target = results_dir / VSPERF_RESULT_CSV
    shutil.copyfile(found[0], target)
    return target


def hold_until_enter_or_sigterm(message: str) -> None:
    """Print `message` and wait for Enter on stdin, or SIGTERM when stdin is closed or not a
    terminal; Ctrl-C still interrupts the run. Runs inside the runner's stop_signals_raise, where
    SIGTERM raises Terminated: here that ends the wait, not the run."""
    click.echo(message, err=True)
    try:
        interactive = sys.stdin is not None and sys.stdin.isatty()
        if interactive:
            click.echo("Press Enter to continue (or send SIGTERM)...", err=True)
            sys.stdin.readline()
        else:
            click.echo("Send SIGTERM to continue...", err=True)
            while True:
                signal.pause()
    except Terminated:
        resume()  # this SIGTERM was for the wait: the next one stops the run (vsperf.signals)
        click.echo("vsperf: SIGTERM received: going on", err=True)
