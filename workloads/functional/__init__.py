"""warpgraph.workloads.functional: grid-batched SIMT functional executor + trace (Contract 2)."""
from .run import FunctionalResult, run_functional
from .trace import KernelTrace, WarpStream

__all__ = ["run_functional", "FunctionalResult", "KernelTrace", "WarpStream"]
