"""What each step of a step-driven test (TestSteps) did, as results.json records it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

STEP_STATUSES = ("passed", "failed")
RESULT_MAX_CHARS = 2000  # a step's result as recorded (a dump of flows can be long)


@dataclass(frozen=True)
class StepRecord:
    """One step that ran: as written, how it ended, what it returned (as text, bounded)."""

    index: int  # 0-based: #STEP[index]
    step: str  # the step as written (JSON)
    status: str  # passed | failed
    duration_s: float
    result: str = ""  # what the step returned, as JSON text (shortened to RESULT_MAX_CHARS)
    error: str | None = None  # why it failed
    checked: bool = True  # False: '!' (its result was not checked)

    def __post_init__(self) -> None:
        if self.status not in STEP_STATUSES:
            raise ValueError(f"step status is one of {', '.join(STEP_STATUSES)}, not {self.status!r}")

    @staticmethod
    def result_text(value: Any) -> str:
        """`value` as the record keeps it."""
        if value is None:
            return ""
        text = json.dumps(value, default=str) if not isinstance(value, str) else value
        return text if len(text) <= RESULT_MAX_CHARS else text[:RESULT_MAX_CHARS - 3] + "..."

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "step": self.step, "status": self.status, "duration_s": self.duration_s,
                "result": self.result, "error": self.error, "checked": self.checked}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StepRecord:
        error = data.get("error")
        return cls(index=int(data["index"]), step=str(data["step"]), status=str(data["status"]),
                   duration_s=float(data["duration_s"]), result=str(data.get("result") or ""),
                   error=None if error is None else str(error), checked=bool(data.get("checked", True)))
