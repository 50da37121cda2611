"""Summarise run_stream_sizes.sh output (ncu raw CSV of the stream_sizes.cu launches) into stream_sizes.json.

usage: python3 microbench/parse_stream_sizes.py microbench/results/h200_stream_sizes_2026-12-03

Per launch: kernel, MiB per operand, grid, gpc__cycles_elapsed.max, sm__cycles_active.max, SM clock, DRAM read /
write bytes, SM store bytes (16 per thread for ew_copy / ew_triad). Derived (the sources of h200.yaml's values):
- fill_store_gb_per_s: the highest (DRAM read + store) bytes over the active window of any launch of >= 32 MiB
  (ew_triad reaches it; a copy whose output stays in L2 costs its store bytes like DRAM reads);
- read_gb_per_s: ew_read at the largest size (DRAM read bytes over the active window);
- write_cost_factor: what each DRAM write-back costs in read-byte units if the largest ew_copy / ew_triad are
  HBM-bound at read_gb_per_s (the larger of the two);
- launch_overhead_cycles: median of elapsed - active over all launches (kernels that touch memory).
"""
import csv
import json
import statistics
import sys
from pathlib import Path


def load(folder: Path) -> list[dict]:
    rows = list(csv.reader(open(folder / "stream_sizes.csv")))
    hi = next(i for i, r in enumerate(rows) if "Kernel Name" in r)
    h = rows[hi]
    g = lambda r, c: float(r[h.index(c)].replace(",", ""))
    out = []
    for r in rows[hi + 2:]:
        k = r[h.index("Kernel Name")]
        grid = int(g(r, "launch__grid_size"))
        n = grid * 256
        out.append({"kernel": k, "size_mib": n * 16 / 2 ** 20 if k != "page_touch" else None, "grid": grid,
                    "elapsed_cycles": g(r, "gpc__cycles_elapsed.max"), "active_cycles": g(r, "sm__cycles_active.max"),
                    "sm_hz": g(r, "sm__cycles_elapsed.avg.per_second"), "dram_read_bytes": g(r, "dram__bytes_read.sum"),
                    "dram_write_bytes": g(r, "dram__bytes_write.sum"), "lts_bytes": g(r, "lts__t_bytes.sum"),
                    "store_bytes": n * 16 if k in ("ew_copy", "ew_triad") else 0})
    return out


def summarise(rows: list[dict]) -> dict:
    ew = [r for r in rows if r["kernel"] != "page_touch"]
    rate = lambda r, b: b / (r["active_cycles"] / r["sm_hz"]) / 1e9
    big = [r for r in ew if r["size_mib"] >= 32]
    fill = max(rate(r, r["dram_read_bytes"] + r["store_bytes"]) for r in big)
    top = max(r["size_mib"] for r in ew)
    rd = next(r for r in ew if r["kernel"] == "ew_read" and r["size_mib"] == top)
    read = rate(rd, rd["dram_read_bytes"])
    wcost = max((read * 1e9 * r["active_cycles"] / r["sm_hz"] - r["dram_read_bytes"]) / r["dram_write_bytes"]
                for r in ew if r["size_mib"] == top and r["dram_write_bytes"] > 0)
    return {"fill_store_gb_per_s": round(fill, 1), "read_gb_per_s": round(read, 1),
            "write_cost_factor": round(wcost, 3),
            "launch_overhead_cycles": statistics.median(r["elapsed_cycles"] - r["active_cycles"] for r in rows)}


def main(folder: str) -> None:
    f = Path(folder)
    rows = load(f)
    res = {"schema": "warpgraph-stream-sizes/1", "source": str(f / "stream_sizes.csv"), "derived": summarise(rows),
           "launches": rows}
    (f / "stream_sizes.json").write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps(res["derived"], indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
