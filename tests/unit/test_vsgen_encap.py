"""vsgen's frames inside a tunnel: outer headers, the offsets the engine stamps at, and what tshark
reads in them (outer and inner headers, VNI/key, checksums)."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from vsperf.capture.dissect import dissect
from vsperf.traffic.tunnel import Encapsulation
from vsperf.trafficgen.vsgen.encap import L3_OFFSETS, encapsulate
from vsperf.trafficgen.vsgen.frames import FrameSpec, build_frame, ipv4_checksum

GEN, SWITCH = "02:00:00:00:00:02", "0e:00:00:00:00:99"


def inner(vlan: int | None = None) -> tuple[bytes, int]:
    spec = FrameSpec(src_mac="02:00:00:00:00:01", dst_mac="02:00:00:00:00:03", src_ip="198.18.1.1",
                     dst_ip="198.18.0.1", src_udp=3001, dst_udp=3000, frame_size_bytes=128, run_tag=0x1234,
                     vlan_id=vlan)
    return build_frame(spec), spec.l3_offset


@pytest.mark.parametrize("kind", ["vxlan", "geneve", "gre"])
@pytest.mark.parametrize("vlan", [None, 7])
def test_the_test_frame_sits_where_the_engine_stamps(kind: str, vlan: int | None) -> None:
    frame, l3 = inner(vlan)
    encap = Encapsulation(kind, 99, GEN, SWITCH, "198.18.240.10", "198.18.240.1")  # type: ignore[arg-type]
    outer, at = encapsulate(frame, l3, encap)
    assert at == L3_OFFSETS[(kind, vlan is not None)] and len(outer) == len(frame) + encap.overhead_bytes
    assert outer[at:at + 20] == frame[l3:l3 + 20]  # the inner IPv4 header, unchanged
    assert ipv4_checksum(outer[14:34]) == 0  # the outer header's checksum holds
    seen = dissect(outer)
    assert seen is not None and seen.inner is not None
    assert (seen.src_ip, seen.dst_ip, seen.tunnel, seen.tunnel_key, seen.ip_checksum_ok) == (
        "198.18.240.10", "198.18.240.1", kind, 99, True)
    assert (seen.inner.src_ip, seen.inner.dst_port, seen.inner.vlan_id) == ("198.18.1.1", 3000, vlan)


def _pcap(frames: list[bytes]) -> bytes:
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    for frame in frames:
        out += struct.pack("<IIII", 0, 0, len(frame), len(frame)) + frame
    return out


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark missing: apt-get install tshark")
@pytest.mark.parametrize(("kind", "key_field"), [("vxlan", "vxlan.vni"), ("geneve", "geneve.vni"), ("gre", "gre.key")])
def test_tshark_reads_the_generators_tunnel_frames(tmp_path: Path, kind: str, key_field: str) -> None:
    frame, l3 = inner()
    outer, _ = encapsulate(frame, l3, Encapsulation(kind, 99, GEN, SWITCH, "198.18.240.10",  # type: ignore[arg-type]
                                                    "198.18.240.1"))
    path = tmp_path / "f.pcap"
    path.write_bytes(_pcap([outer]))
    fields = ["ip.src", "ip.dst", "ip.checksum.status", key_field, "eth.src", "udp.dstport"]
    proc = subprocess.run(["tshark", "-r", str(path), "-o", "ip.check_checksum:TRUE", "-T", "json", "-e",
                           *" -e ".join(fields).split()], capture_output=True, text=True, check=True)
    layers = json.loads(proc.stdout)[0]["_source"]["layers"]
    assert layers["ip.src"] == ["198.18.240.10", "198.18.1.1"]  # outer, then inner
    assert layers["ip.dst"] == ["198.18.240.1", "198.18.0.1"]
    assert layers["ip.checksum.status"] == ["1", "1"]  # 1: good (0: bad), outer and inner
    assert int(layers[key_field][0], 0) == 99
    assert layers["eth.src"] == [GEN, "02:00:00:00:00:01"]
    assert layers["udp.dstport"][-1] == "3000"


def test_a_key_too_large_is_refused() -> None:
    with pytest.raises(ValueError, match="vxlan key 16777216 does not fit 24 bits"):
        Encapsulation("vxlan", 1 << 24, GEN, SWITCH, "198.18.0.1", "198.18.0.2")


def test_tshark_sees_a_bad_checksum_the_dissector_sees_too() -> None:
    frame, l3 = inner()
    outer, _ = encapsulate(frame, l3, Encapsulation("vxlan", 99, GEN, SWITCH, "198.18.240.10", "198.18.240.1"))
    broken = bytearray(outer)
    broken[24] ^= 0xFF  # the outer IPv4 checksum
    seen = dissect(bytes(broken))
    assert seen is not None and seen.ip_checksum_ok is False and seen.inner is not None
    assert seen.inner.ip_checksum_ok is True
