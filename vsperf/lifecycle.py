"""Context managers for things vsperf starts: what a failed start created is removed at once."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Self


class Started(ABC):
    """`with thing:` runs `start()`, and `stop()` on leaving, on error and after a failed start.

    `stop()` must be safe after a partial start and when called twice.
    """

    @abstractmethod
    def start(self) -> None:
        """Create or launch everything."""

    @abstractmethod
    def stop(self) -> None:
        """Remove everything `start` created (also what a failed `start` left half-made)."""

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
