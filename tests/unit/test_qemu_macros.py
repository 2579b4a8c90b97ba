"""vsperf.vnf.qemu.macros: VSPERF's per-VM list semantics and its macros, evaluated safely."""

from __future__ import annotations

import pytest

from vsperf.errors import ConfigError
from vsperf.vnf.qemu.macros import expand_macros, guest_setting, ip_step, mac_step, per_vm, safe_eval


def test_vmindex_is_replaced_first_so_eval_can_use_it() -> None:
    assert expand_macros("#EVAL(6+2*#VMINDEX)", 0) == "6"
    assert expand_macros("#EVAL(6+2*#VMINDEX)", 3) == "12"
    assert expand_macros("vm#VMINDEX", 1) == "vm1"


def test_mac_and_ip_step_by_index() -> None:
    assert expand_macros("#MAC(00:00:00:00:00:01,2)", 2) == "00:00:00:00:00:05"
    assert expand_macros("#MAC(00:00:00:00:00:ff)", 1) == "00:00:00:00:01:00"
    assert expand_macros("#IP(192.168.1.2,4)/24", 1) == "192.168.1.6/24"
    assert ip_step("198.18.0.255", 1) == "198.18.1.0"
    assert mac_step("ff:ff:ff:ff:ff:ff", 1) == "00:00:00:00:00:00"


def test_several_macros_in_one_string() -> None:
    assert expand_macros("#IP(10.0.0.1) #MAC(02:00:00:00:00:00) #EVAL(7//2)", 1) == \
        "10.0.0.2 02:00:00:00:00:01 3"


@pytest.mark.parametrize("expression, value", [("1+2*3", 7), ("(1+2)*3", 9), ("-4+10", 6), ("7/2", 3.5),
                                               ("2**10", 1024), ("17 % 5", 2)])
def test_arithmetic(expression: str, value: float) -> None:
    assert safe_eval(expression) == value


@pytest.mark.parametrize("expression", ["__import__('os').system('true')", "open('/etc/passwd')",
                                        "a + 1", "[1, 2]", "1 if 1 else 2", "9**9**9", "1/0", "'a' * 3"])
def test_anything_but_arithmetic_is_refused(expression: str) -> None:
    with pytest.raises(ConfigError):
        safe_eval(expression)


def test_bad_mac_and_ip_name_the_macro() -> None:
    with pytest.raises(ConfigError, match=r"#MAC\(zz\)"):
        expand_macros("#MAC(zz)", 0)
    with pytest.raises(ConfigError, match=r"#IP\(1\.2\.3\)"):
        expand_macros("#IP(1.2.3)", 0)


def test_per_vm_lists_extend_with_their_first_entry() -> None:
    assert per_vm(["a", "b"], 1) == "b"
    assert per_vm(["a", "b"], 5) == "a"
    assert per_vm("x#VMINDEX", 2) == "x2"
    assert per_vm([["#EVAL(6+2*#VMINDEX)", "#EVAL(7+2*#VMINDEX)"]], 1) == ["8", "9"]
    assert per_vm([(1, 2)], 0) == (1, 2)
    with pytest.raises(ConfigError):
        per_vm([], 0)


def test_guest_setting_reads_a_mapping() -> None:
    assert guest_setting({"GUEST_MEMORY": [1024, "#EVAL(512*4)"]}, "GUEST_MEMORY", 1) == "2048"
