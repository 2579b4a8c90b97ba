"""KVM or TCG: chosen by booting a short probe guest with KVM, not by /dev/kvm's existence.

On some machines /dev/kvm exists but every KVM guest hangs (nested virtualisation without the
features QEMU needs). The probe boots vsperf's image with KVM and no NICs on the guest's host
(`vsperf.host.Host`: this machine, or a testbed's DUT host through its executor);
when its init reports within `PROBE_TIMEOUT_S`, KVM works. A host whose /dev/kvm is missing or
cannot be opened (read there, through its executor) gets TCG without a probe. The answer is cached (per host kernel,
QEMU binary and image; a testbed host's name too) next to the images on this machine, so only
the first run on a host pays for a hanging probe.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path, PurePosixPath

from vsperf.errors import CommandError, DeploymentError
from vsperf.executor import Executor
from vsperf.host.host import Host
from vsperf.vnf.qemu.console import SerialConsole
from vsperf.vnf.qemu.image import GuestImage, kernel_cmdline
from vsperf.vnf.qemu.init_script import READY_MARKER
from vsperf.vnf.qemu.qemu import QEMU_BINARY, Accel

log = logging.getLogger(__name__)
PROBE_TIMEOUT_S = 20.0
PROBE_FILE = "accel-probe.json"


# Opens /dev/kvm read-write, as QEMU does, after checking that it is a character device (the
# redirection would create a file otherwise). A fixed script: nothing in it comes from input.
KVM_OPEN_SCRIPT = "test -c /dev/kvm && exec 3<>/dev/kvm"


def kvm_openable(executor: Executor) -> bool:
    """True when /dev/kvm exists on the executor's host and can be opened there for reading and
    writing (root passes `test -r/-w` on a node whose open fails: no module, a device cgroup)."""
    try:
        return executor.run(["sh", "-c", KVM_OPEN_SCRIPT], check=False, timeout_s=10).returncode == 0
    except CommandError:
        return False


def probe_kvm(host: Host, kernel: PurePosixPath, initrd: PurePosixPath, console_log: Path,
              binary: str = QEMU_BINARY) -> bool:
    """True when a KVM guest of `kernel`/`initrd` (paths on `host`) reaches its init's marker
    within PROBE_TIMEOUT_S on `host`; its console goes to `console_log` (this machine)."""
    if not kvm_openable(host.executor):
        return False
    append = kernel_cmdline(loopback="linux_bridge", fwd_mode="io", nics=0, cpus=1, hugepages=0, testpmd_args=())
    argv = [binary, "-accel", "kvm", "-cpu", "host", "-m", "256", "-smp", "1", "-nodefaults", "-no-user-config",
            "-display", "none", "-no-reboot", "-kernel", str(kernel), "-initrd", str(initrd),
            "-append", append, "-chardev", "stdio,id=serial0,signal=off", "-serial", "chardev:serial0"]
    # Recorded on its host like every guest: a killed run's probe is stopped later too.
    proc = host.spawn("qemu kvm-probe", argv, log_path=host.log_path("kvm-probe.qemu.log"), pipes=True)
    console = SerialConsole(console_log, "qemu kvm-probe")
    console.attach(proc.stdin, proc.stdout)
    try:
        console.wait_for([READY_MARKER], timeout_s=PROBE_TIMEOUT_S, alive=proc.alive, what="probe marker")
        return True
    except DeploymentError:  # it hung or exited: KVM does not work there
        return False
    finally:
        host.stop_process(proc)
        console.close()
        console_log.unlink(missing_ok=True)


def _probe_key(host: Host, image: GuestImage, binary: str) -> str:
    release = host.executor.run(["uname", "-r"], timeout_s=10).stdout.strip()
    where = "" if host.local else f"{host.name}|"
    return f"{where}{release}|{binary}|{image.key}"


def choose_accel(setting: str, host: Host, image: GuestImage | None, kernel: PurePosixPath, initrd: PurePosixPath,
                 cache_dir: Path, console_log: Path, binary: str = QEMU_BINARY) -> Accel:
    """GUEST_ACCEL resolved: "kvm"/"tcg" as given; "auto" probes KVM (cached) with `image`, whose
    `kernel` and `initrd` are where `host` reads them (`Host.stage_file`)."""
    if setting == "kvm":
        return "kvm"
    if setting == "tcg" or image is None:
        return "tcg"
    cache = cache_dir.expanduser() / PROBE_FILE
    key = _probe_key(host, image, binary)
    try:
        known = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    if isinstance(known, dict) and key in known:
        return "kvm" if known[key] else "tcg"
    works = probe_kvm(host, kernel, initrd, console_log, binary)
    log.info("KVM probe guest on host %s %s: using %s", host.name,
             "booted" if works else "did not boot", "kvm" if works else "tcg")
    known = known if isinstance(known, dict) else {}
    known[key] = works
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(known, indent=1), encoding="utf-8")
    return "kvm" if works else "tcg"
