"""The `trafgen` generator: netsniff-ng's trafgen senders (sender.py, config.py) and a tc-BPF rx counter."""
