"""How sure an answer is, next to the number in the report's metrics table."""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from docutils.core import publish_doctree
from settings_util import make_settings

from vsperf.executor import LocalExecutor
from vsperf.host.workdir import RunContext
from vsperf.report.confidence import confidence_note, with_confidence
from vsperf.report.formats import render_report
from vsperf.report.markup import format_value
from vsperf.results.load import load_results
from vsperf.results.writer import ResultsWriter
from vsperf.search.goal_config import goal_search_config_from_settings
from vsperf.search.mlr import mlr_throughput
from vsperf.traffic import Traffic
from vsperf.trafficgen.dummy.backend import DummyTrafficGenerator

METRICS = {
    "ndr_tx_rate_fps": 1000.0,
    "ndr_full_trials": 1,
    "ndr_rx_spread_percent": 0.0,
    "ndr_failed_confirmations": 2,
    "pdr_tx_rate_fps": 1100.0,
    "pdr_full_trials": 3,
    "pdr_rx_spread_percent": 0.25,
    "pdr_failed_confirmations": 0,
    "tx_rate_fps": 1000.0,
}


def test_the_note_says_trials_spread_and_failed_confirmations() -> None:
    assert confidence_note(METRICS, "ndr_tx_rate_fps") == (
        "(1 full-length trial, forwarding-rate spread 0.000 %, 2 failed confirmations, searched below)")
    assert confidence_note(METRICS, "pdr_tx_rate_fps") == "(3 full-length trials, forwarding-rate spread 0.250 %)"


def test_only_goal_rates_of_goal_searches_get_a_note() -> None:
    assert confidence_note(METRICS, "tx_rate_fps") is None  # no goal prefix
    assert confidence_note(METRICS, "ndr_full_trials") is None
    assert confidence_note({"ndr_tx_rate_fps": 5.0}, "ndr_tx_rate_fps") is None  # an older result
    assert with_confidence(METRICS, "tx_rate_fps") == 1000.0
    assert with_confidence(METRICS, "pdr_tx_rate_fps").startswith("1100.000 (3 full-length trials")


def test_a_searched_answer_shows_how_sure_it_is_next_to_it_in_the_report(tmp_path: Path) -> None:
    # End to end: an mlr search on a noisy simulated DUT -> results.json -> the RST report's
    # metrics table: the row of each goal's rate carries its own full-length trials, spread and
    # failed confirmations, as the search wrote them.
    dut = {"capacity_fps": 4_000_000, "noise": 0.02, "seed": 3, "loss_model": "gradual"}
    settings = make_settings({"TRAFFICGEN_DUMMY_DUT": dut, "TRAFFICGEN_DURATION": 60.0,
                              "TRAFFICGEN_SEARCH_INITIAL_DURATION_S": 1.0})
    ctx = RunContext(run_id="t", results_dir=tmp_path, work_dir=tmp_path, executor=LocalExecutor())
    outcome = mlr_throughput(DummyTrafficGenerator(settings, ctx), Traffic(frame_size_bytes=64),
                             goal_search_config_from_settings(settings, "mlr"))
    writer = ResultsWriter(tmp_path / "run", run_id="t", command_line=["vsperf", "phy2phy_tput"], simulated=True,
                           environment={}, settings={}, settings_sources={})
    index = writer.start_test(name="phy2phy_tput", description="LTD", deployment="p2p",
                              traffic_type="rfc2544_throughput", bidir=True, frame_modification=None,
                              parameters={}, components=[])
    writer.add_frame_size(index, 64, outcome)
    writer.finish_test(index, "passed")
    writer.finish_run("finished")
    (path,) = render_report(tmp_path / "run", ("rst",), plots=False, parallel=False)
    rows = {}  # metric -> result, from every table of the report
    for row in publish_doctree(path.read_text()).findall(nodes.row):
        cells = [" ".join(e.astext().split()) for e in row.findall(nodes.entry)]
        if len(cells) == 2:
            rows[cells[0]] = cells[1]
    metrics = load_results(tmp_path / "run").tests[0].results[0].metrics
    for goal in ("ndr", "pdr"):
        full, spread = metrics[f"{goal}_full_trials"], metrics[f"{goal}_rx_spread_percent"]
        assert isinstance(full, int) and full >= 1 and isinstance(spread, float)
        note = confidence_note(metrics, f"{goal}_tx_rate_fps")
        assert note is not None and note.startswith(f"({full} full-length trial")
        assert rows[f"{goal}_tx_rate_fps"] == f"{format_value(metrics[f'{goal}_tx_rate_fps'])} {note}"
