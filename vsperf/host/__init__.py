"""Where things run: hosts (this machine or SSH), the run's journal, and putting hosts back."""
