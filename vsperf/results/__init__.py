"""Result files of a run: results.json (versioned, see `model`) and one CSV per test.

The runner writes them through `ResultsWriter`; everything else reads them with
`load_results`, never from the runner's memory.
"""

from vsperf.results.load import load_results
from vsperf.results.model import (
    RESULTS_FILENAME,
    SCHEMA_VERSION,
    FrameSizeResult,
    RunResults,
    TestResult,
)
from vsperf.results.writer import ResultsWriter

__all__ = [
    "RESULTS_FILENAME",
    "SCHEMA_VERSION",
    "FrameSizeResult",
    "ResultsWriter",
    "RunResults",
    "TestResult",
    "load_results",
]
