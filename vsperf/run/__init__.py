"""A run: the plan of tests, and the runner that deploys, measures and writes results."""
