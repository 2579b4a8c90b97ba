"""DPDK processes shared by the vswitch and VNF backends: EAL arguments, lab settings, testpmd."""
