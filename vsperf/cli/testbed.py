"""`vsperf testbed status FILE...` and `vsperf testbed unlock FILE --force`: who holds a shared
testbed, and taking a lock away from a run a person knows is gone (docs/testbed.rst, "Sharing a
testbed"). FILE is a testbed file or a pool file; a bad one is one line and exit 2."""

from __future__ import annotations

from pathlib import Path

import click

from vsperf.errors import UserError
from vsperf.pool.poolfile import candidates
from vsperf.pool.status import force_unlock, status_of
from vsperf.signals import stoppable

_CONTEXT = {"help_option_names": ["-h", "--help"]}


@click.group(name="testbed", context_settings=_CONTEXT)
def testbed_command() -> None:
    """Shared testbeds: who holds them, and unlocking one by hand."""


@testbed_command.command(name="status", context_settings=_CONTEXT)
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@stoppable
def status_command(files: tuple[Path, ...]) -> None:
    """Each testbed's holder, its lease's age (by the host's clock) and who waits for it."""
    for cand in candidates([str(f) for f in files]):
        word, lines = status_of(cand)
        click.echo(f"testbed {cand.path}: {word}")
        for line in lines:
            click.echo(line)


@testbed_command.command(name="unlock", context_settings=_CONTEXT)
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Required: you know that the holder is gone (or must go).")
@stoppable
def unlock_command(files: tuple[Path, ...], force: bool) -> None:
    """Remove the locks on a testbed (logged on its hosts); what their runs left stays for the
    next run to clean. A run whose lock is removed stops at its next renewal."""
    pool = candidates([str(f) for f in files])
    if not force:
        raise UserError(f"vsperf testbed unlock takes the testbed away from whoever holds it; add --force if you "
                        f"know its run is gone (see vsperf testbed status {' '.join(str(f) for f in files)})")
    for cand in pool:
        done = force_unlock(cand)
        for line in done:
            click.echo(line)
        if not done:
            click.echo(f"testbed {cand.path}: no lock to remove")
