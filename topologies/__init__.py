"""Architecture specs: YAML -> pydantic :class:`ArchSpec` -> networkx graph of component instances.

``load_arch("h200", overrides=["tma.admission_depth=8"])``, ``build_graph(spec)`` (Contract 4)."""
from warpgraph.topologies.builder import build_graph, graph_summary
from warpgraph.topologies.loader import arch_json_schema, diff_arch, dump_arch, list_archs, load_arch
from warpgraph.topologies.schema import ArchSpec, register_variant

__all__ = ["ArchSpec", "load_arch", "dump_arch", "diff_arch", "arch_json_schema", "list_archs", "build_graph",
           "graph_summary", "register_variant"]
