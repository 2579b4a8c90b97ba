"""Traffic generator backends: each runs single trials behind the measurer interface."""
