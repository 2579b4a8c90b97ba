"""RFC 2544 searches, written once, behind the measurer interface."""
