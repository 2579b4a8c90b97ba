"""What the store holds, as frozen records: a series' identity, its points, a run's summary."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any


def store_run_id(run_id: str, started_at: datetime) -> str:
    """A run's id in the store: its start (UTC, to the second) and its id. A run id is 6 hex
    digits, too few to stay unique over a lab's years of runs; with its start second it does, and
    recording the same results.json again still finds the same run."""
    return f"{started_at:%Y%m%dT%H%M%S}-{run_id}"


SERIES_FIELDS = ("test", "deployment", "packet_size", "metric", "vswitch", "vnf", "trafficgen", "testbed", "variant",
                 "frame_mix")


@dataclass(frozen=True)
class SeriesKey:
    """One metric of one test at one frame size on one setup, followed across runs."""

    test: str
    deployment: str
    packet_size: int  # Ethernet frame size in bytes, FCS included (a frame mix: its mean, rounded)
    metric: str  # a result key, e.g. throughput_rx_fps
    vswitch: str  # the vswitch component's name ("simulated" on the dummy DUT)
    vnf: str  # the VNF component's name, "" without one
    trafficgen: str
    testbed: str  # the testbed file's stem, "local" on the local lab
    variant: str = ""  # the --test-params element of a sweep, "" otherwise
    frame_mix: str = ""  # a frame mix's name (IMIX), "" for one frame size

    @property
    def key(self) -> str:
        """The unique text the store indexes a series by."""
        # A series of one frame size keeps the key it had before frame mixes (no trailing "").
        fields = SERIES_FIELDS if self.frame_mix else SERIES_FIELDS[:-1]
        return json.dumps([getattr(self, name) for name in fields], separators=(",", ":"))

    @property
    def label(self) -> str:
        """How a person reads the series, e.g. 'phy2phy_tput p2p 64 B throughput_rx_fps'."""
        size = f"IMIX {self.frame_mix}" if self.frame_mix else f"{self.packet_size} B"
        return f"{self.test} {self.deployment} {size} {self.metric}"

    @property
    def size(self) -> str:
        """The frame size as a person reads it: "64 B", or "IMIX aaaaaaaddddg"."""
        return f"IMIX {self.frame_mix}" if self.frame_mix else f"{self.packet_size} B"

    @property
    def setup(self) -> str:
        """The setup part: vswitch, VNF, generator, testbed (and the sweep element)."""
        parts = [self.vswitch, self.vnf, self.trafficgen, self.testbed, self.variant]
        return " · ".join(p for p in parts if p)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in SERIES_FIELDS}


@dataclass(frozen=True)
class Series:
    """A series as stored: its id and its key."""

    series_id: int
    key: SeriesKey


@dataclass(frozen=True)
class Point:
    """One run's value of a series."""

    run_id: str
    started_at: datetime  # the run's start, UTC
    value: float
    test_index: int = 0
    versions: dict[str, str] = field(default_factory=dict)  # component role -> "name version"
    tags: dict[str, str] = field(default_factory=dict)
    report: str | None = None  # where the run's report is (a URL or a path), if known


@dataclass(frozen=True)
class RunSummary:
    """A recorded run, as `vsperf history list` shows it."""

    run_id: str
    started_at: datetime
    finished_at: datetime | None
    status: str
    vsperf_version: str
    hostname: str
    testbed: str
    simulated: bool
    results_dir: Path
    report: str | None  # the HTML report's file name in results_dir
    tests: int
    measurements: int
    tags: dict[str, str] = field(default_factory=dict)
