"""Fit the fan-out DRAM latency (run_dram_fanout.sh): cycles per step of L lock-step chains = the expected maximum
of L line latencies. Per background level, least squares of ``a + theta * H_L`` (H_L the harmonic number: the
expected maximum of L iid exponential excesses over a minimum ``a``). Writes DIR/fanout.json.

usage: python3 microbench/parse_dram_fanout.py microbench/results/h200_dram_fanout_2026-12-03
"""
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def harmonic(n: int) -> float:
    return sum(1.0 / i for i in range(1, n + 1))


def main(d: Path) -> dict:
    out = {"source": "microbench/src/dram_fanout.cu via run_dram_fanout.sh",
           "levels": _fit(d, contiguous=False), "contiguous_levels": _fit(d, contiguous=True)}
    (d / "fanout.json").write_text(json.dumps(out, indent=1) + "\n")
    return out


def _fit(d: Path, contiguous: bool) -> list:
    """Per background level: medians by L and the least-squares fit ``a + theta * H_L``. ``contiguous``: the
    lines of a step are consecutive lines of one 16 KiB block (rows prefixed ``C``), else random lines."""
    cyc, bw = defaultdict(list), defaultdict(list)
    for line in (d / "fanout.txt").read_text().splitlines():
        p = line.split()
        if contiguous:
            if len(p) != 6 or p[0] != "C":
                continue
            p = p[1:]
        elif len(p) != 5 or not p[0].isdigit():
            continue
        L, B, c, g = int(p[0]), int(p[1]), float(p[3]), float(p[4])
        cyc[(B, L)].append(c)
        bw[B].append(g)
    levels = []
    for B in sorted({b for b, _ in cyc}):
        Ls = sorted(L for b, L in cyc if b == B)
        ys = [statistics.median(cyc[(B, L)]) for L in Ls]
        xs = [harmonic(L) for L in Ls]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        theta = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        a = my - theta * mx
        rms = (sum((a + theta * x - y) ** 2 for x, y in zip(xs, ys)) / len(ys)) ** 0.5
        levels.append({"bg_blocks": B, "bg_gb_per_s": round(statistics.median(bw[B]), 1),
                              "cycles_by_lines": {str(L): round(y, 1) for L, y in zip(Ls, ys)},
                              "fit_min_cycles": round(a, 1), "fit_spread_cycles": round(theta, 1),
                              "fit_rms_cycles": round(rms, 1),
                              "spread_over_mean_latency": round(theta / ys[0], 3)})
    return levels


if __name__ == "__main__":
    res = main(Path(sys.argv[1]))
    for lv in res["levels"] + res["contiguous_levels"]:
        print(lv["bg_blocks"], lv["bg_gb_per_s"], lv["fit_min_cycles"], lv["fit_spread_cycles"], lv["fit_rms_cycles"],
              lv["spread_over_mean_latency"], list(lv["cycles_by_lines"].values()))
