"""warpgraph.workloads"""
