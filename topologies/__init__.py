"""warpgraph.topologies"""
