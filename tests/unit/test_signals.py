"""One signal path: the first stop signal raises, later ones while stopping are only logged
(cleanup runs to its end), the report stays interruptible, handlers come back after."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from vsperf.signals import (
    Aborted,
    CommandStopped,
    Terminated,
    abort,
    interruptible,
    resume,
    settle,
    signals_blocked,
    stop_reason,
    stop_signals_raise,
    stoppable,
    stopping,
    stops_raised,
)


def _signal(sig: signal.Signals) -> None:
    os.kill(os.getpid(), sig)  # Python runs the handler before the next bytecode of this thread


def test_sigterm_and_sighup_raise_terminated_sigint_keyboardinterrupt() -> None:
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with stop_signals_raise(), pytest.raises(Terminated, match=f"received {sig.name}"):
            _signal(sig)
    with stop_signals_raise(), pytest.raises(KeyboardInterrupt) as info:
        _signal(signal.SIGINT)
    assert not isinstance(info.value, Terminated)
    assert stop_reason(info.value) == "interrupted by the user (Ctrl-C)"


def test_a_second_signal_lets_cleanup_finish(caplog: pytest.LogCaptureFixture) -> None:
    cleaned = []
    with stop_signals_raise():
        try:
            _signal(signal.SIGINT)
        except KeyboardInterrupt:
            assert stopping()
            _signal(signal.SIGINT)  # the second Ctrl-C: logged, not raised
            _signal(signal.SIGTERM)
            cleaned.append("done")
    assert cleaned == ["done"]
    assert "received SIGINT while stopping: cleanup goes on to its end" in caplog.text


def test_the_report_stays_interruptible_while_stopping() -> None:
    with stop_signals_raise():
        with pytest.raises(KeyboardInterrupt):
            _signal(signal.SIGINT)
        with interruptible(), pytest.raises(Terminated):
            _signal(signal.SIGTERM)


def test_resume_after_a_consumed_signal() -> None:
    with stop_signals_raise():
        with pytest.raises(Terminated):
            _signal(signal.SIGTERM)
        resume()  # --mode trafficgen-off: SIGTERM ended the wait, the run goes on
        with pytest.raises(Terminated):
            _signal(signal.SIGTERM)


class _SignalOnCollect:
    """Sends SIGINT when collected: the handler's KeyboardInterrupt is raised inside `__del__`,
    where Python prints "Exception ignored" and drops it (as in a GC callback of SQLAlchemy's)."""

    def __del__(self) -> None:
        _signal(signal.SIGINT)


def test_a_stop_whose_exception_was_lost_is_still_counted() -> None:
    with stop_signals_raise():
        before = stops_raised()
        with pytest.raises(Terminated):
            _signal(signal.SIGTERM)
        resume()  # a consumed signal is not counted
        assert stops_raised() == before
        _SignalOnCollect()  # collected at once: the raise is lost
        assert stops_raised() == before + 1 and stopping()



def test_a_dropped_stop_prints_no_traceback_and_other_unraisables_go_on(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[type[BaseException]] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(type(u.exc_value)))
    with stop_signals_raise():
        _SignalOnCollect()  # the stop: no "Exception ignored ... Traceback" for it
        sys.unraisablehook(_Unraisable(ValueError("a real bug in a __del__")))
    assert seen == [ValueError]
    assert sys.unraisablehook is not None and sys.unraisablehook(_Unraisable(OSError())) is None
    assert seen == [ValueError, OSError]  # the hook before the block is back


@dataclass
class _Unraisable:
    exc_value: BaseException
    object: object = None


def test_a_signal_lost_during_the_report_still_stops_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from vsperf.report import formats

    def render(*_args: object, **_kw: object) -> list[object]:
        _SignalOnCollect()
        return ["report.md"]
    monkeypatch.setattr(formats, "render_report", render)
    monkeypatch.setattr(formats, "check_output_dir", lambda *_a, **_kw: None)
    with stop_signals_raise():
        assert formats.report_after_run(tmp_path, ("md",), plots=False) == (["report.md"], True)
    assert "run stopped by a signal during the report" in caplog.text


def test_nested_blocks_share_the_outer_handlers_and_restore_them() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with stop_signals_raise():
        outer = signal.getsignal(signal.SIGTERM)
        with stop_signals_raise():
            assert signal.getsignal(signal.SIGTERM) is outer
        assert signal.getsignal(signal.SIGTERM) is outer
    assert signal.getsignal(signal.SIGTERM) is before


def test_blocked_signals_are_delivered_after_the_block() -> None:
    order = []
    with stop_signals_raise(), pytest.raises(Terminated):
        with signals_blocked():
            _signal(signal.SIGTERM)
            order.append("still running")
        order.append("not reached")
    assert order == ["still running"]


def test_stoppable_commands_end_with_their_reason() -> None:
    @stoppable
    def command() -> None:
        raise Terminated("received SIGHUP")

    with pytest.raises(CommandStopped, match=r"^received SIGHUP$"):
        command()


def test_once_settled_a_late_signal_changes_nothing() -> None:
    before = signal.getsignal(signal.SIGINT)
    with stop_signals_raise():
        settle(for_good=False)
        _signal(signal.SIGINT)  # the exit code is decided: ignored, not raised, not logged
        _signal(signal.SIGTERM)
    assert signal.getsignal(signal.SIGINT) is before  # a caller's handlers come back (tests)


def test_abort_from_another_thread_stops_the_main_thread_with_its_reason() -> None:
    assert abort("lost the lease") is False  # outside a block: nothing is signalled
    with stop_signals_raise(), pytest.raises(Aborted, match=r"^testbed lab\.yaml: lost its lock on host dut$"):
        threading.Thread(target=abort, args=("testbed lab.yaml: lost its lock on host dut",)).start()
        time.sleep(5)  # interrupted at once
    with stop_signals_raise(), pytest.raises(Terminated, match="received SIGTERM"):
        _signal(signal.SIGTERM)  # a real SIGTERM afterwards is itself again
