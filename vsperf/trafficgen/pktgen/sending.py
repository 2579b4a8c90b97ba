"""Starting pktgen's ports and waiting for them: one thread per pktgen, each timed.

See vsperf.trafficgen.pktgen.backend for how a trial uses these.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence

from vsperf.trafficgen.pktgen import lua, replies
from vsperf.trafficgen.pktgen.client import LuaClient
from vsperf.trafficgen.pktgen.txclock import Counters, TxClock, Window

log = logging.getLogger(__name__)


def send_and_wait(
    clients: Sequence[LuaClient], senders: dict[int, list[int]], limit_s: float, *, start_first: bool
) -> dict[int, float]:
    """Wait for every pktgen's sending ports at once (one thread each, `senders`: pktgen index
    -> its ports), starting them first if `start_first`; each request's wall time."""
    elapsed: dict[int, float] = {}
    errors: list[BaseException] = []

    def run(instance: int, ports: list[int]) -> None:
        client = clients[instance]
        started = time.monotonic()
        try:
            done = replies.wait_result(client.call(lua.wait_done(ports, limit_s, start_first=start_first),
                                                   timeout_s=limit_s + 10.0))
        except BaseException as exc:  # re-raised in the caller's thread
            errors.append(exc)
            return
        elapsed[instance] = time.monotonic() - started
        if done.cut:
            log.warning("pktgen %d ports %s still sending after %.1f s: stopped", instance, ports, limit_s)

    threads = [threading.Thread(target=run, args=(i, p), name=f"pktgen-send-{i}") for i, p in senders.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return elapsed


def send_primed(
    clients: Sequence[LuaClient],
    senders: dict[int, list[int]],
    interfaces: Sequence[tuple[str | None, str]],
    ports: Sequence[tuple[LuaClient, int]],
    rates: Sequence[float],
    limit_s: float,
    first_frame_timeout_s: float,
    counters: Counters,
) -> list[Window | None]:
    """Start ports configured at one burst per lua.PRIME_PERIOD_S, raise each (`ports[i]`:
    its pktgen and port number, on interface `interfaces[i]`) to `rates[i]` once its first
    burst has left, wait until all are done; each one's transmit window from its interface's
    counter (read on the generator host through `counters`).

    Why: every pktgen.start rebuilds each mbuf of the port's pool before the first burst
    (50-700 ms measured here), and pktgen's pacing then owes every burst of that time and sends
    them back to back. Started slow, it owes none; the rate change restarts its pacing clock
    (see lua.set_rate). The achieved rate is measured over what follows the change (txclock).
    """
    clock = TxClock(interfaces, counters=counters)
    clock.start()
    try:
        for instance, instance_ports in senders.items():
            clients[instance].call(lua.start(instance_ports))
        for index, (client, port) in enumerate(ports):
            if not clock.wait_first_frame(index, first_frame_timeout_s + limit_s):
                log.warning("pktgen port %s sent nothing within %.0f s", port, first_frame_timeout_s + limit_s)
            client.call(lua.set_rate(port, rates[index]))
            clock.mark(index)
        send_and_wait(clients, senders, limit_s, start_first=False)
    finally:
        windows = clock.stop()
    series = clock.samples[0]
    if len(series) > 1:  # how finely the windows were timed
        log.debug("transmit clock: %d samples in %.3f s", len(series), series[-1].t_s - series[0].t_s)
    return windows
