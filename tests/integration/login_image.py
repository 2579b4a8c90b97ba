"""A user's guest image with a real login, for the GUEST_IMAGE tests: a bootable qcow2 disk.

What a VSPERF user brings is a disk image that boots to a login on the serial console and does
nothing else; vsperf must log in (GUEST_USERNAME/GUEST_PASSWORD, prompts) and type the
loopback's commands. This builds such an image from the same Debian packages as vsperf's own
(the kernel of linux-image-*-cloud-amd64, busybox-static: taken from `vsperf guest-image build`'s
cached kernel and initramfs) plus syslinux to make the disk bootable:

- a FAT file system (mkfs.vfat) made bootable by `syslinux --install` (mtools: no mount), holding
  the kernel, the initramfs and syslinux.cfg (console=ttyS0), converted to qcow2 (qemu-img);
- the initramfs is vsperf's with a second cpio archive appended (the kernel unpacks both, the
  later one wins): a different /init that loads the drivers (as a distribution's udev would),
  then execs busybox init, whose inittab runs getty on ttyS0; /etc/passwd and /etc/shadow with
  the given password (busybox mkpasswd, SHA-512); a shell prompt `[root@<hostname> ~]# `.

Nothing in it forwards: no bridge, no testpmd is started, so frames cross the guest only once
vsperf has logged in and set up the loopback.
"""

from __future__ import annotations

import gzip
import shutil
import subprocess
from pathlib import Path

from vsperf.vnf.qemu.image import newc_archive
from vsperf.vnf.qemu.init_script import BOOT_MOUNTS, MODULES_FILE

TOOLS = {"syslinux": "syslinux", "mcopy": "mtools", "mkfs.vfat": "dosfstools", "qemu-img": "qemu-utils"}
DISK_MB = 48

INIT = f"""#!/bin/busybox sh
# A user's image: drivers loaded, a login on the serial console, nothing configured.
{BOOT_MOUNTS}mkdir -p /root
while read -r group path; do insmod "$path"; done < /{MODULES_FILE}
hostname "$(cat /etc/hostname)"
exec /bin/init
"""

INITTAB = """::sysinit:/bin/true
ttyS0::respawn:/bin/getty -L 115200 ttyS0 vt100
"""

SYSLINUX_CFG = """DEFAULT linux
PROMPT 0
TIMEOUT 0
LABEL linux
  KERNEL vmlinuz
  INITRD initrd.gz
  APPEND console=ttyS0 quiet panic=-1
"""


def missing_tool() -> str | None:
    """'TOOL missing: apt-get install PACKAGE' for the first tool this needs that is not installed."""
    for tool, package in TOOLS.items():
        if shutil.which(tool) is None:
            return f"{tool} missing: apt-get install {package}"
    return None


def run(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, text=True, timeout=120)


def password_hash(password: str) -> str:
    out = subprocess.run(["/bin/busybox", "mkpasswd", "-m", "sha512", password], check=True,
                         capture_output=True, text=True, timeout=30).stdout.strip()
    assert out.startswith("$6$"), out
    return out


def overlay(root: Path, password: str, hostname: str) -> bytes:
    """The gzipped cpio archive appended to vsperf's initramfs."""
    files = {
        "init": INIT,
        "etc/inittab": INITTAB,
        "etc/hostname": hostname + "\n",
        "etc/passwd": "root:x:0:0:root:/root:/bin/sh\n",
        "etc/group": "root:x:0:\n",
        "etc/shadow": f"root:{password_hash(password)}:19000:0:99999:7:::\n",
        "etc/profile": f"export PATH=/bin:/usr/bin\nPS1='[root@{hostname} ~]# '\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "init").chmod(0o755)
    (root / "etc" / "shadow").chmod(0o600)
    (root / "root").mkdir()
    return gzip.compress(newc_archive(root), compresslevel=1)


def build_login_image(directory: Path, image_dir: Path, *, password: str, hostname: str) -> Path:
    """A qcow2 in `directory` booting vsperf's kernel (from `image_dir`) to a login on ttyS0."""
    work = directory / "build"
    work.mkdir(parents=True)
    initrd = (image_dir / "initrd.gz").read_bytes() + overlay(work / "root", password, hostname)
    (work / "initrd.gz").write_bytes(initrd)
    shutil.copy2(image_dir / "vmlinuz", work / "vmlinuz")
    (work / "syslinux.cfg").write_text(SYSLINUX_CFG)
    raw = work / "disk.raw"
    with raw.open("wb") as f:
        f.truncate(DISK_MB * 1024 * 1024)
    # No partition table: the BIOS boots the FAT boot sector syslinux wrote (a "superfloppy").
    run("mkfs.vfat", "-n", "VSPERFLOGIN", str(raw))
    run("syslinux", "--install", str(raw))
    run("mcopy", "-i", str(raw), str(work / "vmlinuz"), str(work / "initrd.gz"), str(work / "syslinux.cfg"), "::/")
    qcow2 = directory / "login-guest.qcow2"
    run("qemu-img", "convert", "-f", "raw", "-O", "qcow2", str(raw), str(qcow2))
    shutil.rmtree(work)
    return qcow2
