"""warpgraph.workloads.functional"""
