"""Parse a run of run_l2_pairs.sh (src/l2_coalesce_pairs.cu) into ``l2_pairs.json`` next to it.

usage: python microbench/parse_l2_pairs.py results/h200_l2_pairs_2026-12-03

``first_wave_smid``: the %smid of CTA i of a 132-CTA launch (one CTA per SM), i.e. the hardware CTA scheduler's
SM order; ``sets``: per profiled launch, the SMs (%smid) that read the same 1 MiB in lock step and the measured SM
reads per L2 lookup (``l1tex__m_xbar2l1tex_read_bytes`` / 32 /
``lts__t_sectors_srcunit_tex_op_read_lookup_{hit,miss}``).
"""
from __future__ import annotations

import csv
import gzip
import io
import json
import sys
from pathlib import Path


def launches(d: Path) -> list[tuple[list[int], dict[str, float]]]:
    """Per profiled launch of ``d/ncu.csv`` (or ``ncu.csv.gz``; the program's ``PLAN ... sms=a,b,...`` lines are in
    it, in launch order): the SMs of its set and its metrics. parse_l2_tma_pairs.py reads its runs through it."""
    f = d / "ncu.csv"
    lines = (f.read_text() if f.exists() else gzip.decompress((d / "ncu.csv.gz").read_bytes()).decode()).splitlines()
    plans = [ln for ln in lines if ln.startswith("PLAN")]
    rows = list(csv.DictReader(io.StringIO("\n".join(ln for ln in lines if ln.startswith('"')))))
    vals: dict[str, dict[str, float]] = {}
    for r in rows:
        vals.setdefault(r["ID"], {})[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
    return [([int(x) for x in plan.split("sms=")[1].split(",")], m)
            for plan, (_id, m) in zip(plans, sorted(vals.items(), key=lambda kv: int(kv[0])))]


def parse(d: Path) -> dict:
    sets = []
    for sms, m in launches(d):
        look = (m["lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum"]
                + m["lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum"])
        sets.append({"sms": sms, "reads_per_lookup": round(m["l1tex__m_xbar2l1tex_read_bytes.sum"] / 32 / look, 4),
                     "cycles": m["gpc__cycles_elapsed.max"], "dram_read_bytes": m["dram__bytes_read.sum"]})
    first = (d / "map.txt").read_text().splitlines()[0]
    order = [int(x) for x in first.split("smid:")[1].split()]
    log = (d / "log.txt").read_text().splitlines()
    return {"provenance": {"script": "microbench/run_l2_pairs.sh", "source": "microbench/src/l2_coalesce_pairs.cu",
                           "run": [ln for ln in log[:3]], "note": "clocks as found (--clock-control none), "
                           "L2 flushed before every launch (--cache-control all)"},
            "first_wave_smid": order, "sets": sets}


if __name__ == "__main__":
    d = Path(sys.argv[1])
    out = d / "l2_pairs.json"
    out.write_text(json.dumps(parse(d), indent=1) + "\n")
    print(f"wrote {out}")
