"""Statistics digests of the bundled launches: ``stats_digests.py OUT.json [RECORD...]`` (run from the repository root).

Imports whichever ``warpgraph`` is first on PYTHONPATH, simulates each record of workloads/records/h200 (or the
named ones) on h200 with the trace cache off and writes per record a sha1 of ``r.stats`` and of ``r.metrics``
(wall-clock rows / keys dropped, as ab_case.py does), the cycles and the CPU seconds. Two trees give identical
digests iff their statistics are bit-identical."""
import hashlib, json, os, re, sys
import warpgraph as wg
from warpgraph.runner.simulate import simulate
from timed_run import WALL_CLOCK, stats_digest, timed_simulate
out = sys.argv[1]
recs = sys.argv[2:] or sorted(p for p in os.listdir('workloads/records/h200') if not p.endswith('.md'))
res = {}
for name in recs:
    path = os.path.join('workloads/records/h200', name)
    rec = wg.load_record(path)
    r, cpu = timed_simulate(simulate, rec)
    m = {k: v for k, v in r.metrics.items() if not re.search(WALL_CLOCK, k)}
    res[name] = {"stats": stats_digest(r),
                 "metrics": hashlib.sha1(repr(sorted(m.items(), key=lambda kv: kv[0])).encode()).hexdigest()[:16],
                 "cycles": r.metrics["cycles"], "cpu": round(cpu, 2)}
    print(name, res[name], flush=True)
json.dump(res, open(out, "w"), indent=1)
