"""Statistics collectors: context managers around the traffic phase of every frame size.

pidstat (per-process statistics of the DUT), cpu (per-core system CPU), ifstats (counters of
the generator's ports). See `vsperf.collectors.base` for the interface.
"""
