"""results.json's text, rewritten after every measurement without encoding it all again.

The writer rewrites the whole file after each frame size so that nothing measured is lost, and
a run's file grows with every trial: encoding all of it each time made the rewrites quadratic
(13 tests x 5 frame sizes on the simulated DUT spent 4.5 s of CPU, most of the test run, in
json.dumps with indent, which runs in pure Python). A frame size's result never changes once
recorded, so its text is encoded once and spliced into the small rest of the document, which
is encoded each time. The text is exactly `json.dumps(run.to_dict(), indent=2)`.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from vsperf.results.model import FrameSizeResult, RunResults

INDENT = 2
# A frame size's slot in the encoded skeleton: a string json.dumps writes as "\u0000<n>\u0000"
# (a NUL cannot occur in an encoded string unescaped, so nothing else matches).
_SLOT = re.compile(r'^( *)"\\u0000(\d+)\\u0000"', re.MULTILINE)


def encode_json(data: Any) -> str:
    """`data` as results.json writes it (indent 2; NaN refused: jsonable() made it null)."""
    return json.dumps(data, indent=INDENT, allow_nan=False)


class ResultsEncoder:
    """Encodes successive states of one run, each frame size's result once."""

    def __init__(self) -> None:
        # id(result) -> (result, its text); the result is kept so that its id is never reused
        self._texts: dict[int, tuple[FrameSizeResult, str]] = {}

    def _text(self, result: FrameSizeResult) -> str:
        cached = self._texts.get(id(result))
        if cached is None or cached[0] is not result:
            cached = (result, encode_json(result.to_dict()))
            self._texts[id(result)] = cached
        return cached[1]

    def encode(self, run: RunResults) -> str:
        """The text of results.json for `run` (without the final newline)."""
        slots: list[str] = []
        tests = []
        for test in run.tests:
            data = replace(test, results=()).to_dict()
            data["results"] = [f"\0{len(slots) + i}\0" for i in range(len(test.results))]
            slots.extend(self._text(result) for result in test.results)
            tests.append(data)
        document = replace(run, tests=()).to_dict()
        document["tests"] = tests
        skeleton = encode_json(document)

        def splice(match: re.Match[str]) -> str:
            indent = match.group(1)
            return indent + slots[int(match.group(2))].replace("\n", "\n" + indent)

        return _SLOT.sub(splice, skeleton)
