"""vsperf.cli.entry: the entry point imports only the command it runs."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest

from vsperf.cli.entry import SUBCOMMANDS, command_for

PROBE = """
import sys
from vsperf.cli.entry import command_for
command_for({args!r})
print(sorted(m for m in sys.modules if m.startswith("vsperf.run") or m == "vsperf.cli.main"))
"""


def _imported_run_modules(args: list[str]) -> str:
    out = subprocess.run([sys.executable, "-c", PROBE.format(args=args)], capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.mark.parametrize("name", ["trend", "history", "dashboard", "report", "compare"])
def test_a_store_or_report_command_does_not_import_the_run_pipeline(name: str) -> None:
    assert _imported_run_modules([name, "--help"]) == "[]"


def test_the_run_command_is_the_default() -> None:
    assert "vsperf.run.runner" in _imported_run_modules(["phy2phy_tput"])
    command, prog, rest = command_for(["phy2phy_tput", "--trafficgen", "dummy"])
    assert (command.name, prog, rest) == ("run", "vsperf", ["phy2phy_tput", "--trafficgen", "dummy"])


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_every_subcommand_resolves_to_a_click_command(name: str) -> None:
    command, prog, rest = command_for([name, "--x"])
    assert isinstance(command, click.Command)
    assert (prog, rest) == (f"vsperf {name}", ["--x"])
