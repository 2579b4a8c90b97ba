"""A frame mix (IMIX): several frame sizes sent in set proportions, interleaved.

Two spellings are accepted, both wherever a frame size is (TRAFFICGEN_PKT_SIZES, TRAFFIC imix):

- RFC 6985's genome: one letter per frame of a repeating group, e.g. ``aaaaaaaddddg`` (VSPERF's
  default: 7 frames of 64 B, 4 of 512 B, 1 of 1518 B). The letters are RFC 6985's table as VSPERF's
  Spirent driver had it: a 64, b 128, c 256, d 512, e 1024, f 1280, g 1518, h 2112. The order of
  the letters does not matter (VSPERF kept only the proportions), and neither does it here: the
  frames are interleaved as evenly as the proportions allow.
- a size list ``SIZE:WEIGHT,...`` as NFVbench and TRex write a "simple IMIX", e.g.
  ``64:7,570:4,1518:1``; ``IMIX`` is that simple IMIX.

A mix is named by its genome as given, or by its canonical size list: the name is what results,
CSVs and the report show in the packet size column. Sizes are 64..9000 bytes (FCS included),
weights positive whole numbers (at most 1024 frames in a group).

The line rate of a mix follows from its mean size with the 20 bytes of per-frame overhead:
link_bps / ((mean + 20) * 8); its L2 megabits per second from the mean size too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

# RFC 6985 section 4's size codes (VSPERF's Spirent driver, tools/pkt_gen/testcenter).
GENOME_SIZES_BYTES: dict[str, int] = {
    "a": 64, "b": 128, "c": 256, "d": 512, "e": 1024, "f": 1280, "g": 1518, "h": 2112,
}
SIMPLE_IMIX = "64:7,570:4,1518:1"  # NFVbench's and TRex's "IMIX"
MIX_MIN_FRAME_BYTES = 64
MIX_MAX_FRAME_BYTES = 9000
MAX_GROUP_FRAMES = 1024  # frames of one repeating group (the sum of the weights)
_GENOME = re.compile(r"[A-Za-z]+")
_PAIR = re.compile(r"\s*(-?\d+)\s*:\s*(-?\d+(?:\.\d+)?)\s*")


class MixError(ValueError):
    """A mix that cannot be sent; the message names the problem and the fix (one line)."""


@dataclass(frozen=True)
class FrameMix:
    """Frame sizes (bytes, FCS included) and their whole-number weights, named as the user wrote it."""

    name: str  # the genome, or the canonical size list "64:7,570:4,1518:1"
    sizes_bytes: tuple[int, ...]  # distinct, increasing
    weights: tuple[int, ...]  # frames of each size in one group, > 0

    def __post_init__(self) -> None:
        if not self.sizes_bytes or len(self.sizes_bytes) != len(self.weights):
            raise MixError(f"frame mix {self.name!r}: needs one weight per size")
        if list(self.sizes_bytes) != sorted(set(self.sizes_bytes)):
            raise MixError(f"frame mix {self.name!r}: sizes must be distinct, in increasing order")
        for size in self.sizes_bytes:
            if not MIX_MIN_FRAME_BYTES <= size <= MIX_MAX_FRAME_BYTES:
                raise MixError(f"frame mix {self.name!r}: size {size} B is outside "
                               f"{MIX_MIN_FRAME_BYTES}..{MIX_MAX_FRAME_BYTES} bytes")
        if any(w <= 0 for w in self.weights):
            raise MixError(f"frame mix {self.name!r}: weights must be positive whole numbers")
        if sum(self.weights) > MAX_GROUP_FRAMES:
            raise MixError(f"frame mix {self.name!r}: its weights add up to {sum(self.weights)}, more than "
                           f"{MAX_GROUP_FRAMES} frames in a group; use smaller weights in the same proportions")

    @property
    def group_frames(self) -> int:
        """Frames of one repeating group: the sum of the weights."""
        return sum(self.weights)

    @property
    def mean_bytes(self) -> float:
        """The mix's mean frame size, bytes (FCS included)."""
        return sum(s * w for s, w in zip(self.sizes_bytes, self.weights, strict=True)) / self.group_frames

    @property
    def largest_bytes(self) -> int:
        return self.sizes_bytes[-1]

    @property
    def shares(self) -> dict[int, float]:
        """Each size's share of the frames (0..1)."""
        return {s: w / self.group_frames for s, w in zip(self.sizes_bytes, self.weights, strict=True)}

    @property
    def size_list(self) -> str:
        """The canonical size list, e.g. "64:7,570:4,1518:1"."""
        return ",".join(f"{s}:{w}" for s, w in zip(self.sizes_bytes, self.weights, strict=True))

    @cached_property
    def pattern(self) -> tuple[int, ...]:
        """One group of frame sizes in sending order, interleaved as evenly as the weights allow
        (smooth weighted round robin: 7:4:1 gives a d a a d a g a d a d a, never a block of 7)."""
        current = [0] * len(self.weights)
        total = self.group_frames
        out: list[int] = []
        for _ in range(total):
            for i, weight in enumerate(self.weights):
                current[i] += weight
            best = max(range(len(current)), key=lambda i: (current[i], -i))
            current[best] -= total
            out.append(self.sizes_bytes[best])
        return tuple(out)

    def frames_of_size(self, total_frames: int) -> dict[int, int]:
        """How many of `total_frames` frames sent in pattern order have each size."""
        full, rest = divmod(total_frames, self.group_frames)
        counts = {s: full * w for s, w in zip(self.sizes_bytes, self.weights, strict=True)}
        for size in self.pattern[:rest]:
            counts[size] += 1
        return counts


def _from_weights(name: str, pairs: list[tuple[int, int]]) -> FrameMix:
    weights: dict[int, int] = {}
    for size, weight in pairs:
        weights[size] = weights.get(size, 0) + weight
    sizes = tuple(sorted(weights))
    return FrameMix(name, sizes, tuple(weights[s] for s in sizes))


def parse_genome(genome: str) -> FrameMix:
    """The mix of an RFC 6985 genome such as "aaaaaaaddddg" (named by the genome itself)."""
    text = genome.strip()
    if not _GENOME.fullmatch(text):
        raise MixError(f"IMIX genome {genome!r}: expected letters of RFC 6985's table "
                       f"({_letters()}), e.g. 'aaaaaaaddddg'")
    unknown = sorted({c for c in text if c not in GENOME_SIZES_BYTES})
    if unknown:
        hint = " (z, the path's MTU, is not supported: write the size in a size list)" if "z" in unknown else ""
        raise MixError(f"IMIX genome {genome!r}: letter {unknown[0]!r} does not exist; valid letters: "
                       f"{_letters()}{hint}")
    return _from_weights(text, [(GENOME_SIZES_BYTES[c], 1) for c in text])


def parse_size_list(text: str) -> FrameMix:
    """The mix of "SIZE:WEIGHT,..." (named by its canonical size list); "IMIX" is the simple IMIX."""
    spec = SIMPLE_IMIX if text.strip().upper() == "IMIX" else text
    pairs: list[tuple[int, int]] = []
    for part in spec.split(","):
        match = _PAIR.fullmatch(part)
        if match is None:
            raise MixError(f"frame mix {text!r}: expected SIZE:WEIGHT pairs separated by commas, "
                           f"e.g. '{SIMPLE_IMIX}'")
        size, weight = int(match.group(1)), float(match.group(2))
        if weight <= 0 or weight != int(weight):
            raise MixError(f"frame mix {text!r}: weight {match.group(2)} of size {size} must be a positive "
                           f"whole number")
        if not MIX_MIN_FRAME_BYTES <= size <= MIX_MAX_FRAME_BYTES:
            raise MixError(f"frame mix {text!r}: size {size} B is outside {MIX_MIN_FRAME_BYTES}.."
                           f"{MIX_MAX_FRAME_BYTES} bytes")
        pairs.append((size, int(weight)))
    mix = _from_weights("", pairs)
    return FrameMix(mix.size_list, mix.sizes_bytes, mix.weights)


def parse_mix(text: str) -> FrameMix:
    """A mix from either spelling: a size list when it holds a ':' (or is "IMIX"), else a genome."""
    stripped = text.strip()
    if ":" in stripped or stripped.upper() == "IMIX" or "," in stripped:
        return parse_size_list(stripped)
    return parse_genome(stripped)


def _letters() -> str:
    return ", ".join(f"{c}={s}" for c, s in GENOME_SIZES_BYTES.items())
