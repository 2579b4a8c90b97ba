"""Shared testbeds: the locks a run takes on what it uses, their leases, waiting for a busy
testbed, and pools of testbeds (docs/testbed.rst, "Sharing a testbed").

- `state.py`: one host's locks as a value (who holds what, leases, who waits), pure;
- `hostlock.py`: that state in one file on the host, read and changed atomically over its executor;
- `testbedlock.py`: a testbed's locks over its hosts (the DUT host, each generator port);
- `lease.py`: the holder renews its lease while it runs, and stops the run when it cannot;
- `poolfile.py`: the testbed files of a run (repeated --testbed, pool files);
- `claim.py`: the run takes the first free testbed of its pool that can run its tests, or waits;
- `status.py`: `vsperf testbed status` and `vsperf testbed unlock --force`.
"""
