"""Just enough of the bpf(2) system call to load a small tc program and read its counters.

vsperf counts received test frames with a tc ingress program (see `vsperf.trafficgen.trafgen.rxcount`). The
usual tools for that (tc flower + gact, nftables) are optional kernel/Debian components that
minimal kernels lack, while BPF with cls_bpf is present wherever the kernel can run a virtual
switch test at all. The program is small enough to be assembled here; no compiler is needed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
import struct
from dataclasses import dataclass

# bpf(2) commands and types (include/uapi/linux/bpf.h)
BPF_MAP_CREATE = 0
BPF_MAP_LOOKUP_ELEM = 1
BPF_PROG_LOAD = 5
BPF_MAP_TYPE_ARRAY = 2
BPF_PROG_TYPE_SCHED_CLS = 3
BPF_PSEUDO_MAP_FD = 1

_SYSCALL_NR = {"x86_64": 321, "aarch64": 280, "riscv64": 280, "ppc64le": 361, "s390x": 351}
_ATTR_SIZE = 128  # bytes of union bpf_attr we pass (zero tail, accepted by every kernel)

# Instruction classes and fields
LD, LDX, ST, STX, ALU, JMP, ALU64 = 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x07
W, H, B, DW = 0x00, 0x08, 0x10, 0x18
IMM, MEM, ATOMIC = 0x00, 0x60, 0xC0
K, X = 0x00, 0x08
ADD, AND, MOV, END = 0x00, 0x50, 0xB0, 0xD0
JEQ, JGT, JNE, CALL, EXIT, JA = 0x10, 0x20, 0x50, 0x80, 0x90, 0x00
TO_BE = 0x08
FUNC_MAP_LOOKUP_ELEM = 1
FUNC_SKB_LOAD_BYTES = 26


@dataclass(frozen=True)
class Insn:
    """One eBPF instruction (struct bpf_insn)."""

    code: int
    dst: int = 0
    src: int = 0
    off: int = 0
    imm: int = 0

    def encode(self) -> bytes:
        return struct.pack("<BBhi", self.code, (self.src << 4) | self.dst, self.off, self.imm)


# Small constructors named after the kernel's BPF_* macros (include/linux/filter.h).
def mov64_reg(dst: int, src: int) -> Insn:
    return Insn(ALU64 | MOV | X, dst, src)


def mov64_imm(dst: int, imm: int) -> Insn:
    return Insn(ALU64 | MOV | K, dst, 0, 0, imm)


def add64_imm(dst: int, imm: int) -> Insn:
    return Insn(ALU64 | ADD | K, dst, 0, 0, imm)


def and64_imm(dst: int, imm: int) -> Insn:
    return Insn(ALU64 | AND | K, dst, 0, 0, imm)


def be16(dst: int) -> Insn:
    """Convert the low 16 bits of `dst` from network to host order."""
    return Insn(ALU | END | TO_BE, dst, 0, 0, 16)


def ldx(size: int, dst: int, src: int, off: int) -> Insn:
    return Insn(LDX | MEM | size, dst, src, off)


def stx(size: int, dst: int, src: int, off: int) -> Insn:
    return Insn(STX | MEM | size, dst, src, off)


def atomic_add64(dst: int, src: int, off: int) -> Insn:
    """lock *(u64 *)(dst + off) += src"""
    return Insn(STX | ATOMIC | DW, dst, src, off, ADD)


def jmp_imm(op: int, dst: int, imm: int, off: int) -> Insn:
    return Insn(JMP | op | K, dst, 0, off, imm)


def jmp_reg(op: int, dst: int, src: int, off: int) -> Insn:
    return Insn(JMP | op | X, dst, src, off)


def ja(off: int) -> Insn:
    return Insn(JMP | JA, 0, 0, off)


def call(func: int) -> Insn:
    return Insn(JMP | CALL, 0, 0, 0, func)


def exit_insn() -> Insn:
    return Insn(JMP | EXIT)


def ld_map_fd(dst: int, fd: int) -> tuple[Insn, Insn]:
    """The two-slot load of a map's address (BPF_LD_MAP_FD)."""
    return Insn(LD | DW | IMM, dst, BPF_PSEUDO_MAP_FD, 0, fd), Insn(0)


class BpfError(OSError):
    """A bpf(2) call failed (the verifier log, when there is one, is in the message)."""


class _Bpf:
    def __init__(self) -> None:
        nr = _SYSCALL_NR.get(platform.machine())
        if nr is None:
            raise BpfError(f"bpf(2) syscall number unknown for {platform.machine()}")
        self.nr = nr
        self.libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        self.libc.syscall.restype = ctypes.c_long

    def call(self, cmd: int, attr: ctypes.Array[ctypes.c_char]) -> int:
        ret = int(
            self.libc.syscall(ctypes.c_long(self.nr), ctypes.c_int(cmd), attr, ctypes.c_uint(_ATTR_SIZE))
        )
        if ret < 0:
            err = ctypes.get_errno()
            raise BpfError(err, f"bpf(cmd {cmd}) failed: {os.strerror(err)}")
        return ret


def _attr(payload: bytes) -> ctypes.Array[ctypes.c_char]:
    buf = ctypes.create_string_buffer(_ATTR_SIZE)
    ctypes.memmove(buf, payload, len(payload))
    return buf


class ArrayMap:
    """A BPF array map of u64 values indexed 0..entries-1 (owned: close() releases it)."""

    def __init__(self, entries: int) -> None:
        self._bpf = _Bpf()
        self.entries = entries
        spec = struct.pack("<IIIII", BPF_MAP_TYPE_ARRAY, 4, 8, entries, 0)  # type, key, value, entries, flags
        self.fd = self._bpf.call(BPF_MAP_CREATE, _attr(spec))

    def get(self, index: int) -> int:
        key = ctypes.c_uint32(index)
        value = ctypes.c_uint64(0)
        payload = struct.pack(
            "<IIQQQ", self.fd, 0, ctypes.addressof(key), ctypes.addressof(value), 0
        )
        self._bpf.call(BPF_MAP_LOOKUP_ELEM, _attr(payload))
        return int(value.value)

    def values(self) -> list[int]:
        return [self.get(i) for i in range(self.entries)]

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def load_sched_cls(insns: list[Insn], name: str) -> int:
    """Load a tc (SCHED_CLS) program; return its fd. The verifier log is in the error."""
    bpf = _Bpf()
    code = b"".join(i.encode() for i in insns)
    code_buf = ctypes.create_string_buffer(code, len(code))
    license_buf = ctypes.create_string_buffer(b"GPL")
    log_buf = ctypes.create_string_buffer(65536)
    payload = struct.pack(
        "<IIQQIIQII16s",
        BPF_PROG_TYPE_SCHED_CLS,
        len(insns),
        ctypes.addressof(code_buf),
        ctypes.addressof(license_buf),
        1,  # log_level: the verifier explains a rejection
        len(log_buf),
        ctypes.addressof(log_buf),
        0,  # kern_version
        0,  # prog_flags
        name.encode()[:15],
    )
    try:
        return bpf.call(BPF_PROG_LOAD, _attr(payload))
    except BpfError as exc:
        log = log_buf.value.decode(errors="replace").strip().splitlines()
        raise BpfError(exc.errno, f"{exc.strerror}; verifier: {' | '.join(log[-4:])}") from exc
