"""Run a step-driven test's steps, in order, against its deployment (VSPERF's step_run).

Each step's arguments are expanded (vsperf.steps.macros), its action runs, its output is filtered
by its `|regex`, and, unless it starts with '!', VSPERF's check of its effect runs. The step is
recorded (results.json `steps`) whatever happens; the first failure stops the test, which fails
with that step named. The steps' own VNFs and background programs are stopped at the end.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vsperf.config.vsperf_compat import TEST_PARAMS, is_ignored_vsperf_setting
from vsperf.errors import VsperfError
from vsperf.results.steps import StepRecord
from vsperf.steps.macros import StepError, expand, filter_output
from vsperf.steps.model import Step, check_command, step_vnfs
from vsperf.steps.tools import StepTools, shell_argv
from vsperf.steps.vswitch import StepVswitch
from vsperf.vnf.base import Vnf

log = logging.getLogger(__name__)

MAX_SLEEP_S = 3600.0
Settings = Any  # vsperf.config.Settings: merged() makes the next one


@dataclass
class StepEnv:
    """What a step-driven test's steps act on."""

    test: str
    settings: Settings  # the test's settings; settings setValue makes new ones
    tools: StepTools
    send_traffic: Callable[[Settings], list[dict[str, Any]]]  # one traffic type at every frame size
    record: Callable[[StepRecord], None]
    switch: StepVswitch | None = None  # None: the test's switch is not Open vSwitch, or the DUT is simulated
    scenario_vnfs: Sequence[Vnf] = ()  # the VNFs its deployment started (VNF0, VNF1, ...)
    constants: Mapping[str, Any] | None = None  # TOOLS, RESULTS_PATH, VSWITCH_BRIDGE_NAME
    hold: Callable[[str], None] | None = None  # the `wait` step: until the user says so
    parameters: Mapping[str, Any] = field(default_factory=dict)  # the test's TEST_PARAMS (its Parameters)


class StepRunner:
    """Runs `steps` in `env` (see the module docstring)."""

    def __init__(self, env: StepEnv, steps: Sequence[Step]) -> None:
        self.env = env
        self.steps = steps
        self.results: list[Any] = []
        self.labels: dict[str, int] = {}
        self.original = env.settings
        self.last_results: list[dict[str, Any]] = []
        self.sent_traffic = False
        self._vnf_order = step_vnfs(steps)

    def lookup(self, name: str) -> Any:
        constants = self.env.constants or {}
        if name in constants:
            return constants[name]
        return self.env.settings[name]

    def run(self) -> bool:
        """Run every step; True when one of them sent traffic (StepError: the first that failed)."""
        try:
            for step in self.steps:
                self._run_step(step)
        finally:
            self._stop_own()
        return self.sent_traffic

    def _run_step(self, step: Step) -> None:
        started = time.monotonic()
        result: Any = None
        try:
            args = expand(list(step.args), self.results, self.labels, self.lookup)
            regex = expand(step.regex, self.results, self.labels, self.lookup) if step.regex is not None else None
            log.info("%s: step %d %s %s", self.env.test, step.index, step.obj, step.action or "")
            result = self._act(step, args)
            if regex is not None:
                result = filter_output(result, regex)
            if step.check:
                why = self._check(step, result, args)
                if why:
                    raise StepError(f"its check failed: {why} (VSPERF's check of the step's effect; '!' skips it)")
        except (StepError, VsperfError, OSError, ValueError, TypeError) as exc:
            record = StepRecord(step.index, step.text, "failed", round(time.monotonic() - started, 3),
                                StepRecord.result_text(result), str(exc) or type(exc).__name__, step.check)
            self.env.record(record)
            raise StepError(f"step {step.index} {step.text}: {record.error}") from exc
        self.results.append(result)
        if step.label is not None:
            self.labels[step.label] = step.index
        self.env.record(StepRecord(step.index, step.text, "passed", round(time.monotonic() - started, 3),
                                   StepRecord.result_text(result), None, step.check))

    # --- objects --------------------------------------------------------------------------------

    def _act(self, step: Step, args: list[Any]) -> Any:
        kind, action = step.kind, step.action
        if kind == "vswitch":
            if self.env.switch is None:
                raise StepError("the vswitch object needs the test's Open vSwitch (VSWITCH ovs or ovs-dpdk, "
                                "a deployed DUT)")
            return getattr(self.env.switch, action)(*args)
        if kind in ("tools", "namespace", "veth"):
            return getattr(self.env.tools, "assert_" if action == "assert" else action)(*args)
        if kind == "settings":
            return self._settings(action, args)
        if kind == "trafficgen":
            if action == "get_results":
                return list(self.last_results)
            traffic = args[0] if args else {}
            if not isinstance(traffic, Mapping):
                raise StepError(f"send_traffic takes a TRAFFIC dictionary, got {type(traffic).__name__}")
            settings = self.env.settings.merged({"TRAFFIC": dict(traffic)}, f"step of test {self.env.test}") \
                if traffic else self.env.settings
            self.last_results = self.env.send_traffic(settings)
            self.sent_traffic = True
            return list(self.last_results)
        if kind in ("vnf", "VNF"):
            return self._vnf(step, args)
        if kind == "log":
            getattr(log, action)("%s: %s", self.env.test, " ".join(str(a) for a in args))
            return None
        if kind == "sleep":
            time.sleep(min(max(float(args[0]), 0.0), MAX_SLEEP_S))
            return None
        if kind == "wait":
            message = f"{self.env.test}: step {step.index} waits: press Enter to go on"
            log.info("%s", message)
            if self.env.hold is not None:
                self.env.hold(message)
            return None
        raise StepError(f"object {step.obj} has no action {action}")

    def _settings(self, action: str, args: list[Any]) -> Any:
        name = str(args[0])
        if action == "getValue":
            try:
                return self.lookup(name)
            except KeyError:
                raise StepError(f"no setting {name!r}") from None
        if action == "setValue" and name == TEST_PARAMS:
            return self._drop_test_params(args[1])
        if action == "setValue":
            self.env.settings = self.env.settings.merged({name: args[1]}, f"a step of test {self.env.test}")
            return None
        if name not in self.original:
            raise StepError(f"no setting {name!r} to reset")
        self.env.settings = self.env.settings.merged({name: self.original[name]}, f"test {self.env.test}")
        return None

    def _drop_test_params(self, value: Any) -> None:
        """VSPERF's `settings setValue TEST_PARAMS ''`: the test's Parameters dropped, its settings
        as before them (upstream's tests use it to get NICS back after `NICS: []`). vsperf does it
        where the Parameters name only VSPERF settings it does not use (NICS, WHITELIST_NICS:
        nothing to restore); anything else is one line naming them."""
        if value not in ("", {}, None):
            raise StepError(f"settings setValue TEST_PARAMS {value!r}: vsperf only drops the test's Parameters "
                            f"(''); set a setting with settings setValue NAME VALUE")
        used = sorted(name for name in self.env.parameters if not is_ignored_vsperf_setting(name))
        if used:
            raise StepError(f"settings setValue TEST_PARAMS '': vsperf cannot drop the test's Parameters mid-test "
                            f"({', '.join(used)}); set each with settings setValue NAME VALUE instead")

    def _step_vnf(self, name: str) -> Vnf:
        switch = self.env.switch
        if switch is None:
            raise StepError(f"{name} needs the test's Open vSwitch to attach its ports (VSWITCH ovs or ovs-dpdk)")
        index = self._vnf_order.index(name)
        vnf = switch.vnfs.get(index)
        if vnf is None:  # started before any of its ports was added: they are made now, unattached
            vnf = switch.vnfs[index] = switch.make_vnf(index)
            vnf.create(switch.vnf_offset + index, switch.mtu_bytes, switch.netns)
        return vnf

    def _vnf(self, step: Step, args: list[Any]) -> Any:
        if step.kind == "VNF":
            number = int(step.obj[3:])
            if number >= len(self.env.scenario_vnfs):
                raise StepError(f"{step.obj}: the deployment runs {len(self.env.scenario_vnfs)} VNF(s)")
            vnf = self.env.scenario_vnfs[number]
        else:
            vnf = self._step_vnf(step.obj)
        if step.action == "start":
            vnf.start()
            return None
        if step.action == "stop":
            vnf.stop()
            return None
        netns = vnf.shell_netns
        if netns is None:
            raise StepError(f"{step.obj} ({vnf.NAME}) has no shell vsperf can run {step.action} in")
        problem = check_command(str(args[0]))
        if problem:
            raise StepError(problem)
        proc = vnf.host.executor.run(shell_argv(str(args[0])), netns=netns, timeout_s=120.0, check=False)
        if proc.returncode != 0:
            raise StepError(f"the command exited with {proc.returncode} in {step.obj}")
        return proc.stdout

    # --- checks ---------------------------------------------------------------------------------

    def _check(self, step: Step, result: Any, args: list[Any]) -> str:
        """Why VSPERF's check of the step fails ("" when it holds)."""
        if step.kind == "vswitch" and self.env.switch is not None:
            return "" if self.env.switch.check(step.action, result, args) else f"{step.action} did not take effect"
        if step.kind == "tools":
            return "" if self.env.tools.check(step.action, result, args) else f"{step.action} returned nothing"
        if step.kind == "trafficgen":
            if step.action == "get_results":
                return "" if result == self.last_results else "results differ from the last traffic's"
            if not self.last_results:
                return "no result"
            last = self.last_results[-1]
            for key in ("b2b_frames", "throughput_rx_fps"):
                if key in last:
                    value = last[key]
                    return "" if isinstance(value, int | float) and value > 0 else f"{key} is {value}"
        return ""

    def _stop_own(self) -> None:
        """Stop the steps' own VNFs and background programs (the deployment's are its own)."""
        if self.env.switch is not None:
            for vnf in reversed(list(self.env.switch.vnfs.values())):
                try:
                    vnf.stop()
                except Exception as exc:  # teardown goes on: the run's release removes the rest
                    log.warning("stopping a step VNF failed: %s", exc)
        self.env.tools.stop_background()
