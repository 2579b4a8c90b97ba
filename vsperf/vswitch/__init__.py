"""Virtual switch backends: OVS (userspace datapath), OVS-DPDK, Linux bridge, none."""
