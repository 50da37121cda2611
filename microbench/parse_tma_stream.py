"""Parse microbench/src/tma_stream.cu's output into a ``warpgraph-microbench/1`` document: STREAM lines (thread 0 of
one CTA per SM keeps ``stages`` 16 KiB TMA boxes in flight from an L2-resident tensor; SM sets by %smid), per case
the mean over launches 1-2 of the median per-SM cycles, the per-SM bytes per cycle and the aggregate bytes per SM
cycle / GB/s (all streaming SMs' bytes over the globaltimer span from the first start to the last end).
usage: python3 microbench/parse_tma_stream.py OUTDIR [OUT.json]"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standalone_results import mean_over_reps, write  # noqa: E402

IDENT = ("sms", "stride", "limit", "distinct", "stages", "nbox")
STATS = {"med_cycles": "cycles", "per_sm_bpc": "per_sm_bytes_per_cycle", "agg_bpc": "aggregate_bytes_per_cycle",
         "agg_gbps": "aggregate_gb_per_s", "sm_mhz": "sm_mhz"}


def parse(text: str) -> dict:
    return {"schema": "warpgraph-microbench/1",
            "results": mean_over_reps(text, "STREAM", IDENT, STATS, "tma_stream", "cycles", reps_beside=True)}


if __name__ == "__main__":
    d = write(sys.argv, "tma_stream", parse)
    print(f"{'sms':>4} {'dist':>4} {'st':>3} {'cycles':>9} {'B/cyc/SM':>9} {'agg B/cyc':>9} {'GB/s':>8} {'MHz':>7}")
    for r in d["results"]:
        p, s = r["params"], r["stats"]
        print(f"{p['sms']:4d} {p['distinct']:4d} {p['stages']:3d} {s['cycles']:9.0f} {s['per_sm_bytes_per_cycle']:9.2f} "
              f"{s['aggregate_bytes_per_cycle']:9.1f} {s['aggregate_gb_per_s']:8.1f} {s['sm_mhz']:7.1f}")
