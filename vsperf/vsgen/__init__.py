"""vsgen, vsperf's own traffic generator: frames, engine protocol, build, session and results.

The engine itself (C + BPF) is in tools/vsgen; the backend is vsperf.trafficgen.vsgen.
"""
