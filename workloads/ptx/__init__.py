"""warpgraph.workloads.ptx"""
