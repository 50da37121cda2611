"""Speed of the partitioned timing (runner/partitioned.py) against the single engine on one launch.

    python microbench/parallel/bench_partitioned.py OUT.json RECORD[:B=..,S=..] JOBS [JOBS...]

The functional pass runs once (as ``simulate`` runs it); then the timing pass runs once per JOBS entry on that
trace: ``c`` (single engine), N (N processes, GPC views) or ``Ncpc`` (N processes, CPC views). Every
partitioned run's statistics are compared with the first run of the same views. Writes machine facts and,
per run, timing seconds, simulated cycles per second and whether the statistics were identical.
"""
from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import time


def _digest(stats) -> list:
    return sorted((c, s, float(v)) for c, s, v in stats.rows())


def main() -> None:
    import warpgraph as wg
    from warpgraph.runner.partitioned import run_timing_partitioned
    from warpgraph.runner.simulate import _l1_bytes_per_sm, _run_functional
    from warpgraph.runner.timing import run_timing
    from warpgraph.workloads.scale import scale_record

    out_path, spec_s, jobs = sys.argv[1], sys.argv[2], sys.argv[3:]
    name, _, sizes = spec_s.partition(":")
    rec = wg.load_record(name)
    if sizes:
        rec = scale_record(rec, **{k: int(v) for k, v in (kv.split("=") for kv in sizes.split(","))})
    spec = wg.load_arch("h200")
    prog = rec.program()
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = ""
    res = {"record": spec_s, "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                                         "python": platform.python_version()},
           "git_commit": commit, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "runs": []}
    t = time.perf_counter()
    l2cap = getattr(spec.l2, "reuse_capacity_bytes", None) or spec.l2.size_bytes
    fres = _run_functional(rec, prog, want_trace=True, compute_values=False, max_steps=0, max_wall_seconds=0,
                           l2_capacity_bytes=l2cap, l1_capacity_bytes=_l1_bytes_per_sm(rec, prog, spec),
                           l1_sms=int(spec.sm.count))
    res["functional_s"] = time.perf_counter() - t
    res["dynamic_warp_instructions"] = int(fres.dynamic_warp_instructions)
    print("functional", res["functional_s"], flush=True)
    trace = fres.trace
    base: dict = {}
    for j in jobs:
        cpc = j.endswith("cpc")
        t = time.perf_counter()
        if j == "c":
            out = run_timing(trace, spec, record=rec)
        else:
            out = run_timing_partitioned(trace, spec, record=rec, jobs=int(j.removesuffix("cpc")),
                                         partition="cpc" if cpc else "gpc")
        wall = time.perf_counter() - t
        m = out.metrics
        same = None
        if j != "c":
            d = _digest(out.stats)
            key = "cpc" if cpc else "gpc"
            base.setdefault(key, d)
            same = d == base[key]
        row = {"jobs": j, "cycles": m["cycles"], "warp_instructions": m["warp_instructions"], "timing_s": wall,
               "cycles_per_s": m["cycles"] / wall, "warp_instructions_per_s": m["warp_instructions"] / wall,
               "stats_identical_to_first_run_of_these_views": same, "partitioned": m.get("partitioned"),
               "max_rss_mib_self": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
               "max_rss_mib_children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}
        res["runs"].append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "partitioned"}), flush=True)
        with open(out_path, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
