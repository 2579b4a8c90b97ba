"""Load generators: CPU or memory stress around the traffic phase (phy2phy_cpu_load, ...)."""
