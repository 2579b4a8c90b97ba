"""The testbed file: hosts (this machine or SSH), which one is the DUT, which one generates, and
the cabling between them (`vsperf.testbed.file.load_testbed`)."""
