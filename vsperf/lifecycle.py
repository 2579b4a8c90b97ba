"""Context managers for things vsperf starts: what a failed start created is removed at once."""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import Self

log = logging.getLogger(__name__)


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
        except BaseException as exc:
            try:
                self.stop()
            except Exception as failed:  # never hides why the start failed (a stop signal, above all)
                log.warning("%s: stopping after a failed start (%s) failed too: %s", type(self).__name__,
                            type(exc).__name__, failed)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
