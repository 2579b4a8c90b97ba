"""The holder's side of a lease: renew it while the run goes on, and stop the run when it cannot.

A `LeaseKeeper` thread renews the testbed lock every quarter of its lease, and mirrors the run's
journal to each host soon after it changes (so that whoever takes over after a SIGKILL or a
lost controller finds what to clean on the host itself). When the lock is gone (taken over,
unlocked by hand), or when no renewal succeeded for three quarters of the lease (a host
unreachable, its connection lost: the lease would expire and another run may take the testbed),
it calls `on_lost` once with one line saying why: the CLI stops the run there
(vsperf.signals.abort), its traffic with it, rather than measure on a testbed that may be
someone else's. The keeper's own clock (time.monotonic) only schedules renewals and counts how
long it has not renewed; whether a lease expired is the host's judgement (vsperf.pool.state).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from vsperf.host.journal import Journal
from vsperf.pool.state import LeaseLost
from vsperf.pool.testbedlock import TestbedLock

log = logging.getLogger(__name__)

RENEW_FRACTION = 0.25  # renew every quarter of the lease
STOP_FRACTION = 0.75  # stop the run when not renewed for three quarters of it
_TICK_S = 0.2  # how often the journal is looked at for changes to mirror
_RETRY_S = 1.0  # after a failed renewal


class LeaseKeeper:
    """Renews `lock` (holding) in a thread, mirroring `journal`; `on_lost(reason)` once if lost."""

    def __init__(self, lock: TestbedLock, journal: Journal | None, on_lost: Callable[[str], Any]) -> None:
        self.lock = lock
        self.journal = journal
        self.on_lost = on_lost
        self.lost: str | None = None
        self.renewals = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lease-{lock.holder.run_id}", daemon=True)
        self._mirrored: list[Any] | None = None
        self._snapshot: list[Any] | None = None
        self._sent = 0.0

    @property
    def interval_s(self) -> float:
        return self.lock.lease_s * RENEW_FRACTION

    def start(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop renewing (the caller then releases the lock)."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=60)

    def _journals(self) -> dict[str, list[dict[str, Any]]] | None:
        if self.journal is None:
            return None
        by_host: dict[str, list[dict[str, Any]]] = {}
        for entry in self.journal.entries():
            by_host.setdefault(entry.host, []).append(entry.as_dict())
        return by_host

    def _run(self) -> None:
        renewed_at = time.monotonic()  # the lock was just taken: its lease starts now
        due = renewed_at + self.interval_s
        pending: _Renewal | None = None
        last_error = "no answer from its hosts"
        while not self._stop.wait(_TICK_S):
            now = time.monotonic()
            if pending is not None and pending.done.is_set():
                error, pending = pending.error, None
                if isinstance(error, LeaseLost):
                    return self._lose(f"testbed {self.lock.testbed}: lost its lock on {error}")
                if error is not None:  # a host unreachable, its connection lost: the run's own commands say so
                    if str(error) != last_error:
                        log.warning("testbed %s: lock not renewed (%s); trying again", self.lock.testbed, error)
                    last_error, due = str(error), now + min(_RETRY_S, self.interval_s)
                else:
                    renewed_at, due = self._sent, self._sent + self.interval_s
                    self._mirrored = self._snapshot
                    self.renewals += 1
                    last_error = "no answer from its hosts"
            unrenewed = now - renewed_at
            if unrenewed > self.lock.lease_s * STOP_FRACTION:  # before the host lets another run take over
                return self._lose(f"testbed {self.lock.testbed}: its lock not renewed for {unrenewed:.0f} s "
                                  f"(lease {self.lock.lease_s:g} s): {last_error}")
            if pending is not None:
                continue
            journals = self._journals()
            snapshot = None if journals is None else sorted((h, len(e), repr(e)) for h, e in journals.items())
            if now < due and snapshot == self._mirrored:
                continue
            self._sent, self._snapshot = now, snapshot
            pending = _Renewal(self.lock, journals)
        return None

    def _lose(self, reason: str) -> None:
        self.lost = reason
        log.debug("%s", reason)
        self.on_lost(reason)


class _Renewal:
    """One renewal, in a thread of its own: a host that does not answer never holds the keeper."""

    def __init__(self, lock: TestbedLock, journals: dict[str, list[dict[str, Any]]] | None) -> None:
        self.error: BaseException | None = None
        self.done = threading.Event()
        threading.Thread(target=self._renew, args=(lock, journals), name="lease-renewal", daemon=True).start()

    def _renew(self, lock: TestbedLock, journals: dict[str, list[dict[str, Any]]] | None) -> None:
        try:
            lock.renew(journals)
        except Exception as exc:  # any failure is a renewal that did not happen
            self.error = exc
        finally:
            self.done.set()
