"""Launch records (workloads/microbench/smf_*) of microbench/src/smem_fill.cu for the replay test
(tests/test_smem_fill_replay.py): the PTX the card ran (nvcc -ptx -arch=sm_90a -O3), launched as the host code does
(one CTA of 32 x fillers threads, 96 KiB of dynamic shared memory; the 256 KiB source L2-resident). Only the cases
with no reader warps: a filler loop without readers runs a fixed number of rounds (400), while beside readers it
polls a shared flag the readers set, which the functional pass cannot time. Statistic: the fillers' bytes per SM
cycle (out[3] / out[2]). The program as it ran reads past its 256 KiB source: filler warp w starts at (w x 8 KiB) mod
256 KiB and walks 256 KiB from there (up to 312 KiB into its allocation, which cudaMalloc's 2 MiB granularity
covered); the records give the source 320 KiB, all L2-resident (on the card the first pass over the 56 KiB beyond
the warmed region came from DRAM, once, of 400 rounds). The records run 100 rounds, not 400.
usage: python3 microbench/make_smem_fill_records.py RESULTS_DIR [--nvcc nvcc]  (RESULTS_DIR under microbench/results/)"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_records import compile_ptx, nvcc_version, write_record  # noqa: E402

SMEM = 32 * 1024 + 64 * 1024
ROUNDS = 100          # the card ran 400 rounds; the statistic is a rate (bytes per cycle over the run)
CASES = [4, 8]        # filler warps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results_dir")
    ap.add_argument("--nvcc", default="nvcc")
    a = ap.parse_args()
    results = f"microbench/results/{a.results_dir.rstrip('/')}/smem_fill.json"
    ptx, nv = compile_ptx(a.nvcc, os.path.join(HERE, "src", "smem_fill.cu")), nvcc_version(a.nvcc)
    for f in CASES:
        hw = {"results": results, "bench": "smem_fill", "params": {"readers": 0, "fillers": f}}
        what = (f"FILL readers=0 fillers={f}: {f} warps stream cp.async.cg 16 B per lane from an L2-resident 256 KiB "
                f"region into shared memory, {ROUNDS} rounds of 8 KiB per warp, at most 4 rounds in flight; "
                "out[2] = the fillers' cycles (max over warps), out[3] = bytes")
        write_record(f"smf_r0_f{f}", ptx, "smem_fill", src="smem_fill.cu", generator="microbench/make_smem_fill_records.py",
                     what=what, hardware=hw, compiler=nv, grid=(1, 1, 1), block=(32 * f, 1, 1), shared_bytes=SMEM,
                     buffers={"src": {"dtype": "uint8", "shape": [320 * 1024], "init": "zeros", "l2_resident": True},
                              "out": {"dtype": "uint64", "shape": [8], "init": "zeros"}},
                     params=[{"ptr": "src"}, {"s32": 0}, {"u32": 512}, {"s32": ROUNDS}, {"ptr": "out"}])
    print(f"wrote {len(CASES)} records")


if __name__ == "__main__":
    main()
