"""warpgraph.components"""
