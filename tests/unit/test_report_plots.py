"""The report's plots: drawn when the data is there, valid PNG files, the same bytes every time."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from report_fixtures import make_run

from vsperf.report.plots import aggregate_link_bps, plots_for_test, write_plots
from vsperf.results.load import load_results

Image = pytest.importorskip("PIL.Image", reason="Pillow (a matplotlib dependency) checks the PNG files")
pytest.importorskip("matplotlib", reason="plots need matplotlib")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _check_png(path: Path) -> tuple[int, int]:
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    with Image.open(path) as image:
        image.verify()  # checks chunks and CRCs
    with Image.open(path) as image:
        image.load()
        assert image.format == "PNG"
        colours = image.convert("RGB").getcolors(maxcolors=1_000_000)
        assert colours is not None and len(colours) > 10  # drawn, not blank
        return image.size


def test_every_plot_of_each_test(tmp_path: Path) -> None:
    results = make_run(tmp_path / "run")
    drawn = write_plots(load_results(results), results)
    kinds = {i: [Path(p.path).stem.split("_", 2)[-1] for p in plots] for i, plots in drawn.items()}
    # phy2phy_tput: throughput, latency, the trajectory of 64 B (4 trials) and its per-second rates
    assert kinds[0] == ["tput_throughput", "tput_latency", "tput_trajectory", "tput_persecond_64"]
    assert kinds[1] == ["back2back", "trajectory"]  # back2back: b2b frames and the 64 B search
    assert kinds[2] == []  # pvp_tput failed without results: nothing to draw
    for plots in drawn.values():
        for plot in plots:
            assert plot.path.startswith("plots/") and plot.caption
            width, height = _check_png(results / plot.path)
            assert width == 880 and 200 < height < 1000  # 8 in at 110 dpi
    per_second = drawn[0][-1]
    assert per_second.packet_size == 64 and "trial 4" in per_second.caption  # the verification trial
    assert all(p.packet_size is None for p in drawn[0][:-1])


def test_plots_are_reproducible(tmp_path: Path) -> None:
    results = make_run(tmp_path / "run")
    run = load_results(results)
    first = {p.path: (results / p.path).read_bytes() for p in plots_for_test(run, run.tests[0], results)}
    second = {p.path: (results / p.path).read_bytes() for p in plots_for_test(run, run.tests[0], results)}
    assert first == second


def test_line_rate_comes_from_the_trials_or_the_settings(tmp_path: Path) -> None:
    run = load_results(make_run(tmp_path / "run"))
    # 64 B line rate of two 10 GbE ports: 29.76 Mfps = 20 Gbit/s on the wire
    assert aggregate_link_bps(run, run.tests[0]) == pytest.approx(20e9)
    no_trials = replace(run.tests[2], bidir=False)
    assert aggregate_link_bps(run, no_trials) == pytest.approx(10e9)
    assert aggregate_link_bps(replace(run, settings={}), no_trials) is None


def test_a_test_with_single_trials_has_no_trajectory(tmp_path: Path) -> None:
    run = load_results(make_run(tmp_path / "run"))
    only_1518 = replace(run.tests[0], results=run.tests[0].results[1:])
    plots = plots_for_test(run, only_1518, tmp_path)
    assert [Path(p.path).name for p in plots] == ["test00_phy2phy_tput_throughput.png"]
