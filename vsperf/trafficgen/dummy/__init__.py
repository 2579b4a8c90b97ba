"""The `dummy` generator: a simulated device under test (model.py, events.py) answering each trial."""
