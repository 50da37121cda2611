"""Speed of the partitioned timing (runner/partitioned.py) against the single engine, one launch at a time.

    python microbench/parallel/bench_partitioned.py OUT.json RECORD[:B=..,S=..] JOBS [JOBS...]

JOBS: ``c`` (single engine) or a number of processes. Every partitioned run's stats (without wall-clock rows)
are compared with the first partitioned run's. Writes machine facts, per run wall / timing seconds, cycles/s.
"""
from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import time


def main() -> None:
    import warpgraph as wg
    from warpgraph.workloads.scale import scale_record

    out_path, spec_s, jobs = sys.argv[1], sys.argv[2], sys.argv[3:]
    name, _, sizes = spec_s.partition(":")
    rec = wg.load_record(name)
    if sizes:
        rec = scale_record(rec, **{k: int(v) for k, v in (kv.split("=") for kv in sizes.split(","))})
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = ""
    res = {"record": spec_s, "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                                         "python": platform.python_version(), "cpu": platform.processor()},
           "git_commit": commit, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "runs": []}
    base = None
    for j in jobs:
        t = time.perf_counter()
        r = wg.simulate(rec, "h200", jobs=None if j == "c" else int(j))
        wall = time.perf_counter() - t
        m = r.metrics
        df = r.stats
        df = df[df["component"] != "run"].reset_index(drop=True)
        same = None
        if j != "c":
            if base is None:
                base = df
            same = bool(df.equals(base))
        row = {"jobs": j, "cycles": m["cycles"], "warp_instructions": m["warp_instructions"], "wall_s": wall,
               "timing_s": m["timing_wall_seconds"], "functional_s": m["functional_wall_seconds"],
               "cycles_per_s_timing": m["cycles"] / m["timing_wall_seconds"],
               "stats_identical_to_first_partitioned": same, "partitioned": m.get("partitioned"),
               "max_rss_mib_self": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
               "max_rss_mib_children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}
        res["runs"].append(row)
        print(json.dumps(row), flush=True)
        with open(out_path, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
