"""Launch records (workloads/microbench/uch_*) of microbench/src/uniform_chain.cu for the replay tests
(tests/test_uniform_chain_replay.py): the PTX the card ran (nvcc -ptx -arch=sm_90a -O3), launched as the host code
does (one warp; a = 1, b = 0, 8 timed iterations of 64 links). ``out[0]`` = 100 x cycles per link. Each record's
source.hardware names its row of the results file.
usage: python3 microbench/make_uniform_chain_records.py RESULTS_DIR [--nvcc nvcc]  (RESULTS_DIR under microbench/results/)"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_records import compile_ptx, nvcc_version, write_record  # noqa: E402
from parse_uniform_chain import OPS  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results_dir")
    ap.add_argument("--nvcc", default="nvcc")
    a = ap.parse_args()
    results = f"microbench/results/{a.results_dir.rstrip('/')}/uniform_chain.json"
    ptx, nv = compile_ptx(a.nvcc, os.path.join(HERE, "src", "uniform_chain.cu")), nvcc_version(a.nvcc)
    for name, op in OPS.items():
        write_record(f"uch_{name}", ptx, f"_Z5k_uchILi{op}EEvPyjjj", src="uniform_chain.cu",
                     generator="microbench/make_uniform_chain_records.py",
                     what=f"UCH op={name}: one warp, a dependent chain of 64 links x 8 timed iterations: out[0] = "
                          "100 x cycles per link",
                     hardware={"results": results, "bench": "uniform_chain", "params": {"op": op}},
                     compiler=nv, grid=(1, 1, 1), block=(32, 1, 1),
                     buffers={"out": {"dtype": "uint64", "shape": [8], "init": "poison"}},
                     params=[{"ptr": "out"}, {"u32": 1}, {"u32": 0}, {"u32": 8}])
    print(f"wrote {len(OPS)} records")


if __name__ == "__main__":
    main()
