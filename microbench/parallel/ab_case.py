"""One timed detailed run for the side-by-side commit comparison (ab_commits.sh): ``ab_case.py OUT.json RECORD``.

Imports whichever ``warpgraph`` is first on PYTHONPATH (the commit under test), simulates RECORD on h200 in this
fresh process with the trace cache off when that commit has one (each run pays its own functional pass, as
``warpgraph bench`` does) and writes the process CPU seconds of ``simulate()``, the cycles and a digest of the
statistics (wall-clock rows dropped) to OUT.json."""
import hashlib
import inspect
import json
import subprocess
import sys
import time

import warpgraph as wg
from warpgraph.runner.simulate import simulate

out, path = sys.argv[1], sys.argv[2]
rec = wg.load_record(path)
kw = {"trace_cache": False} if "trace_cache" in inspect.signature(simulate).parameters else {}
c0 = time.process_time()
r = simulate(rec, "h200", **kw)
cpu = time.process_time() - c0
st = r.stats
keep = ~st["stat"].astype(str).str.contains("second|wall|share_pct")
root = wg.__path__[0]
try:
    commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            timeout=10).stdout.strip()
except OSError:
    commit = ""
json.dump({"record": path.rstrip("/").split("/")[-1], "package": root, "commit": commit, "cpu_seconds": cpu,
           "cycles": r.metrics["cycles"], "warp_instructions": r.metrics.get("warp_instructions"),
           "stats_digest": hashlib.sha1(st[keep].to_csv(index=False).encode()).hexdigest()[:16]},
          open(out, "w"), indent=1)
print(out, cpu)
