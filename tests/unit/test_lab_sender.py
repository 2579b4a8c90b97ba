"""The pacer that spaces trafgen's frames evenly."""

from vsperf.trafficgen.trafgen.sender import SendResult, pacer_argv


def test_pacer_rate_is_frames_times_bytes() -> None:
    argv = pacer_argv("g0", 1_000, 60)
    assert argv[:7] == ["tc", "qdisc", "replace", "dev", "g0", "root", "tbf"]
    assert argv[argv.index("rate") + 1] == "480000bit"  # 1 kpps * 60 B * 8
    assert int(argv[argv.index("burst") + 1]) == 4 * 60  # small rates: a few frames


def test_pacer_burst_grows_with_the_rate() -> None:
    argv = pacer_argv("g0", 1_000_000, 60)
    assert int(argv[argv.index("burst") + 1]) == 500 * 60  # 0.5 ms of frames


def test_send_result_rate() -> None:
    assert SendResult(0, 1000, 1000, 0.5).rate_fps == 2000
    assert SendResult(0, 0, 0, 0.0).rate_fps == 0
