"""The otg generator (Open Traffic Generator API through snappi) and vsgen's OTG server."""
