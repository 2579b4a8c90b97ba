"""VSPERF's step-driven tests (TestSteps): parsed and checked before anything is deployed, then run
one step at a time against the test's deployment (docs/integration.rst)."""
