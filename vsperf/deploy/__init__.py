"""One deployment on any host: generator ports (veth pairs or a testbed's cables), a switch, VNFs."""
