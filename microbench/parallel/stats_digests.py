"""Statistics digests of the bundled launches: ``stats_digests.py OUT.json [RECORD...]`` (run from the repository root).

Imports whichever ``warpgraph`` is first on PYTHONPATH, simulates each record of workloads/records/h200 (or the
named ones) on h200 with the trace cache off and writes per record a sha1 of ``r.stats`` and of ``r.metrics``
(wall-clock rows / keys dropped, as ab_case.py does), the cycles and the CPU seconds. Two trees give identical
digests iff their statistics are bit-identical."""
import hashlib, inspect, json, sys, time, os
import warpgraph as wg
from warpgraph.runner.simulate import simulate
out = sys.argv[1]
recs = sys.argv[2:] or sorted(p for p in os.listdir('workloads/records/h200') if not p.endswith('.md'))
res = {}
for name in recs:
    path = os.path.join('workloads/records/h200', name)
    rec = wg.load_record(path)
    kw = {"trace_cache": False} if "trace_cache" in inspect.signature(simulate).parameters else {}
    c0 = time.process_time()
    r = simulate(rec, "h200", **kw)
    cpu = time.process_time() - c0
    st = r.stats
    keep = ~st["stat"].astype(str).str.contains("second|wall|share_pct")
    m = {k: v for k, v in r.metrics.items() if not any(s in k for s in ("second", "wall", "share_pct"))}
    res[name] = {"stats": hashlib.sha1(st[keep].to_csv(index=False).encode()).hexdigest()[:16],
                 "metrics": hashlib.sha1(repr(sorted(m.items(), key=lambda kv: kv[0])).encode()).hexdigest()[:16],
                 "cycles": r.metrics["cycles"], "cpu": round(cpu, 2)}
    print(name, res[name], flush=True)
json.dump(res, open(out, "w"), indent=1)
