"""Launch records (workloads/microbench/sct_*) of microbench/src/store_scatter.cu's k_sct for replays against the
H200 (or H100) store_scatter runs: the PTX nvcc makes (nvcc -ptx -arch=sm_90a -O3), launched as the host code does
(one CTA per SM: 150 KiB dynamic shared memory, 32 x warps threads), 16 rounds instead of 64.
usage: python3 microbench/make_store_scatter_records.py [--nvcc nvcc]"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_records import compile_ptx, nvcc_version, write_record  # noqa: E402

ENTRY = "_Z5k_sctILi{b}EEvPcPyji"
DYN = 150 * 1024
REPS = 16
REGION = 256 << 10
RESULTS = "microbench/results/h100_units_stores_stalls_2026-12-07/store_scatter/store_scatter.json"   # H100 (no H200 lent)
# (grid, warps, layout, width): coalesced / mma-fragment rows / 32 rows / half sectors / 4 rows, one SM's 4 and 8
# warps (layouts 0 and 3 with 8- and 16-B lanes overlap the next instruction's bytes: not replayed)
CASES = [(1, 4, 0, 4), (1, 4, 1, 4), (1, 4, 2, 4), (1, 4, 3, 4), (1, 4, 4, 4), (1, 8, 0, 4), (1, 8, 1, 4),
         (1, 4, 2, 16)]


def name(g, w, layout, b):
    return f"sct_g{g}_w{w}_l{layout}_b{b}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", default="nvcc")
    a = ap.parse_args()
    ptx = compile_ptx(a.nvcc, os.path.join(HERE, "src", "store_scatter.cu"))
    nv = nvcc_version(a.nvcc)
    for g, w, layout, b in CASES:
        write_record(name(g, w, layout, b), ptx, ENTRY.format(b=b), src="store_scatter.cu",
                     generator="microbench/make_store_scatter_records.py",
                     what=f"SCT grid={g} warps={w} layout={layout} width={b}: out[2b] = CTA b's cycles for {REPS} "
                          f"rounds of 8 plain st.global per warp",
                     hardware={"results": RESULTS, "bench": "store_scatter",
                               "params": {"grid": g, "warps": w, "layout": layout, "width": b, "reps": 64}},
                     compiler=nv, grid=(g, 1, 1), block=(32 * w, 1, 1), shared_bytes=DYN,
                     buffers={"buf": {"dtype": "uint8", "shape": [g * REGION], "init": "zeros",
                                      "l2_resident": True},
                              "out": {"dtype": "uint64", "shape": [2 * g], "init": "poison"}},
                     params=[{"ptr": "buf"}, {"ptr": "out"}, {"u32": REPS}, {"u32": layout}])
    print(f"wrote {len(CASES)} records")


if __name__ == "__main__":
    main()
