"""Cost and accuracy of the RFC 2544 searches on the simulated (`dummy`) DUT.

For each frame size and DUT behaviour, prints the trials a search needed, the traffic time
they would take on a real generator (trial-seconds, without the generator's own waits) and
the error of the answer against the model's known truth. No assertions: a table to read.

Run: PYTHONPATH=. .venv/bin/python bench/bench_search.py
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vsperf.config import load_settings
from vsperf.host.host import Host
from vsperf.run.kinds import configure_traffic, run_traffic
from vsperf.traffic import Traffic
from vsperf.trafficgen.dummy.backend import DummyTrafficGenerator
from vsperf.trafficgen.dummy.model import back2back_truth_frames, throughput_truth_fps
from vsperf.units import RFC2544_FRAME_SIZES_BYTES

CAPACITY_FPS = {64: 9_000_000, 1518: 1_200_000}  # aggregate; line rate from about 380 B
BUFFER_FRAMES = 16_384
SEARCH_SETTINGS: dict[str, Any] = {
    "TRAFFICGEN_DURATION": 30,
    "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT": 0.1,
}
SCENARIOS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("cliff, loss 0", {"loss_model": "cliff"}, {}),
    ("gradual, loss 0", {"loss_model": "gradual"}, {}),
    ("gradual, loss 0.5%", {"loss_model": "gradual"}, {"TRAFFICGEN_LOSSRATE": 0.5}),
    ("noise 2%, 3 reps", {"noise": 0.02, "seed": 1}, {"TRAFFICGEN_RFC2544_TESTS": 3}),
    ("cliff + verify 60 s", {}, {"TRAFFICGEN_RFC2544_VERIFY": True}),
]


def generator(ctx: Host, dut: Mapping[str, Any]) -> DummyTrafficGenerator:
    shipped = load_settings(env={})
    model = {**shipped["TRAFFICGEN_DUMMY_DUT"], "capacity_fps": CAPACITY_FPS, "buffer_frames": BUFFER_FRAMES, **dut}
    return DummyTrafficGenerator(shipped.merged({"TRAFFICGEN_DUMMY_DUT": model}, "bench"), ctx)


def throughput_table(ctx: Host) -> None:
    print("RFC 2544 throughput (binary search, 30 s trials, resolution 0.1 % of line rate)")
    head = f"{'scenario':<20} {'size':>5} {'line fps':>11} {'truth fps':>11} {'found fps':>11} "
    print(head + f"{'error %':>8} {'trials':>6} {'trial-s':>8}")
    for name, dut, extra in SCENARIOS:
        for size in RFC2544_FRAME_SIZES_BYTES:
            gen = generator(ctx, dut)
            traffic = Traffic(frame_size_bytes=size)
            settings = {**SEARCH_SETTINGS, **extra}
            truth = throughput_truth_fps(gen.model, traffic, float(settings.get("TRAFFICGEN_LOSSRATE", 0.0)))
            out = run_traffic(gen, configure_traffic(traffic, load_settings(env={}).merged(settings, "bench")))
            found = out.metrics["tx_rate_fps"]
            assert isinstance(found, float)
            error = 100.0 * (found - truth) / truth
            print(
                f"{name:<20} {size:>5} {traffic.line_rate_fps:>11.0f} {truth:>11.0f} {found:>11.0f} "
                f"{error:>8.3f} {out.details['trial_count']:>6} {out.details['trial_time_s']:>8.0f}"
            )


def back2back_table(ctx: Host) -> None:
    print("\nRFC 2544 back-to-back (binary search on burst length, longest burst 2 s at line rate)")
    for granularity in (1, 100):
        print(f"granularity {granularity} frame(s)")
        head = f"{'size':>5} {'truth frames':>13} {'found':>10} {'error frames':>12} "
        print(head + f"{'trials':>6} {'trial-s':>8}")
        for size in RFC2544_FRAME_SIZES_BYTES:
            gen = generator(ctx, {})
            traffic = Traffic(traffic_type="rfc2544_back2back", frame_size_bytes=size)
            truth = back2back_truth_frames(gen.model, traffic)
            settings = {"TRAFFICGEN_DURATION": 2, "TRAFFICGEN_B2B_GRANULARITY_FRAMES": granularity}
            out = run_traffic(gen, configure_traffic(traffic, load_settings(env={}).merged(settings, "bench")))
            found = out.metrics["b2b_frames"]
            assert isinstance(found, int)
            error = f"{found - truth:12.1f}" if truth != float("inf") else f"{'(no limit)':>12}"
            print(
                f"{size:>5} {truth:>13.1f} {found:>10} {error} {out.details['trial_count']:>6} "
                f"{out.details['trial_time_s']:>8.2f}"
            )


def main() -> None:
    ctx = Host.probe()
    throughput_table(ctx)
    back2back_table(ctx)


if __name__ == "__main__":
    main()
