"""warpgraph.studies"""
