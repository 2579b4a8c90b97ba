"""Ethernet rate arithmetic (RFC 2544 frame sizes include the FCS, exclude 20 B of overhead)."""

ETHERNET_OVERHEAD_BYTES = 20  # preamble (7) + SFD (1) + inter-frame gap (12)
RFC2544_FRAME_SIZES_BYTES = (64, 128, 256, 512, 1024, 1280, 1518)
MIN_FRAME_BYTES = 64
MAX_FRAME_BYTES = 9018


def line_rate_fps(frame_size_bytes: float, link_speed_bps: float) -> float:
    """Frames per second one link carries at line rate: link_bps / ((size + 20) * 8) (a frame mix:
    its mean size)."""
    if frame_size_bytes <= 0:
        raise ValueError(f"frame size must be positive, got {frame_size_bytes}")
    return link_speed_bps / ((frame_size_bytes + ETHERNET_OVERHEAD_BYTES) * 8)


def l2_mbps(rate_fps: float, frame_size_bytes: float) -> float:
    """Layer-2 megabits per second as VSPERF reports `*_mbps`: size * 8 * fps / 1e6."""
    return rate_fps * frame_size_bytes * 8 / 1e6
