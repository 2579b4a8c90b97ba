"""The test tree itself: pytest imports test modules by basename (no packages), so two test
files with the same name in tests/unit and tests/integration break collection of the suite."""

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_test_module_basenames_are_unique() -> None:
    # (a fixture package's __init__.py, e.g. fixtures_trex's stand-in client, is never imported as a test)
    names = Counter(p.name for p in TESTS.rglob("*.py")
                    if p.name not in ("conftest.py", "__init__.py") and "__pycache__" not in p.parts)
    assert [name for name, count in names.items() if count > 1] == []
