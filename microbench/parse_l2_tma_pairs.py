"""Parse a run of run_l2_tma_pairs.sh (src/l2_tma_pairs.cu) into ``l2_tma_pairs.json`` next to it.

usage: python3 microbench/parse_l2_tma_pairs.py RESULTS_DIR

Per profiled launch: the SMs (%smid) whose thread 0 streamed the same 1 MiB with cp.async.bulk in lock step, and
the SM reads per L2 lookup: n_sms x 1 MiB / 32 B over ``lts__t_sectors_srcunit_tex_op_read_lookup_{hit,miss}``
(2.00 for a pair that shares every lookup, 1.00 for one that shares none; ld.global.cg pairs of one GPC: 2.00)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from parse_l2_pairs import launches  # noqa: E402  (the ncu CSV of a run, per launch: its SM set and metrics)

MIB = 1 << 20


def parse(d: Path) -> dict:
    sets = []
    for sms, m in launches(d):
        look = (m["lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum"]
                + m["lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum"])
        sets.append({"sms": sms, "reads_per_lookup": round(len(sms) * MIB / 32 / look, 4) if look else None,
                     "tex_read_sectors": m["lts__t_sectors_srcunit_tex_op_read.sum"], "lookup_sectors": look,
                     "cycles": m["gpc__cycles_elapsed.max"], "dram_read_bytes": m["dram__bytes_read.sum"]})
    log = (d / "log.txt").read_text().splitlines()
    return {"provenance": {"script": "microbench/run_l2_tma_pairs.sh", "source": "microbench/src/l2_tma_pairs.cu",
                           "run": log[:3], "note": "clocks as found (--clock-control none), L2 flushed before "
                           "every launch (--cache-control all)"}, "sets": sets}


if __name__ == "__main__":
    d = Path(sys.argv[1])
    doc = parse(d)
    (d / "l2_tma_pairs.json").write_text(json.dumps(doc, indent=1) + "\n")
    for s in doc["sets"]:
        print(f"n={len(s['sms']):3d} sms={','.join(map(str, s['sms'][:6]))}{'...' if len(s['sms']) > 6 else ''} "
              f"reads/lookup {s['reads_per_lookup']}")
