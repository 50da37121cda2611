"""One timed detailed run and its statistics digest, shared by the side-by-side speed scripts (ab_case.py,
ab_inprocess.py, stats_digests.py); they sit beside it, so a plain ``import timed_run`` finds it.

``simulate`` is passed in: the caller picks which tree's ``warpgraph`` runs. The trace cache is off when that tree
has one (each run pays its own functional pass, as ``warpgraph bench`` does). The digest drops the wall-clock rows,
so two runs agree iff their statistics are bit-identical."""
import hashlib
import inspect
import time

WALL_CLOCK = "second|wall|share_pct"     # stats rows / metric keys that measure the host, not the simulated GPU


def timed_simulate(simulate, rec, arch: str = "h200"):
    """``(result, process CPU seconds)`` of ``simulate(rec, arch)`` with the trace cache off."""
    kw = {"trace_cache": False} if "trace_cache" in inspect.signature(simulate).parameters else {}
    c0 = time.process_time()
    r = simulate(rec, arch, **kw)
    return r, time.process_time() - c0


def stats_digest(r) -> str:
    """sha1 (16 hex digits) of the result's statistics table without its wall-clock rows."""
    st = r.stats
    keep = ~st["stat"].astype(str).str.contains(WALL_CLOCK)
    return hashlib.sha1(st[keep].to_csv(index=False).encode()).hexdigest()[:16]
