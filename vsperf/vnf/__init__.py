"""VNF backends: loopbacks between two switch ports (network namespace, DPDK testpmd over vhost-user)."""
