"""Analysis of runs and records: Perfetto/Chrome traces, utilisation over time, roofline bounds.

Imports the public API and ``warpgraph.core.tracing``; never the timing internals (works on recorded events).
"""
from warpgraph.analysis.perfetto import TraceValidationError, validate_chrome_trace, write_chrome_trace
from warpgraph.analysis.roofline import roofline, roofline_from_counts, with_simulated
from warpgraph.analysis.utilization import plot_utilization, utilization_frame

__all__ = ["write_chrome_trace", "validate_chrome_trace", "TraceValidationError", "utilization_frame",
           "plot_utilization", "roofline", "roofline_from_counts", "with_simulated"]
