"""Launch records (workloads/microbench/brf_*) of microbench/src/branch_fwd.cu for the replay tests
(tests/test_branch_cost_replay.py): the PTX the card ran (nvcc -ptx -arch=sm_90a -O3), launched as the host code does
(one CTA of 32 x W threads; a = 1, b = 0). BRF: each warp a loop of ``iters`` iterations of A dependent
``fma.rn.f32``, S more under ``if (i & mask)``, A more. ``out[w]`` = warp w's %clock64 span. Each record's
source.hardware names its row of microbench/results/h100_branch_fwd_2026-12-05/branch_fwd.json (an H100: no H200
was lent).
usage: python3 microbench/make_branch_fwd_records.py [--nvcc nvcc]"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_records import compile_ptx, nvcc_version, write_record  # noqa: E402

RESULTS = "microbench/results/h100_branch_fwd_2026-12-05/branch_fwd.json"
BRF = [(8, 32, 1, 512, 0), (8, 32, 1, 512, -1), (8, 1, 1, 512, 0), (8, 1, 1, 512, -1), (4, 32, 1, 512, 0),
       (16, 32, 1, 256, 0), (8, 32, 4, 512, 0)]     # (A, S, warps, iters, mask)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", default="nvcc")
    a = ap.parse_args()
    ptx, nv = compile_ptx(a.nvcc, os.path.join(HERE, "src", "branch_fwd.cu")), nvcc_version(a.nvcc)
    for A, S, w, iters, mask in BRF:
        name = f"brf_a{A}_s{S}_w{w}_{'skip' if mask == 0 else 'run'}"
        write_record(name, ptx, f"_Z5k_fwdILi{A}ELi{S}EEvPyPfiiff", src="branch_fwd.cu",
                     generator="microbench/make_branch_fwd_records.py",
                     what=f"BRF A={A} S={S} warps={w} iters={iters} mask={mask}: out[w] = warp w's cycles over "
                          "the loop",
                     hardware={"results": RESULTS, "bench": "branch_forward",
                               "params": {"A": A, "S": S, "warps": w, "iters": iters, "mask": mask}},
                     compiler=nv, grid=(1, 1, 1), block=(32 * w, 1, 1),
                     buffers={"out": {"dtype": "uint64", "shape": [64], "init": "poison"},
                              "sink": {"dtype": "float32", "shape": [16], "init": "zeros"}},
                     params=[{"ptr": "out"}, {"ptr": "sink"}, {"u32": iters}, {"u32": mask & 0xFFFFFFFF}, {"f32": 1.0},
                             {"f32": 0.0}])
    print(f"wrote {len(BRF)} records")


if __name__ == "__main__":
    main()
