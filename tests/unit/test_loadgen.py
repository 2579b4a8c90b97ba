from vsperf.loadgen.stressng import stress_ng_argv


def test_cpu_load_leaves_reserved_cores_free() -> None:
    argv = stress_ng_argv({"tool": "stress-ng", "load": 100, "reserved": 1, "pattern": "c"}, cpus=4)
    assert argv[argv.index("--cpu") + 1] == "3"
    assert argv[argv.index("--cpu-load") + 1] == "100"
    assert "--vm" not in argv


def test_memory_load_uses_load_memory_percent() -> None:
    argv = stress_ng_argv({"tool": "stress-ng", "load": 50, "reserved": 1, "pattern": "m", "load_memory": 80}, cpus=2)
    assert argv[argv.index("--vm") + 1] == "1"
    assert argv[argv.index("--vm-bytes") + 1] == "80%"
    assert "--cpu" not in argv
