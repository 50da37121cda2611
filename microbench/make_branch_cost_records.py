"""Launch records (workloads/microbench/brl_*, brs_*) of microbench/src/branch_cost.cu for the replay tests
(tests/test_branch_cost_replay.py): the PTX the card ran (nvcc -ptx -arch=sm_90a -O3), launched as the host code does
(one CTA of 32 x W threads; a = 1, b = 0). BRL: each warp a loop of ``iters`` iterations of L dependent
``fma.rn.f32``; BRS: the L links straight. ``out[w]`` = warp w's %clock64 span. Each record's source.hardware names
its row of microbench/results/h200_pending_2026-12-05/branch_cost/branch_cost.json.
usage: python3 microbench/make_branch_cost_records.py [--nvcc nvcc]"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_records import compile_ptx, nvcc_version, write_record  # noqa: E402

RESULTS = "microbench/results/h200_pending_2026-12-05/branch_cost/branch_cost.json"
ITERS = {1: 1024, 2: 1024, 4: 512, 8: 512, 16: 256, 32: 256, 64: 128, 128: 64, 512: 16}
BRL = [(1, 1), (2, 1), (4, 1), (8, 1), (16, 1), (64, 1), (1, 4), (8, 8)]     # (L, warps)
BRS = [(32, 1), (512, 1)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", default="nvcc")
    a = ap.parse_args()
    ptx, nv = compile_ptx(a.nvcc, os.path.join(HERE, "src", "branch_cost.cu")), nvcc_version(a.nvcc)
    for L, w in BRL:
        write_record(f"brl_l{L}_w{w}", ptx, f"_Z6k_loopILi{L}EEvPyPfiff", src="branch_cost.cu",
                     generator="microbench/make_branch_cost_records.py",
                     what=f"BRL L={L} warps={w} iters={ITERS[L]}: out[w] = warp w's cycles over the loop",
                     hardware={"results": RESULTS, "bench": "branch_loop",
                               "params": {"L": L, "warps": w, "iters": ITERS[L]}},
                     compiler=nv, grid=(1, 1, 1), block=(32 * w, 1, 1),
                     buffers={"out": {"dtype": "uint64", "shape": [64], "init": "poison"},
                              "sink": {"dtype": "float32", "shape": [16], "init": "zeros"}},
                     params=[{"ptr": "out"}, {"ptr": "sink"}, {"u32": ITERS[L]}, {"f32": 1.0}, {"f32": 0.0}])
    for L, w in BRS:
        write_record(f"brs_l{L}_w{w}", ptx, f"_Z10k_straightILi{L}EEvPyPfff", src="branch_cost.cu",
                     generator="microbench/make_branch_cost_records.py",
                     what=f"BRS L={L} warps={w}: out[w] = warp w's cycles over the straight chain",
                     hardware={"results": RESULTS, "bench": "branch_straight", "params": {"L": L, "warps": w}},
                     compiler=nv, grid=(1, 1, 1), block=(32 * w, 1, 1),
                     buffers={"out": {"dtype": "uint64", "shape": [64], "init": "poison"},
                              "sink": {"dtype": "float32", "shape": [16], "init": "zeros"}},
                     params=[{"ptr": "out"}, {"ptr": "sink"}, {"f32": 1.0}, {"f32": 0.0}])
    print(f"wrote {len(BRL) + len(BRS)} records")


if __name__ == "__main__":
    main()
