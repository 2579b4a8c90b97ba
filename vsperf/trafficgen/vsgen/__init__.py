"""The `vsgen` generator: vsperf's own (backend.py), and its C + BPF engine as package data (csrc/)."""
