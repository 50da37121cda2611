"""Launch records (workloads/microbench/ssr_*) of microbench/src/sm_store_rate.cu's k_ssr for the replay tests
(tests/test_sm_store_rate_replay.py): the PTX nvcc makes for the H200 (nvcc -ptx -arch=sm_90a -O3), launched as the
host code does (one CTA per SM: 150 KiB dynamic shared memory, 32 x warps threads), 16 rounds instead of 64.
source.hardware names the case in microbench/results/h200_sm_store_rate_2026-12-05/sm_store_rate.json.
usage: python3 microbench/make_sm_store_rate_records.py [--nvcc nvcc]"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_records import compile_ptx, nvcc_version, write_record  # noqa: E402

RESULTS = "microbench/results/h200_sm_store_rate_2026-12-05/sm_store_rate.json"
ENTRY = "_Z5k_ssrILi{w}EEvPcPyjjm"
DYN = 150 * 1024
REPS = 16
SMALL = 256 << 10
OPS = {"st": 0, "ld": 1, "stw": 2}
# (grid, warps, width, op): one warp's store issue; one SM's store path (st.global.cg and plain st.global) against
# warps and width; its loads for reference; every SM storing / loading (the GPU-wide L2 write limit)
CASES = [(1, 1, 4, "st"), (1, 1, 16, "st"), (1, 4, 16, "st"), (1, 8, 4, "st"), (1, 8, 16, "st"), (1, 32, 16, "st"),
         (1, 8, 16, "stw"), (1, 32, 4, "stw"), (1, 8, 16, "ld"), (132, 8, 16, "st")]


def name(g, w, b, op):
    return f"ssr_g{g}_w{w}_b{b}_{op}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", default="nvcc")
    a = ap.parse_args()
    ptx = compile_ptx(a.nvcc, os.path.join(HERE, "src", "sm_store_rate.cu"))
    nv = nvcc_version(a.nvcc)
    for g, w, b, op in CASES:
        write_record(name(g, w, b, op), ptx, ENTRY.format(w=b), src="sm_store_rate.cu",
                     generator="microbench/make_sm_store_rate_records.py",
                     what=f"SSR grid={g} warps={w} width={b} op={op} region={SMALL}: out[2b] = CTA b's cycles for "
                          f"{REPS} rounds of 8 accesses per warp",
                     hardware={"results": RESULTS, "bench": "ssr",
                               "params": {"grid": g, "warps": w, "width": b, "op": OPS[op], "region": SMALL,
                                          "reps": 64}},
                     compiler=nv, grid=(g, 1, 1), block=(32 * w, 1, 1), shared_bytes=DYN,
                     buffers={"buf": {"dtype": "uint8", "shape": [g * SMALL], "init": "zeros",
                                      "l2_resident": True},   # the host's cudaMemset and the repetitions
                              "out": {"dtype": "uint64", "shape": [2 * g], "init": "poison"}},
                     params=[{"ptr": "buf"}, {"ptr": "out"}, {"u32": REPS}, {"u32": OPS[op]}, {"u64": SMALL}])
    print(f"wrote {len(CASES)} records")


if __name__ == "__main__":
    main()
