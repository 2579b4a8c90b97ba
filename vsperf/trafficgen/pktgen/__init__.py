"""Pktgen-DPDK traffic generator backend (Lua socket client, process launcher, replies)."""
