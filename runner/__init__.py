"""warpgraph.runner"""
