"""warpgraph.cli"""
