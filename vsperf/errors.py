"""Typed exceptions. Only the CLI turns them into exit codes.

`UserError` and its subclasses are problems the user can fix (bad configuration, unknown
names, missing root or packages): the CLI prints their one-line message and exits with 2.
Other `VsperfError`s are failures of a test (a component died, the generator failed): the
runner marks the test failed and moves on; the run exits with 1.
"""


class VsperfError(Exception):
    """Base of every error vsperf raises on purpose."""


class UserError(VsperfError):
    """A problem the user caused and can fix; the message names the problem and the fix."""


class ConfigError(UserError):
    """Invalid configuration: unknown setting, wrong type, malformed YAML, bad test case."""


class UnknownNameError(ConfigError):
    """An unknown test, backend or deployment name."""


class PrerequisiteError(UserError):
    """Not root, a missing package or kernel feature: found before anything is created."""


class DeploymentError(VsperfError):
    """A vswitch, VNF or port could not be deployed, or died while in use."""


class SearchError(VsperfError):
    """A search ended without an answer it stands behind: no load met a goal (no passing rate),
    or its trial guard stopped it. The test fails with one line saying why; the trials it ran
    are in the results."""


class TrafficGenError(VsperfError):
    """The traffic generator failed to run a trial."""


class CommandError(VsperfError):
    """An external command failed."""

    def __init__(self, argv: list[str], returncode: int, stderr: str) -> None:
        self.argv = argv
        self.returncode = returncode
        self.stderr = stderr
        tail = stderr.strip().splitlines()[-1] if stderr.strip() else "no output"
        super().__init__(f"command failed (exit {returncode}): {' '.join(argv)}: {tail}")
