"""Launch records (workloads/microbench/fst_*) of microbench/src/store_fence.cu's FST section for the replay tests
(tests/test_store_fence_replay.py): the PTX the card ran (nvcc -ptx -arch=sm_90a -O3), launched as the host code does
(G CTAs of 32 x 9 threads, 150 KiB dynamic shared memory: warps 1-8 issue B batches of 8 st.global.cg.v4 into their
CTA's own 1 MiB and stop, warp 0's lane 0 waits D dependent IMADs, then times a fence.acq_rel.gpu). ``out[8 b]`` /
``out[8 b + 1]`` = CTA b's fence start / end. Each record's source.hardware names its row of
microbench/results/h200_pending_2026-12-05/store_fence/store_fence.json.
usage: python3 microbench/make_store_fence_records.py [--nvcc nvcc]"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_records import compile_ptx, nvcc_version, write_record  # noqa: E402

RESULTS = "microbench/results/h200_pending_2026-12-05/store_fence/store_fence.json"
DYN = 150 * 1024
SPAN = 1 << 20
WARM = 8 << 20
# (grid, batches): nothing outstanding, stores just ended, still storing, storing long after the fence; every SM
CASES = [(1, 0), (1, 2), (1, 4), (1, 64), (132, 4)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", default="nvcc")
    a = ap.parse_args()
    ptx, nv = compile_ptx(a.nvcc, os.path.join(HERE, "src", "store_fence.cu")), nvcc_version(a.nvcc)
    for g, b in CASES:
        write_record(f"fst_g{g}_b{b}", ptx, "_Z5k_fstPcPKcPyjjj", src="store_fence.cu",
                     generator="microbench/make_store_fence_records.py",
                     what=f"FST grid={g} warps=8 batches={b} delay=500 flags=0: out[8b] / out[8b+1] = CTA b's fence "
                          "start / end",
                     hardware={"results": RESULTS, "bench": "fst",
                               "params": {"grid": g, "warps": 8, "batches": b, "delay": 500, "flags": 0}},
                     compiler=nv, grid=(g, 1, 1), block=(32 * 9, 1, 1), shared_bytes=DYN,
                     buffers={"buf": {"dtype": "uint8", "shape": [g * SPAN], "init": "zeros"},
                              "warm": {"dtype": "uint8", "shape": [WARM], "init": "zeros"},
                              "out": {"dtype": "uint64", "shape": [8 * g], "init": "poison"}},
                     params=[{"ptr": "buf"}, {"ptr": "warm"}, {"ptr": "out"}, {"u32": b}, {"u32": 500},
                             {"u32": 0}])
    print(f"wrote {len(CASES)} records")


if __name__ == "__main__":
    main()
