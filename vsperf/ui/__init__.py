"""The terminal: console and file logging, the progress reporter and its live line."""
