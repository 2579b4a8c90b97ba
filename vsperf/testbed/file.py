"""The testbed file (YAML): read, validated key by key, turned into a `Testbed`.

    hosts:
      dut:  {address: 192.0.2.10, user: root, key_file: ~/.ssh/vsperf_ed25519,
             known_hosts_file: ~/.ssh/known_hosts}
      tgen: {address: 192.0.2.11, port: 2222, user: root}   # key from the SSH agent
    dut_host: dut
    trafficgen_host: tgen
    ports:
      - dut: {interface: ens1f0}                        # driver: kernel (the default)
        trafficgen: {interface: ens2f0}
      - dut: {pci: "0000:3b:00.1", driver: vfio-pci}    # DPDK (OVS-DPDK, testpmd)
        trafficgen: {location: "192.0.2.50;1;2"}        # a hardware generator's port

A host named `local` is this machine (no SSH, no other keys). Every error is one line that names
the file and the dotted key, e.g. `testbed lab.yaml: hosts.dut.port: expected ...`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from vsperf.config.types import Float, Int, ListOf, MapOf, SpecError, Str, Struct, UnknownKey
from vsperf.errors import ConfigError
from vsperf.inputs import expand_path, load_yaml, read_text_file
from vsperf.inputs.limits import SETTINGS_FILE_MAX_BYTES
from vsperf.remote.connection import SshHost
from vsperf.testbed.model import (
    DEFAULT_LOCK_DIR,
    DRIVERS,
    LOCAL_HOST,
    PCI_ADDRESS,
    Cable,
    Driver,
    DutPort,
    GenPortSpec,
    Testbed,
    TestbedHost,
    normal_pci,
)

_NAME = Str(min_len=1)
HOST = Struct({
    "address": Str(min_len=1),
    "port": Int(min=1, max=65535, unit="TCP port"),
    "user": Str(min_len=1),
    "key_file": Str(min_len=1),
    "known_hosts_file": Str(min_len=1),
    "connect_timeout_s": Float(gt=0, unit="s"),
    "lock_dir": Str(min_len=1),
})
DUT_PORT = Struct({"interface": _NAME, "pci": _NAME, "driver": Str(choices=DRIVERS)})
GEN_PORT = Struct({"interface": _NAME, "location": _NAME})
TESTBED = Struct({
    "hosts": MapOf(_NAME, HOST, min_len=1),
    "dut_host": _NAME,
    "trafficgen_host": _NAME,
    "ports": ListOf(Struct({"dut": DUT_PORT, "trafficgen": GEN_PORT}), min_len=1),
})
REQUIRED = ("hosts", "dut_host", "trafficgen_host", "ports")
DEFAULT_KNOWN_HOSTS = "~/.ssh/known_hosts"


def _fail(path: Path, key: str, problem: str) -> ConfigError:
    return ConfigError(f"testbed {path}: {key}: {problem}")


def _lock_dir(path: Path, name: str, raw: Mapping[str, Any]) -> str:
    lock_dir = str(raw.get("lock_dir", DEFAULT_LOCK_DIR))
    if not lock_dir.startswith("/") or "\n" in lock_dir:
        raise _fail(path, f"hosts.{name}.lock_dir", f"expected an absolute path on the host, got {lock_dir!r}")
    return lock_dir


def _host(path: Path, name: str, raw: Mapping[str, Any]) -> TestbedHost:
    if name == LOCAL_HOST:
        if set(raw) - {"lock_dir"}:
            raise _fail(path, f"hosts.{name}", "the host named 'local' is this machine: give it no keys but "
                                               "lock_dir ({})")
        return TestbedHost(name, lock_dir=_lock_dir(path, name, raw))
    if "address" not in raw:
        raise _fail(path, f"hosts.{name}.address", f"missing: the address of host {name} (or call it 'local')")
    key_file = raw.get("key_file")
    ssh = SshHost(
        name=name,
        address=raw["address"],
        port=raw.get("port", 22),
        user=raw.get("user", "root"),
        key_file=Path(key_file).expanduser() if key_file else None,
        known_hosts_file=Path(raw.get("known_hosts_file", DEFAULT_KNOWN_HOSTS)).expanduser(),
        connect_timeout_s=raw.get("connect_timeout_s", 5.0),
    )
    return TestbedHost(name, ssh, _lock_dir(path, name, raw))


def _dut_port(path: Path, key: str, raw: Mapping[str, Any]) -> DutPort:
    driver = cast(Driver, raw.get("driver", "kernel"))
    interface, pci = raw.get("interface"), raw.get("pci")
    if pci is not None and not PCI_ADDRESS.match(pci):
        raise _fail(path, f"{key}.pci", f"expected a PCI address like 0000:3b:00.0, got {pci!r}")
    if interface is None and pci is None:
        raise _fail(path, key, "give the port's interface name or its PCI address (pci)")
    if driver != "kernel" and pci is None:
        raise _fail(path, f"{key}.pci", f"missing: driver {driver} binds a PCI device; give its address")
    return DutPort(interface, normal_pci(pci) if pci else None, driver)


def _gen_port(path: Path, key: str, raw: Mapping[str, Any]) -> GenPortSpec:
    if ("interface" in raw) == ("location" in raw):
        raise _fail(path, key, "give exactly one of interface (on the generator host) or location "
                               "(a hardware generator's port)")
    return GenPortSpec(raw.get("interface"), raw.get("location"))


def parse_testbed(data: object, path: Path) -> Testbed:
    """A `Testbed` from the file's parsed YAML; ConfigError naming the key otherwise."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"testbed {path}: expected a mapping with keys {', '.join(REQUIRED)}")
    doc: dict[str, Any] = {}
    try:
        for key, raw in data.items():
            if key not in TESTBED.fields:
                raise UnknownKey("", str(key), TESTBED.fields)
            doc[key] = TESTBED.fields[key].validate(raw, key)
    except SpecError as exc:
        raise ConfigError(f"testbed {path}: {exc}") from None
    for key in REQUIRED:
        if key not in doc:
            raise _fail(path, key, "missing")
    hosts = tuple(_host(path, name, raw) for name, raw in doc["hosts"].items())
    names = [h.name for h in hosts]
    for key in ("dut_host", "trafficgen_host"):
        if doc[key] not in names:
            raise _fail(path, key, f"no host {doc[key]!r} under hosts (hosts: {', '.join(names)})")
    cables = []
    seen: set[str] = set()
    for i, raw in enumerate(doc["ports"]):
        for side in ("dut", "trafficgen"):
            if side not in raw:
                raise _fail(path, f"ports[{i}].{side}", "missing")
        dut = _dut_port(path, f"ports[{i}].dut", raw["dut"])
        gen = _gen_port(path, f"ports[{i}].trafficgen", raw["trafficgen"])
        for ident in (f"dut {dut.label}", f"trafficgen {gen.label}"):
            if ident in seen:
                raise _fail(path, f"ports[{i}]", f"{ident} is cabled twice")
            seen.add(ident)
        cables.append(Cable(dut, gen))
    return Testbed(str(path), hosts, doc["dut_host"], doc["trafficgen_host"], tuple(cables))


def load_testbed(path: Path) -> Testbed:
    """Read and validate the testbed file at `path`."""
    # The same bounded, strict reading as every input file (vsperf.inputs): YAML 1.2 scalars
    # (port: 37:02 is not 2222), duplicate keys refused, regular UTF-8 files only.
    where = f"testbed {path}"
    text = read_text_file(expand_path(path, where), where, SETTINGS_FILE_MAX_BYTES)
    return parse_testbed(load_yaml(text, where), path)

