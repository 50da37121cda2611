"""Summarise ab_commits.sh results: ``ab_summary.py DIR`` -> per case best-of-reps CPU seconds of both trees, the
speed ratio base/new (> 1: the new tree is faster) and whether cycles and statistics are identical."""
import collections
import json
import pathlib
import sys

d = pathlib.Path(sys.argv[1])
runs = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(d.glob("*.json")):
    side, _, rest = f.stem.partition("_")
    r = json.loads(f.read_text())
    runs[r["record"]][side].append(r)
print("case | cycles base / new | best CPU s base / new | ratio base/new (>1 new faster) | stats identical")
worst = None
for case in sorted(runs):
    b, n = runs[case]["base"], runs[case]["new"]
    if not b or not n:
        print(f"{case} | missing runs")
        continue
    tb, tn = min(x["cpu_seconds"] for x in b), min(x["cpu_seconds"] for x in n)
    ratio = tb / tn
    worst = ratio if worst is None else min(worst, ratio)
    same = {x["stats_digest"] for x in b} == {x["stats_digest"] for x in n}
    print(f"{case} | {b[0]['cycles']:,.0f} / {n[0]['cycles']:,.0f} | {tb:.1f} / {tn:.1f} | {ratio:.3f} | {same}")
print(f"lowest ratio: {worst:.3f}" if worst is not None else "no runs")
