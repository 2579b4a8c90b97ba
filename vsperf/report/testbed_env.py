"""The Test Environment's entry for the testbed a run took (results.json's environment.testbed,
written by vsperf.pool.claim): its name, file, pool, what was skipped and why, how long the run
waited, whose expired lock it took over."""

from __future__ import annotations

from typing import Any


def chosen_testbed(choice: dict[str, Any]) -> tuple[str, list[str]]:
    """The entry's value (the testbed's name) and its sub-items."""
    pool = choice.get("pool") or []
    facts = [f"File: {choice.get('file', '?')}"]
    facts += [f"Pool: {', '.join(str(p) for p in pool)}"] if len(pool) > 1 else []
    facts += [f"Skipped: {s.get('file')}: {s.get('reason')} ({s.get('why')})" for s in choice.get("skipped") or ()]
    if choice.get("waited_s"):
        facts.append(f"Waited: {float(choice['waited_s']):.1f} s")
    facts += [f"Took over from run {t.get('run_id')} ({t.get('user')}@{t.get('controller')}) on host {t.get('host')}: "
              f"its lease had expired" for t in choice.get("took_over") or ()]
    return str(choice.get("name", "?")), facts
