"""warpgraph.explore"""
