"""The `vsperf` console entry point: it imports only the command it runs.

`vsperf trend --gate` in a CI job should not pay for importing the run pipeline (about a second
of CPU on a small machine): a subcommand's module is imported by name when it is the one asked
for, the run command otherwise. Only this module turns errors into exit codes: 0 every test ran,
1 a test failed or the run was interrupted, 2 a usage or configuration error (one line, no
traceback, nothing created).

A run that seems stuck can be asked where it is: `kill -USR1 PID` prints every thread's stack
to its standard error and the run goes on.
"""

from __future__ import annotations

import faulthandler
import importlib
import signal
import sys
from collections.abc import Sequence

import click

from vsperf.errors import UserError
from vsperf.signals import CommandStopped, settle, stop_reason, stop_signals_raise

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
RUN_COMMAND = ("vsperf.cli.main", "run_command")
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "report": ("vsperf.cli.results_commands", "report_command"),
    "compare": ("vsperf.cli.results_commands", "compare_command"),
    "otg-server": ("vsperf.trafficgen.otg.server_cli", "otg_server_command"),
    "guest-image": ("vsperf.vnf.qemu.image_cli", "guest_image_command"),
    "history": ("vsperf.cli.history", "history_command"),
    "trend": ("vsperf.cli.history", "trend_command"),
    "dashboard": ("vsperf.cli.history", "dashboard_command"),
    "testbed": ("vsperf.cli.testbed", "testbed_command"),
}


def error(message: str) -> int:
    """Print the one line of a usage or configuration error; its exit code."""
    click.echo(f"vsperf: error: {message}", err=True)
    return EXIT_USAGE


def command_for(args: Sequence[str]) -> tuple[click.Command, str, list[str]]:
    """The command `args` asks for (imported now), its program name and its own arguments."""
    if args and args[0] in SUBCOMMANDS:
        (module, name), prog_name, rest = SUBCOMMANDS[args[0]], f"vsperf {args[0]}", list(args[1:])
    else:
        (module, name), prog_name, rest = RUN_COMMAND, "vsperf", list(args)
    command = getattr(importlib.import_module(module), name)
    assert isinstance(command, click.Command), f"{module}.{name} is not a command"
    return command, prog_name, rest


def dispatch(command: click.Command, args: list[str], prog_name: str) -> int:
    """Run `command`; its exit code, having printed the one line a failure gets."""
    try:
        command.main(args=args, prog_name=prog_name, standalone_mode=False)
    except SystemExit as exc:  # the commands end with sys.exit(code)
        return exc.code if isinstance(exc.code, int) else EXIT_OK if exc.code is None else EXIT_FAILED
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.UsageError as exc:
        return error(f"{exc.format_message()} (see vsperf --help)")
    except click.Abort:  # click's form of Ctrl-C before the run started
        click.echo("vsperf: interrupted", err=True)
        return EXIT_FAILED
    except UserError as exc:
        return error(str(exc))
    except CommandStopped as exc:  # a signal or a lost output outside the runner's own handling
        click.echo(f"vsperf: interrupted: {exc}", err=True)
        return EXIT_FAILED
    except KeyboardInterrupt as exc:  # a subcommand that is not stoppable (otg-server, guest-image)
        click.echo(f"vsperf: interrupted: {stop_reason(exc)}", err=True)
        return EXIT_FAILED
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point (`argv` None: the process's own arguments). One signal path for the
    whole command (vsperf.signals); once its exit code is decided, a late signal (a second
    Ctrl-C) changes nothing: in the vsperf process, up to its exit; called with `argv` (tests),
    the caller's handlers come back."""
    args = list(sys.argv[1:] if argv is None else argv)
    if argv is None and hasattr(signal, "SIGUSR1"):  # the process's own: `kill -USR1` shows where it is
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    with stop_signals_raise():
        try:
            command, prog_name, rest = command_for(args)
            code = dispatch(command, rest, prog_name)
        except KeyboardInterrupt:  # a signal while a failure was being reported: that line is out
            code = EXIT_FAILED
        finally:
            settle(for_good=argv is None)
    sys.exit(code)
