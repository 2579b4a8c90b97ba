"""Packet captures of the generator ports (TRAFFIC capture, the frame modification check): pcap
files written into the results directory, read back and dissected by vsperf itself."""
