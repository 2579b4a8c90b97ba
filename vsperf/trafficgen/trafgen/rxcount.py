"""Counting received test frames at a generator port, exactly and without noise.

A tc ingress program on the receiving interface classifies every arriving frame:

- slot 0: test frame (IPv4/UDP to 198.18.0.0/15), untagged;
- slot 1: test frame tagged with the expected VLAN id;
- slot 2: test frame tagged with another VLAN id;
- slot 3: anything else (ARP, IPv6, ...): not ours, passed on untouched.

Test frames are dropped after counting so that the receiving namespace never spends time on
them (no ICMP replies, no socket lookups). The VLAN tag is read from the skb metadata (where
the kernel puts it before tc ingress) or, if still in the frame, from the frame itself.
Counters are cumulative; a trial reads them before and after and takes the difference.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass

from vsperf.trafficgen.trafgen import bpf
from vsperf.trafficgen.trafgen.bpf import (
    JEQ,
    JNE,
    B,
    H,
    Insn,
    W,
    add64_imm,
    and64_imm,
    atomic_add64,
    be16,
    call,
    exit_insn,
    ja,
    jmp_imm,
    ld_map_fd,
    ldx,
    mov64_imm,
    mov64_reg,
    stx,
)

SLOT_UNTAGGED, SLOT_TAGGED_EXPECTED, SLOT_TAGGED_OTHER, SLOT_OTHER = 0, 1, 2, 3
SLOTS = 4
NO_VLAN = -1  # expected_vlan_id meaning "frames should arrive untagged"

# struct __sk_buff offsets (include/uapi/linux/bpf.h)
_SKB_VLAN_PRESENT, _SKB_VLAN_TCI = 20, 24
_TC_ACT_OK, _TC_ACT_SHOT = 0, 2
# Values as a little-endian load sees network-order bytes (the program runs on LE hosts;
# bpf.py refuses other architectures' syscall numbers except the LE ones listed).
_ETH_P_IP_LE, _ETH_P_8021Q_LE = 0x0008, 0x0081
_NET_198_18_LE, _MASK_15_LE = 0x000012C6, 0x0000FEFF


class _Asm:
    """Instructions with symbolic jump targets, resolved by `assemble`."""

    def __init__(self) -> None:
        self.items: list[Insn | str] = []
        self.fixups: dict[int, str] = {}

    def emit(self, *insns: Insn) -> None:
        self.items.extend(insns)

    def jump(self, insn: Insn, label: str) -> None:
        self.fixups[len(self.items)] = label
        self.items.append(insn)

    def label(self, name: str) -> None:
        self.items.append(name)

    def assemble(self) -> list[Insn]:
        positions: dict[str, int] = {}
        index = 0
        for item in self.items:
            if isinstance(item, str):
                positions[item] = index
            else:
                index += 1
        out: list[Insn] = []
        for pos, item in enumerate(self.items):
            if isinstance(item, str):
                continue
            label = self.fixups.get(pos)
            if label is not None:
                item = Insn(item.code, item.dst, item.src, positions[label] - (len(out) + 1), item.imm)
            out.append(item)
        return out


def counter_program(map_fd: int, expected_vlan_id: int = NO_VLAN) -> list[Insn]:
    """The classifier described in the module docstring, counting into array map `map_fd`.

    The headers are copied to the stack with bpf_skb_load_bytes rather than read in place:
    frames sent from a packet socket's ring arrive mostly in page fragments, with only a
    few bytes in the linear area that direct packet access can see.
    """
    a = _Asm()
    # Stack offset of the copied headers (38 bytes: Ethernet + 802.1Q + IPv4), chosen so that
    # the 32-bit loads of the destination address (hdr + 30, hdr + 34) are aligned.
    hdr = -50
    # r6 ctx, r7 verdict, r8 slot, r9 VLAN id found in the frame (-1: none)
    a.emit(mov64_reg(6, 1), mov64_imm(8, SLOT_OTHER), mov64_imm(7, _TC_ACT_OK), mov64_imm(9, -1))
    a.emit(mov64_reg(1, 6), mov64_imm(2, 0), mov64_reg(3, 10), add64_imm(3, hdr), mov64_imm(4, 38))
    a.emit(call(bpf.FUNC_SKB_LOAD_BYTES))
    a.jump(jmp_imm(JNE, 0, 0, 0), "count")  # shorter than any test frame
    a.emit(ldx(H, 5, 10, hdr + 12))
    a.jump(jmp_imm(JEQ, 5, _ETH_P_8021Q_LE, 0), "tag_in_frame")
    for label, l3 in (("untagged", hdr + 14), ("tag_in_frame", hdr + 18)):
        a.label(label)
        if label == "tag_in_frame":
            a.emit(ldx(H, 9, 10, hdr + 14), be16(9), and64_imm(9, 0x0FFF), ldx(H, 5, 10, hdr + 16))
        a.jump(jmp_imm(JNE, 5, _ETH_P_IP_LE, 0), "count")
        a.emit(ldx(B, 5, 10, l3 + 9))
        a.jump(jmp_imm(JNE, 5, 17, 0), "count")  # UDP
        a.emit(ldx(W, 5, 10, l3 + 16), and64_imm(5, _MASK_15_LE))
        a.jump(jmp_imm(JNE, 5, _NET_198_18_LE, 0), "count")
        a.jump(ja(0), "test_frame")
    a.label("test_frame")
    a.emit(mov64_imm(7, _TC_ACT_SHOT), mov64_imm(8, SLOT_UNTAGGED), ldx(W, 5, 6, _SKB_VLAN_PRESENT))
    a.jump(jmp_imm(JEQ, 5, 0, 0), "classify_tag")
    a.emit(ldx(W, 9, 6, _SKB_VLAN_TCI), and64_imm(9, 0x0FFF))
    a.label("classify_tag")
    a.jump(jmp_imm(JEQ, 9, -1, 0), "count")
    a.emit(mov64_imm(8, SLOT_TAGGED_EXPECTED))
    a.jump(jmp_imm(JEQ, 9, expected_vlan_id, 0), "count")
    a.emit(mov64_imm(8, SLOT_TAGGED_OTHER))
    a.label("count")
    a.emit(stx(W, 10, 8, -4), *ld_map_fd(1, map_fd), mov64_reg(2, 10), add64_imm(2, -4))
    a.emit(call(bpf.FUNC_MAP_LOOKUP_ELEM))
    a.jump(jmp_imm(JEQ, 0, 0, 0), "out")
    a.emit(mov64_imm(1, 1), atomic_add64(0, 1, 0))
    a.label("out")
    a.emit(mov64_reg(0, 7), exit_insn())
    return a.assemble()


@dataclass(frozen=True)
class RxCounts:
    """Cumulative counters of one receiving port (frames), in the order of the map's slots."""

    untagged: int
    tagged_expected: int
    tagged_other: int
    other: int

    def __sub__(self, before: RxCounts) -> RxCounts:
        return RxCounts(*(now - then for now, then in zip(astuple(self), astuple(before), strict=True)))

    def test_frames(self, expected_vlan_id: int = NO_VLAN) -> int:
        """Test frames that arrived as they should: untagged, or tagged with the expected id."""
        return self.untagged if expected_vlan_id == NO_VLAN else self.tagged_expected

    @classmethod
    def from_slots(cls, slots: list[int]) -> RxCounts:
        if len(slots) != SLOTS:
            raise ValueError(f"expected {SLOTS} counter slots, got {len(slots)}")
        return cls(*slots)
