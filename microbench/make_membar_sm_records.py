"""Launch records (workloads/microbench/msm_*) of microbench/src/membar_sm.cu's k_msm for
tests/test_membar_sm.py: the PTX nvcc makes for the H200 (nvcc -ptx -arch=sm_90a -O3), launched as the host code
does (1 CTA per SM: 32 x (1 + loaders) threads, 150 KiB dynamic shared memory), with one fence instead of 16 and fewer loader
batches (32) than the device run (16 / 256) to keep the tests short. source.hardware names the case in
microbench/results/h200_membar_sm_2026-12-05/membar_sm.json (the H200 run).
usage: python3 microbench/make_membar_sm_records.py [--nvcc nvcc]"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_records import compile_ptx, nvcc_version, write_record  # noqa: E402

ENTRY = "_Z5k_msmPKcPcPjPyjjj"
DYN = 150 * 1024
ITERS, BATCHES = 4, 32
CTA_COLD = 1 << 20
RESULTS = "microbench/results/h200_membar_sm_2026-12-05/membar_sm.json"
# (grid, loaders, flags): the idle fence and atomic; one SM with 8 loader warps (L2 hits, DRAM misses, stores); CTA 0
# alone with loaders among 131 idle SMs (8: hits, 9: misses); every SM with 4 loaders (fence / atomic, hits / misses)
CASES = [(1, 0, 0), (1, 0, 4), (1, 8, 0), (1, 8, 1), (1, 8, 3), (132, 8, 8), (132, 8, 9),
         (132, 4, 0), (132, 4, 1), (132, 4, 4), (132, 4, 5)]


def name(g, n, fl):
    return f"msm_g{g}_l{n}" + (f"_x{fl}" if fl else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", default="nvcc")
    a = ap.parse_args()
    ptx = compile_ptx(a.nvcc, os.path.join(HERE, "src", "membar_sm.cu"))
    nv = nvcc_version(a.nvcc)
    for g, n, fl in CASES:
        cold = max(64 << 20 if fl & 8 else 0, g * CTA_COLD) if fl & 1 else 16
        write_record(name(g, n, fl), ptx, ENTRY, src="membar_sm.cu",
                     generator="microbench/make_membar_sm_records.py",
                     what=f"MSM grid={g} loaders={n} flags={fl}: out[4b] = 100 x mean fence (flag 4: acq_rel atom) "
                          "cycles, out[4b+1] / out[4b+3] = the loaders' mean cycles per 8-load batch",
                     hardware={"bench": "msm", "params": {"grid": g, "loaders": n, "flags": fl},
                               "results": RESULTS},
                     compiler=nv, grid=(g, 1, 1), block=(32 * (1 + n), 1, 1), shared_bytes=DYN,
                     buffers={"warm": {"dtype": "uint8", "shape": [8 << 20], "init": "zeros", "l2_resident": True},
                              "cold": {"dtype": "uint8", "shape": [cold], "init": "zeros"},
                              "words": {"dtype": "uint32", "shape": [4096], "init": "zeros"},
                              "out": {"dtype": "uint64", "shape": [4 * g], "init": "poison"}},
                     params=[{"ptr": "warm"}, {"ptr": "cold"}, {"ptr": "words"}, {"ptr": "out"}, {"u32": ITERS},
                             {"u32": fl}, {"u32": BATCHES}])
    print(f"wrote {len(CASES)} records")


if __name__ == "__main__":
    main()
