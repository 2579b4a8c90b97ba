"""The receive counter's program (assembled here, loaded only in integration tests) and counts."""

import struct

import pytest

from vsperf.trafficgen.trafgen.bpf import EXIT, JMP, Insn, ja, mov64_imm
from vsperf.trafficgen.trafgen.rxcount import NO_VLAN, SLOTS, RxCounts, _Asm, counter_program


def test_labels_resolve_to_relative_offsets() -> None:
    a = _Asm()
    a.jump(ja(0), "end")
    a.emit(mov64_imm(0, 1), mov64_imm(0, 2))
    a.label("end")
    a.emit(mov64_imm(0, 3))
    insns = a.assemble()
    assert insns[0].off == 2  # skips the two moves
    assert len(insns) == 4


def test_program_shape() -> None:
    insns = counter_program(map_fd=7, expected_vlan_id=100)
    assert insns[-1].code == JMP | EXIT
    # Every jump lands inside the program.
    for pos, insn in enumerate(insns):
        if insn.code & 0x07 == JMP and insn.code not in (JMP | EXIT, JMP | 0x80):
            assert 0 <= pos + 1 + insn.off < len(insns)
    # The map fd and the expected VLAN id are baked in.
    assert any(i.imm == 7 and i.src == 1 for i in insns)
    assert any(i.imm == 100 for i in insns)
    assert all(len(i.encode()) == 8 for i in insns)


def test_encoding_matches_struct_bpf_insn() -> None:
    assert Insn(0xB7, dst=3, src=1, off=-2, imm=-1).encode() == struct.pack("<BBhi", 0xB7, 0x13, -2, -1)


def test_counts_subtract_and_select() -> None:
    before = RxCounts(10, 0, 0, 5)
    after = RxCounts.from_slots([110, 7, 2, 9])
    delta = after - before
    assert delta == RxCounts(100, 7, 2, 4)
    assert delta.test_frames(NO_VLAN) == 100
    assert delta.test_frames(100) == 7
    with pytest.raises(ValueError):
        RxCounts.from_slots([1] * (SLOTS + 1))
