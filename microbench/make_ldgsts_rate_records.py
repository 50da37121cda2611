"""Launch records (workloads/microbench/lgs_*) of microbench/src/ldgsts_rate.cu for the replay tests
(tests/test_ldgsts_rate_replay.py): the PTX the card ran (nvcc -ptx -arch=sm_90a -O3), launched as the host code does
(G CTAs of 32 W threads, 150 KiB dynamic shared memory, each warp ``reps`` rounds of D coalesced cp.async of B bytes
per lane from its CTA's own region, then commit + wait_group 0). ``out[2 b]`` = CTA b's %clock64 span. Each record's
source.hardware names its row of microbench/results/h200_pending_2026-12-05/ldgsts_rate/ldgsts_rate.json.
usage: python3 microbench/make_ldgsts_rate_records.py [--nvcc nvcc]"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_records import compile_ptx, nvcc_version, write_record  # noqa: E402

RESULTS = "microbench/results/h200_pending_2026-12-05/ldgsts_rate/ldgsts_rate.json"
SMALL = 256 << 10
DYN = 150 * 1024
# (grid, warps, size, cg, depth, reps): round trips, one SM's rate at 4 / 16 B, every SM
CASES = [(1, 1, 4, 0, 1, 64), (1, 1, 16, 1, 1, 64), (1, 4, 4, 0, 8, 32), (1, 8, 4, 0, 32, 32),
         (1, 32, 4, 0, 32, 32), (1, 32, 16, 1, 32, 32), (1, 16, 16, 0, 8, 32), (132, 4, 4, 0, 32, 32)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", default="nvcc")
    a = ap.parse_args()
    ptx, nv = compile_ptx(a.nvcc, os.path.join(HERE, "src", "ldgsts_rate.cu")), nvcc_version(a.nvcc)
    for g, w, b, cg, d, reps in CASES:
        entry = f"_Z5k_lgsILi{16 if cg else b}ELi{cg}EEvPKcPyjjm"
        write_record(f"lgs_g{g}_w{w}_b{b}_{'cg' if cg else 'ca'}_d{d}", ptx, entry, src="ldgsts_rate.cu",
                     generator="microbench/make_ldgsts_rate_records.py",
                     what=f"LGS grid={g} warps={w} size={b} cg={cg} depth={d} region={SMALL}: out[2b] = CTA b's "
                          f"cycles over {reps} rounds",
                     hardware={"results": RESULTS, "bench": "ldgsts",
                               "params": {"grid": g, "warps": w, "size": b, "cg": cg, "depth": d,
                                          "region": SMALL}},
                     compiler=nv, grid=(g, 1, 1), block=(32 * w, 1, 1), shared_bytes=DYN,
                     buffers={"buf": {"dtype": "uint8", "shape": [g * SMALL], "init": "zeros", "l2_resident": True},
                              "out": {"dtype": "uint64", "shape": [2 * g], "init": "poison"}},
                     params=[{"ptr": "buf"}, {"ptr": "out"}, {"u32": reps}, {"u32": d}, {"u64": SMALL}])
    print(f"wrote {len(CASES)} records")


if __name__ == "__main__":
    main()
