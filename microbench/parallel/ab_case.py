"""One timed detailed run for the side-by-side commit comparison (ab_commits.sh): ``ab_case.py OUT.json RECORD``.

Imports whichever ``warpgraph`` is first on PYTHONPATH (the commit under test), simulates RECORD on h200 in this
fresh process with the trace cache off when that commit has one (each run pays its own functional pass, as
``warpgraph bench`` does) and writes the process CPU seconds of ``simulate()``, the cycles and a digest of the
statistics (wall-clock rows dropped) to OUT.json."""
import json
import subprocess
import sys

import warpgraph as wg
from warpgraph.runner.simulate import simulate

from timed_run import stats_digest, timed_simulate

out, path = sys.argv[1], sys.argv[2]
rec = wg.load_record(path)
r, cpu = timed_simulate(simulate, rec)
root = wg.__path__[0]
try:
    commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            timeout=10).stdout.strip()
except OSError:
    commit = ""
json.dump({"record": path.rstrip("/").split("/")[-1], "package": root, "commit": commit, "cpu_seconds": cpu,
           "cycles": r.metrics["cycles"], "warp_instructions": r.metrics.get("warp_instructions"),
           "stats_digest": stats_digest(r)},
          open(out, "w"), indent=1)
print(out, cpu)
