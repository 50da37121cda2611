"""In-process A/B of two trees: ``ab_inprocess.py PP_A PP_B RECORD N`` (from the repository root; PP_A / PP_B are
PYTHONPATH folders holding a ``warpgraph``). Both trees are imported in one process (``sys.modules`` swapped per run)
and run in the order A B B A ... (load drift cancels); prints best and median CPU seconds of
``simulate(rec, 'h200', trace_cache=False)`` per tree and whether the statistics digests agree."""
import sys, gc, statistics, importlib
from timed_run import stats_digest, timed_simulate
ppa, ppb, rec_name, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
base_path = list(sys.path)
mods = {}
def load(pp):
    for k in [k for k in sys.modules if k == 'warpgraph' or k.startswith('warpgraph.')]:
        del sys.modules[k]
    sys.path[:] = [pp] + base_path
    import warpgraph
    from warpgraph.runner.simulate import simulate
    import warpgraph.runner.timing, warpgraph.components  # noqa
    snap = {k: v for k, v in sys.modules.items() if k == 'warpgraph' or k.startswith('warpgraph.')}
    return snap, warpgraph, simulate
def activate(snap, pp):
    for k in [k for k in sys.modules if k == 'warpgraph' or k.startswith('warpgraph.')]:
        del sys.modules[k]
    sys.modules.update(snap)
    sys.path[:] = [pp] + base_path
A = load(ppa); B = load(ppb)
def run(V, pp):
    snap, wg, simulate = V
    activate(snap, pp)
    rec = wg.load_record('workloads/records/h200/' + rec_name)
    gc.collect()
    r, c = timed_simulate(simulate, rec)
    global last_split
    last_split = tuple(r.metrics.get(k) for k in ('functional_wall_seconds', 'timing_wall_seconds', 'wall_seconds'))
    return c, stats_digest(r)
ta, tb, dg = [], [], set()
order = []
for k in range(n):
    order += (['A', 'B'] if k % 2 == 0 else ['B', 'A'])
for x in order:
    c, d = run(A, ppa) if x == 'A' else run(B, ppb)
    (ta if x == 'A' else tb).append(c)
    dg.add(d)
    print(x, round(c, 3), d, 'func/timing/wall', [round(v or 0, 2) for v in last_split], flush=True)
ma, mb = statistics.median(ta), statistics.median(tb)
print(f"{rec_name} A best {min(ta):.3f} med {ma:.3f} | B best {min(tb):.3f} med {mb:.3f} | "
      f"ratio A/B best {min(ta) / min(tb):.3f} med {ma / mb:.3f} | digests {'same' if len(dg) == 1 else 'DIFF'}")
