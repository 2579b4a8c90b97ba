"""Each step of a step-driven test in results.json: recorded as it ran, read back."""

from __future__ import annotations

from pathlib import Path

import pytest

from vsperf.results.load import load_results
from vsperf.results.steps import RESULT_MAX_CHARS, StepRecord
from vsperf.results.writer import ResultsWriter


def test_a_record_round_trips_and_is_bounded() -> None:
    record = StepRecord(2, '["tools", "eval", "1+1"]', "passed", 0.01, StepRecord.result_text(2))
    assert StepRecord.from_dict(record.to_dict()) == record
    assert StepRecord.result_text(None) == "" and StepRecord.result_text(["a", 1]) == '["a", 1]'
    assert len(StepRecord.result_text("x" * 10_000)) == RESULT_MAX_CHARS
    with pytest.raises(ValueError, match="step status is one of passed, failed"):
        StepRecord(0, "[]", "running", 0.0)


def test_the_writer_records_steps_into_results_json(tmp_path: Path) -> None:
    writer = ResultsWriter(tmp_path, run_id="ab12", command_line=["vsperf"], simulated=True, environment={},
                           settings={}, settings_sources={})
    index = writer.start_test(name="t", description="", deployment="clean", traffic_type="rfc2544_throughput",
                              bidir=True, frame_modification=None, parameters={}, components=[])
    writer.add_step(index, StepRecord(0, '["vswitch", "add_switch", "b"]', "passed", 0.1))
    writer.add_step(index, StepRecord(1, '["tools", "assert", "1 > 2"]', "failed", 0.0, "", "condition '1 > 2' is not "
                                                                                        "true"))
    writer.finish_test(index, "failed", "step 1 failed")
    writer.finish_run("finished")
    steps = load_results(tmp_path).tests[0].steps
    assert [(s.index, s.status, s.error) for s in steps] == [(0, "passed", None),
                                                             (1, "failed", "condition '1 > 2' is not true")]
