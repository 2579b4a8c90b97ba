"""vsgen's frames inside a tunnel: outer headers, the offsets the engine stamps at, and what tshark
reads in them (outer and inner headers, VNI/key, checksums)."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from vsperf.capture.dissect import dissect
from vsperf.traffic.tunnel import Encapsulation
from vsperf.trafficgen.vsgen.encap import L3_OFFSETS, encapsulate, into_tunnel
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


SHARED_H = Path(__file__).resolve().parents[2] / "vsperf" / "trafficgen" / "vsgen" / "csrc" / "vsgen_shared.h"


def test_the_offsets_and_mix_limit_are_the_engines() -> None:
    from vsperf.trafficgen.vsgen.encap import ALL_L3_OFFSETS
    from vsperf.trafficgen.vsgen.protocol import MAX_MIX_FRAMES

    text = SHARED_H.read_text()
    c = {name: int(value) for name, value in re.findall(r"#define (VSG_\w+) (\d+)", text)}
    assert {v for k, v in c.items() if k.startswith("VSG_L3_")} == set(ALL_L3_OFFSETS)
    assert c["VSG_MIX_MAX"] == MAX_MIX_FRAMES


@pytest.mark.parametrize("kind", ["vxlan", "geneve", "gre"])
def test_a_mix_into_a_tunnel_grows_by_the_outer_headers(kind: str) -> None:
    frame, l3 = inner()
    enc = Encapsulation(kind=kind, key=9, src_mac=GEN, dst_mac=SWITCH, src_ip="198.18.9.2", dst_ip="198.18.9.1")
    outer, outer_l3, sizes = into_tunnel(frame, l3, (60, 124), enc, "ip")
    overhead = {"gre": 42, "vxlan": 50, "geneve": 50}[kind]
    assert len(outer) == len(frame) + overhead and outer_l3 == l3 + overhead
    assert sizes == (60 + overhead, 124 + overhead)
    with pytest.raises(ValueError, match="not their MAC"):
        into_tunnel(frame, l3, (), enc, "mac")


_HARNESS = r"""
#include <stdio.h>
#include "vsgen_shared.h"
int main(void)
{
	unsigned char f[2048];
	int l3, len, n = 0, c;

	if (scanf("%d %d", &l3, &len) != 2)
		return 1;
	while (n < (int)sizeof(f) && scanf("%2x", &c) == 1)
		f[n++] = (unsigned char)c;
	vsg_set_len(f, l3, (__u32)len);
	printf("%d\n", vsg_tunnel_bytes(l3));
	for (int i = 0; i < len; i++)
		printf("%02x", f[i]);
	printf("\n");
	return 0;
}
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
@pytest.mark.parametrize("kind", ["vxlan", "geneve", "gre", None])
def test_the_engine_cuts_a_mix_frame_inside_a_tunnel_with_every_length_right(kind: str | None,
                                                                              tmp_path: Path) -> None:
    """vsg_set_len (what the transmit paths do to each frame of a mix) on a tunnel's frame: the
    inner and outer IPv4 lengths and checksums and the outer UDP length all fit the cut frame."""
    (tmp_path / "t.c").write_text(_HARNESS)
    subprocess.run(["cc", "-O1", "-I", str(SHARED_H.parent), "-o", str(tmp_path / "t"), str(tmp_path / "t.c")],
                   check=True)
    frame, l3 = inner()
    overhead = 0
    if kind is not None:
        enc = Encapsulation(kind=kind, key=9, src_mac=GEN, dst_mac=SWITCH, src_ip="198.18.9.2", dst_ip="198.18.9.1")
        outer, l3, _ = into_tunnel(frame, l3, (), enc, "ip")
        overhead, frame = len(outer) - len(frame), outer
    cut = 60 + overhead  # a 64-byte test frame
    out = subprocess.run([str(tmp_path / "t")], input=f"{l3} {cut} {frame.hex()}", capture_output=True, text=True,
                         check=True).stdout.split()
    assert int(out[0]) == overhead  # what the receivers leave out of the size they count
    got = bytes.fromhex(out[1])
    ip = got[l3:l3 + 20]
    assert struct.unpack(">H", ip[2:4])[0] == cut - l3 and ipv4_checksum(ip[:10] + b"\0\0" + ip[12:]) == \
        struct.unpack(">H", ip[10:12])[0]
    assert struct.unpack(">H", got[l3 + 24:l3 + 26])[0] == cut - l3 - 20  # inner UDP length
    if kind is not None:
        outer_ip = got[14:34]
        assert struct.unpack(">H", outer_ip[2:4])[0] == cut - 14
        assert ipv4_checksum(outer_ip[:10] + b"\0\0" + outer_ip[12:]) == struct.unpack(">H", outer_ip[10:12])[0]
        if kind != "gre":
            assert struct.unpack(">H", got[38:40])[0] == cut - 34  # outer UDP length
