"""One host's lock state (vsperf.pool.state) in one file on the host, read and changed atomically.

The state lives in `LOCK_DIR/state.NETNS` on the host (a tmpfs by default, /run/vsperf/locks: a
reboot frees every lock), NETNS being the inode of the network namespace the host's commands run
in: the ports a lock names are interfaces of that namespace, and hosts that are namespaces or
containers of one machine, sharing its /run, are so told apart (a real host has one file).
Reading it is one command that also reads the host's clock (its boot id and /proc/uptime); no
lock is needed, since a change replaces the file by a rename. A change is a compare-and-swap:
the controller computes the new state from the one it read and sends it with the version it
read; on the host, under `flock` on `LOCK_DIR/.flock`, the file is replaced only if its version
is still that one, otherwise the host answers with the state as it is now and the controller
decides again. So every decision is made with the host's own clock, and two controllers
deciding at once never both win. Every write gives the state a new random version (one of 2**62),
not the read one plus one: an empty state removes its file (version 0), so a counter would start
again, and a controller that stalled between its read and its write could find "its" version
back on a different state. Each command is a constant `sh` script whose inputs are its arguments
(never spliced into it), run through the host's executor and logged in commands.log like every
other command.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from vsperf.errors import CommandError, UserError, VsperfError
from vsperf.executor import Executor
from vsperf.pool.state import HostClock, LockState, StateError

log = logging.getLogger(__name__)

T = TypeVar("T")

# Reads the host's clock, then each lock directory's state: per directory, four lines (the
# directory, "BOOT_ID UPTIME", the version, the JSON). A missing state is version 0.
READ_SCRIPT = r"""
read -r b < /proc/sys/kernel/random/boot_id || exit 70
read -r u _ < /proc/uptime || exit 70
n=$(readlink /proc/self/ns/net) || exit 70
n=${n#*[}; n=${n%]}
for d do
  if [ -e "$d" ] && [ ! -d "$d" ]; then echo "$d: not a directory" >&2; exit 78; fi
  v=0 s=
  if [ -e "$d/state.$n" ]; then { read -r v && read -r s; } < "$d/state.$n" || exit 77
  elif [ -d "$d" ] && ! { [ -r "$d" ] && [ -x "$d" ]; }; then echo "$d: permission denied" >&2; exit 77; fi
  printf '%s\n%s %s\n%s\n%s\n' "$d" "$b" "$u" "$v" "$s"
done
"""
# Replaces DIR's state with the three lines on stdin if its version is still VERSION (prints
# "ok" and the clock); otherwise prints "changed", the clock, and the state as it is. A state of
# "-" removes the file: an empty state leaves nothing behind (a missing file is version 0, empty).
WRITE_SCRIPT = r"""
d=$1 want=$2
if [ -e "$d" ] && [ ! -d "$d" ]; then echo "$d: not a directory" >&2; exit 78; fi
[ -d "$d" ] || mkdir -p -- "$d" || exit 71
n=$(readlink /proc/self/ns/net) || exit 70
n=${n#*[}; n=${n%]}
exec 9>>"$d/.flock" || exit 72
flock -w 20 9 || exit 73
read -r b < /proc/sys/kernel/random/boot_id || exit 70
read -r u _ < /proc/uptime || exit 70
v=0 s=
if [ -e "$d/state.$n" ]; then { read -r v && read -r s; } < "$d/state.$n" || exit 77; fi
if [ "$want" = "$v" ]; then
  read -r nv && read -r ns && read -r e && [ "$e" = "#end" ] || exit 75
  if [ "$ns" = - ]; then rm -f -- "$d/state.$n" || exit 76
  else printf '%s\n%s\n#end\n' "$nv" "$ns" > "$d/.state.$n.new" && mv -f -- "$d/.state.$n.new" "$d/state.$n" || exit 76
  fi
  printf 'ok\n%s %s\n' "$b" "$u"
  exit 0
fi
printf 'changed\n%s %s\n%s\n%s\n' "$b" "$u" "$v" "$s"
"""
_PROBLEMS = {
    70: "cannot read the host's clock and namespace (/proc/sys/kernel/random/boot_id, /proc/uptime, "
        "/proc/self/ns/net)",
    71: "cannot create it",
    72: "cannot open its .flock file",
    73: "its .flock stayed locked for 20 s",
    75: "the new state arrived incomplete",
    76: "cannot write its state",
    77: "cannot read its state",
    78: "it is not a directory",
}
_TIMEOUT_S = 40.0
VERSION_LIMIT = 2**62  # versions are 1 .. VERSION_LIMIT - 1
_ATTEMPTS = 50  # compare-and-swap rounds before giving up (each one means someone else changed it)


class LockDirError(UserError):
    """A host's lock directory cannot be used (unreadable, not a directory, no flock): one line
    naming the host, the directory and the fix; nothing is touched."""


@dataclass(frozen=True)
class LockPlace:
    """Where a host keeps its locks: its executor and lock directory."""

    executor: Executor
    lock_dir: str

    @property
    def host(self) -> str:
        return self.executor.host


def _error(place: LockPlace, proc_code: int, stderr: str) -> LockDirError:
    where = f"host {place.host}: lock directory {place.lock_dir}"
    detail = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    if proc_code == 127 and "flock" in stderr:
        return LockDirError(f"host {place.host}: flock not found (vsperf locks testbeds with it): apt-get install "
                            f"util-linux there")
    problem = _PROBLEMS.get(proc_code, f"the lock command failed (exit {proc_code})")
    fix = "try again; if it persists, see vsperf testbed status"
    if proc_code in (71, 72, 76, 77, 78):
        fix = "make it root's and readable (chown root: and chmod 755 it), or give the host another lock_dir in the " \
              "testbed file"
    return LockDirError(f"{where}: {problem}{f' ({detail})' if detail else ''}; {fix}")


def _clock(line: str) -> HostClock:
    boot, uptime = line.split()
    return HostClock(boot, float(uptime))


def _parse(place: LockPlace, version: str, body: str) -> LockState:
    try:
        return LockState.from_text(version, body)
    except StateError as exc:
        raise LockDirError(f"host {place.host}: lock directory {place.lock_dir}: its state is {exc}; see vsperf "
                           f"testbed status, or remove {place.lock_dir}/state.* if no run uses the host") from None


def read_states(executor: Executor, lock_dirs: Sequence[str]) -> dict[str, tuple[LockState, HostClock]]:
    """The state of each of `lock_dirs` on the executor's host, with the host's clock: one command."""
    proc = executor.run(["sh", "-c", READ_SCRIPT, "vsperf-lock-read", *lock_dirs], check=False, timeout_s=_TIMEOUT_S)
    if proc.returncode != 0:
        raise _error(LockPlace(executor, lock_dirs[0] if len(lock_dirs) == 1 else ", ".join(lock_dirs)),
                     proc.returncode, proc.stderr)
    lines = proc.stdout.split("\n")
    found: dict[str, tuple[LockState, HostClock]] = {}
    for i in range(0, len(lines) - 3, 4):
        place = LockPlace(executor, lines[i])
        found[lines[i]] = (_parse(place, lines[i + 2], lines[i + 3]), _clock(lines[i + 1]))
    missing = [d for d in lock_dirs if d not in found]
    if missing:
        raise LockDirError(f"host {executor.host}: lock directory {missing[0]}: no answer from the lock command "
                           f"({proc.stdout[:200]!r})")
    return found


def read_state(place: LockPlace) -> tuple[LockState, HostClock]:
    """The state of `place` and the host's clock."""
    return read_states(place.executor, [place.lock_dir])[place.lock_dir]


def new_version(read: int) -> int:
    """A version for the next write of a state read at version `read`: random, never 0 (the
    empty state's), never `read`."""
    while True:
        version = secrets.randbelow(VERSION_LIMIT - 1) + 1
        if version != read:
            return version


def change(place: LockPlace, decide: Callable[[LockState, HostClock], tuple[LockState | None, T]],
           current: tuple[LockState, HostClock] | None = None) -> T:
    """Apply `decide` atomically: it gets the state and the host's clock and returns the new state
    (None: nothing to write) and a result, which is returned once the new state is on the host.
    `decide` may run several times (someone else changed the state meanwhile): it must not act
    on anything but its arguments. `current`: the state just read, if the caller has it."""
    state, clock = current or read_state(place)
    for _ in range(_ATTEMPTS):
        new, result = decide(state, clock)
        if new is None:
            return result
        text = "0\n-\n#end\n" if new.empty else replace(new, version=new_version(state.version)).to_text()
        proc = place.executor.run(["sh", "-c", WRITE_SCRIPT, "vsperf-lock-write", place.lock_dir, str(state.version)],
                                  check=False, timeout_s=_TIMEOUT_S, input_text=text)
        if proc.returncode != 0:
            raise _error(place, proc.returncode, proc.stderr)
        lines = proc.stdout.split("\n")
        try:
            if lines[0] == "ok":
                return result
            if lines[0] != "changed":
                raise ValueError(lines[0])
            state, clock = _parse(place, lines[2], lines[3]), _clock(lines[1])
        except (ValueError, IndexError):
            raise LockDirError(f"host {place.host}: lock directory {place.lock_dir}: unexpected answer from the lock "
                               f"command ({proc.stdout[:200]!r})") from None
    raise LockDirError(f"host {place.host}: lock directory {place.lock_dir}: changed by others {_ATTEMPTS} times while "
                       f"vsperf tried to change it; try again")


def append_log(place: LockPlace, line: str) -> None:
    """Append `line` to the host's log of lock changes made by hand (LOCK_DIR/unlock.log)."""
    try:
        place.executor.run(["tee", "-a", f"{place.lock_dir}/unlock.log"], input_text=line + "\n", timeout_s=_TIMEOUT_S)
    except (CommandError, VsperfError) as exc:
        log.warning("host %s: %s/unlock.log not written: %s", place.host, place.lock_dir, exc)
