"""`vsperf guest-image build`: a small guest (kernel + initramfs) made from Debian packages only.

- the kernel: `apt-get download` of the package the `linux-image-cloud-amd64` metapackage depends
  on, unpacked with `dpkg-deb -x` into a scratch directory (never installed on the host);
  `depmod -b` on that tree resolves the modules the loopbacks need (virtio, uio_pci_generic,
  bridge) with their dependencies, in load order;
- busybox (busybox-static's /bin/busybox), the /init of vsperf.vnf.qemu.init_script;
- /usr/bin/dpdk-testpmd with its `ldd` closure and only the PMDs it needs from the EAL's plugin
  directory (net_virtio, mempool_ring; bus_pci is linked): the EAL dlopens every .so there.

The result is cached under GUEST_IMAGE_CACHE_DIR in a directory named after a key of the package
versions and the init script, so tests and runs build it once; `manifest.json` lists versions
and files. Every external command goes through the run's Executor (commands.log).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import re
import shutil
import stat
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vsperf.errors import CommandError, PrerequisiteError
from vsperf.executor import Executor
from vsperf.vnf.qemu.init_script import INIT_SCRIPT, MODULE_GROUPS, MODULES_FILE

log = logging.getLogger(__name__)

KERNEL_METAPACKAGE = "linux-image-cloud-amd64"
TESTPMD = Path("/usr/bin/dpdk-testpmd")
BUSYBOX = Path("/bin/busybox")
PLUGINS = ("librte_net_virtio.so", "librte_mempool_ring.so", "librte_bus_pci.so")
MANIFEST = "manifest.json"
IMAGE_VERSION = 2  # bump when the layout changes: old caches are rebuilt
_LDD_RE = re.compile(r"^\s*(?:\S+\s+=>\s+)?(/\S+)\s+\(0x[0-9a-f]+\)\s*$")


@dataclass(frozen=True)
class GuestImage:
    """A built guest: boot `kernel_path` with `initrd_path`."""

    directory: Path
    kernel_path: Path
    initrd_path: Path
    kernel_release: str
    key: str
    build_time_s: float  # 0.0 when it came from the cache

    def manifest(self) -> dict[str, Any]:
        """The image's manifest.json."""
        data: dict[str, Any] = json.loads((self.directory / MANIFEST).read_text(encoding="utf-8"))
        return data


def package_version(executor: Executor, package: str) -> str:
    """Installed version of `package` ("" when not installed)."""
    out = executor.run(["dpkg-query", "-W", "-f", "${Status}|${Version}", package], check=False, timeout_s=30)
    status, _, version = out.stdout.partition("|")
    return version if out.returncode == 0 and status.endswith(" installed") else ""


def kernel_package(executor: Executor, metapackage: str = KERNEL_METAPACKAGE) -> tuple[str, str]:
    """(package, version) of the kernel `metapackage` depends on, from the apt cache."""
    try:
        out = executor.run(["apt-cache", "depends", "--important", metapackage], timeout_s=60).stdout
        policy = executor.run(["apt-cache", "policy", metapackage], timeout_s=60).stdout
    except CommandError as exc:
        raise PrerequisiteError(f"apt-cache cannot resolve {metapackage}: run apt-get update ({exc})") from exc
    packages = re.findall(r"Depends:\s*(linux-image-\S+)", out)
    candidate = re.search(r"Candidate:\s*(\S+)", policy)
    if not packages or candidate is None or candidate.group(1) == "(none)":
        raise PrerequisiteError(f"apt knows no {metapackage} to take a guest kernel from: run apt-get update")
    return packages[0], candidate.group(1)


def image_key(versions: dict[str, str]) -> str:
    """A short hash of the package versions and the init script: the cache directory's name."""
    text = json.dumps({"v": IMAGE_VERSION, "versions": versions, "init": INIT_SCRIPT}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def parse_ldd(text: str) -> list[str]:
    """Absolute library paths in `ldd` output (the vdso and 'not found' entries are skipped)."""
    if "not found" in text:
        missing = [line.split()[0] for line in text.splitlines() if "not found" in line]
        raise PrerequisiteError(f"dpdk-testpmd needs libraries that are missing: {', '.join(missing)}")
    return [m.group(1) for m in (_LDD_RE.match(line) for line in text.splitlines()) if m]


def parse_modules_dep(text: str) -> dict[str, list[str]]:
    """modules.dep as {module path: [dependency paths]}."""
    deps: dict[str, list[str]] = {}
    for line in text.splitlines():
        if ":" in line:
            path, _, rest = line.partition(":")
            deps[path.strip()] = rest.split()
    return deps


def module_load_order(deps: dict[str, list[str]], wanted: Iterable[str]) -> list[str]:
    """Paths of the `wanted` modules (by name) and their dependencies, dependencies first."""
    by_name = {Path(p).name.split(".ko")[0].replace("-", "_"): p for p in deps}
    order: list[str] = []

    def visit(path: str, trail: tuple[str, ...]) -> None:
        if path in order or path in trail:
            return
        for dep in deps.get(path, []):
            visit(dep, (*trail, path))
        order.append(path)

    for name in wanted:
        if name not in by_name:
            raise PrerequisiteError(f"the guest kernel has no module {name!r}")
        visit(by_name[name], ())
    return order


def newc_archive(root: Path) -> bytes:
    """A cpio archive (newc, as the kernel's initramfs reads it) of everything under `root`."""
    chunks: list[bytes] = []
    ino = 1

    def entry(name: str, mode: int, data: bytes, nlink: int = 1) -> None:
        nonlocal ino
        fields = [ino, mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name) + 1, 0]
        header = b"070701" + b"".join(f"{f:08x}".encode() for f in fields)
        body = header + name.encode() + b"\0"
        chunks.append(body + b"\0" * (-len(body) % 4) + data + b"\0" * (-len(data) % 4))
        ino += 1

    # The archive's root becomes "/": the EAL refuses to load plugins below a world-writable one.
    entry(".", stat.S_IFDIR | 0o755, b"", nlink=2)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames) + sorted(filenames):
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                entry(rel, info.st_mode, os.readlink(path).encode())
            elif stat.S_ISDIR(info.st_mode):
                entry(rel, info.st_mode, b"", nlink=2)
            else:
                entry(rel, info.st_mode, path.read_bytes())
    entry("TRAILER!!!", 0, b"")
    return b"".join(chunks)


def _copy_into(root: Path, source: str, dest: str | None = None) -> None:
    """Copy host file `source` to the same path (or `dest`) under `root`, following symlinks."""
    target = root / (dest or source).lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(os.path.realpath(source), target)


def _library_paths(executor: Executor, binaries: Sequence[str]) -> list[str]:
    out = executor.run(["ldd", *binaries], timeout_s=60).stdout
    return sorted(set(parse_ldd(out)))


class ImageBuilder:
    """Builds (or finds in its cache) the guest image."""

    def __init__(self, executor: Executor, cache_dir: Path, *, metapackage: str = KERNEL_METAPACKAGE) -> None:
        self.executor = executor
        self.cache_dir = cache_dir.expanduser()
        self.metapackage = metapackage

    def check_prerequisites(self) -> None:
        """PrerequisiteError naming the package to install when a host tool is missing."""
        for path, package in ((TESTPMD, "dpdk-dev"), (BUSYBOX, "busybox-static")):
            if not path.exists():
                raise PrerequisiteError(f"the guest image needs {path}: apt-get install {package}")
        for tool, package in (("dpkg-deb", "dpkg"), ("depmod", "kmod"), ("apt-get", "apt")):
            if shutil.which(tool) is None:
                raise PrerequisiteError(f"the guest image needs {tool}: apt-get install {package}")

    def versions(self) -> dict[str, str]:
        """The versions the image is made of (its cache key)."""
        package, version = kernel_package(self.executor, self.metapackage)
        return {
            "kernel_package": package,
            "kernel_version": version,
            "busybox": package_version(self.executor, "busybox-static") or "host " + str(BUSYBOX),
            "dpdk": package_version(self.executor, "dpdk") or package_version(self.executor, "dpdk-dev"),
        }

    def get(self, *, rebuild: bool = False) -> GuestImage:
        """The cached image for the current package versions, built first when missing."""
        self.check_prerequisites()
        versions = self.versions()
        key = image_key(versions)
        directory = self.cache_dir / f"guest-{key}"
        if not rebuild and (directory / MANIFEST).is_file():
            return self._load(directory, 0.0)
        return self._build(directory, key, versions)

    def _load(self, directory: Path, build_time_s: float) -> GuestImage:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        return GuestImage(directory, directory / "vmlinuz", directory / "initrd.gz",
                          str(manifest["kernel_release"]), str(manifest["key"]), build_time_s)

    def _build(self, directory: Path, key: str, versions: dict[str, str]) -> GuestImage:
        started = time.monotonic()
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="vsperf-guest-", dir=self.cache_dir) as tmp:
            scratch = Path(tmp)
            kroot = self._unpack_kernel(scratch, versions["kernel_package"])
            release = self._kernel_release(kroot)
            root = scratch / "root"
            files = self._assemble(root, kroot, release)
            initrd = gzip.compress(newc_archive(root), compresslevel=1)
            out = scratch / "out"
            out.mkdir()
            shutil.copy2(kroot / "boot" / f"vmlinuz-{release}", out / "vmlinuz")
            (out / "initrd.gz").write_bytes(initrd)
            manifest = {
                "key": key,
                "image_version": IMAGE_VERSION,
                "versions": versions,
                "kernel_release": release,
                "initrd_bytes": len(initrd),
                "initrd_sha256": hashlib.sha256(initrd).hexdigest(),
                "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "files": files,
            }
            (out / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
            shutil.rmtree(directory, ignore_errors=True)
            try:
                os.replace(out, directory)  # atomic: a half-built image is never found in the cache
            except OSError:
                if not (directory / MANIFEST).is_file():
                    raise
                # Another vsperf built the same image at the same moment: same key, same content.
        # Images of older package versions are never used again: keep the cache to one image.
        for old in self.cache_dir.glob("guest-*"):
            if old != directory and (old / MANIFEST).is_file():
                shutil.rmtree(old, ignore_errors=True)
        took = time.monotonic() - started
        log.info("built guest image %s in %.1f s (%d KiB initramfs)", directory, took, len(initrd) // 1024)
        return self._load(directory, took)

    def _unpack_kernel(self, scratch: Path, package: str) -> Path:
        debs = scratch / "debs"
        debs.mkdir()
        try:
            # `env -C` runs apt-get in the scratch directory: it downloads to the current one.
            self.executor.run(["env", "-C", str(debs), "apt-get", "download", package], timeout_s=600)
        except CommandError as exc:
            raise PrerequisiteError(f"cannot download {package} for the guest kernel (run apt-get update): "
                                    f"{exc}") from exc
        deb = next(debs.glob("*.deb"))
        kroot = scratch / "kernel"
        self.executor.run(["dpkg-deb", "-x", str(deb), str(kroot)], timeout_s=300)
        return kroot

    def _kernel_release(self, kroot: Path) -> str:
        releases = sorted(p.name for p in (kroot / "lib" / "modules").iterdir())
        if len(releases) != 1:
            raise PrerequisiteError(f"unexpected kernel package layout: modules for {releases}")
        # Debian generates modules.dep at install time; depmod -b does it inside the scratch tree.
        self.executor.run(["depmod", "-b", str(kroot), releases[0]], timeout_s=120)
        return releases[0]

    def _assemble(self, root: Path, kroot: Path, release: str) -> list[str]:
        for sub in ("bin", "dev", "proc", "sys", "tmp", "etc", "usr/bin", "usr/lib", "usr/lib64"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        # Debian's merged /usr: ldd names /lib/... paths.
        (root / "lib").symlink_to("usr/lib")
        (root / "lib64").symlink_to("usr/lib64")
        _copy_into(root, str(BUSYBOX), "/bin/busybox")
        init = root / "init"
        init.write_text(INIT_SCRIPT, encoding="utf-8")
        init.chmod(0o755)
        self._add_testpmd(root)
        self._add_modules(root, kroot, release)
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if not p.is_dir())

    def _add_testpmd(self, root: Path) -> None:
        plugin_dir = self._plugin_dir()
        plugins = [str(plugin_dir / name) for name in PLUGINS if (plugin_dir / name).exists()]
        if len(plugins) != len(PLUGINS):
            raise PrerequisiteError(f"DPDK's PMDs {', '.join(PLUGINS)} are not all in {plugin_dir}: "
                                    "apt-get install dpdk")
        _copy_into(root, str(TESTPMD))
        libs = _library_paths(self.executor, [str(TESTPMD), *plugins])
        # pthread_cancel dlopens libgcc_s, which ldd cannot see.
        libs += [p for p in ("/lib/x86_64-linux-gnu/libgcc_s.so.1",) if Path(p).exists()]
        for lib in [*libs, *plugins]:
            real = os.path.realpath(lib)
            # Keep the real file name (the EAL loads "*.so.<ABI>.<minor>" and "*.so" files from
            # its plugin directory) and a symlink under the name ldd resolved.
            host_dir = os.path.realpath(os.path.dirname(lib))
            _copy_into(root, real, f"{host_dir}/{os.path.basename(real)}")
            link = root / host_dir.lstrip("/") / os.path.basename(lib)
            if not link.exists():
                link.symlink_to(os.path.basename(real))

    def _plugin_dir(self) -> Path:
        out = self.executor.run(["ldd", str(TESTPMD)], timeout_s=60).stdout
        for path in parse_ldd(out):
            if "/dpdk/pmds-" in path:
                return Path(path).parent
        raise PrerequisiteError("cannot find DPDK's PMD directory from dpdk-testpmd's libraries")

    def _add_modules(self, root: Path, kroot: Path, release: str) -> None:
        moddir = kroot / "lib" / "modules" / release
        deps = parse_modules_dep((moddir / "modules.dep").read_text(encoding="utf-8"))
        lines = []
        loaded: set[str] = set()
        for group, wanted in MODULE_GROUPS.items():
            for rel in module_load_order(deps, wanted):
                guest_path = f"/lib/modules/{release}/{rel}"
                _copy_into(root, str(moddir / rel), guest_path)
                if rel not in loaded:
                    lines.append(f"{group} {guest_path}")
                    loaded.add(rel)
        (root / MODULES_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")


def kernel_cmdline(*, loopback: str, fwd_mode: str, nics: int, cpus: int, hugepages: int,
                   testpmd_args: Sequence[str]) -> str:
    """The -append of a guest of this image (see vsperf.vnf.qemu.init_script)."""
    parts = ["console=ttyS0", "quiet", "panic=-1", f"hugepages={hugepages}", f"vsperf.loopback={loopback}",
             f"vsperf.fwd={fwd_mode}", f"vsperf.nics={nics}", f"vsperf.cpus={cpus}"]
    if testpmd_args:
        if any("," in a or " " in a for a in testpmd_args):
            raise PrerequisiteError("GUEST_TESTPMD_PARAMS for the built-in image: arguments cannot contain "
                                    "commas or spaces (write --rxd=512, not '--rxd 512')")
        parts.append("vsperf.testpmd=" + ",".join(testpmd_args))
    return " ".join(parts)
