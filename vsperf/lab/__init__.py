"""The local lab: real topologies of veth ports, namespaces, switches and VNFs on this machine.

The runner uses `deploy.build_deployment` (p2p, pvp, pvvpN, pvpvN, clean), `prereq.check_prerequisites`
(before anything is created) and `leftovers.cleanup_leftovers` (what killed runs left behind).
"""
