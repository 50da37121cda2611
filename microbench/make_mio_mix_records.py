"""Launch records (workloads/microbench/mix_*) of microbench/src/mio_mix.cu's k_mix<MODE> for the replay tests
(tests/test_mio_mix_replay.py): the PTX nvcc makes for the H200 (nvcc -ptx -arch=sm_90a -O3), launched as the host
code does (one CTA of 32 x W threads, 32 iterations). source.hardware names the case in
microbench/results/h200_mio_mix_2026-12-05/mio_mix.json.
usage: python3 microbench/make_mio_mix_records.py [--nvcc nvcc]"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_records import compile_ptx, nvcc_version, write_record  # noqa: E402

RESULTS = "microbench/results/h200_mio_mix_2026-12-05/mio_mix.json"
MODES = ("shfl", "lds", "lds128", "shfl_lds", "shfl_lds128", "shfl_ffma")
# (mode, warps): one warp per sub-partition at most (1, 4: the per-sub-partition MIO slot) and a full SM (32)
CASES = [("shfl", 1), ("shfl", 4), ("shfl", 32), ("lds", 32), ("lds128", 32), ("shfl_lds", 32),
         ("shfl_lds128", 32), ("shfl_ffma", 32)]


def name(mode, w):
    return f"mix_{mode}_w{w}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", default="nvcc")
    a = ap.parse_args()
    ptx = compile_ptx(a.nvcc, os.path.join(HERE, "src", "mio_mix.cu"))
    nv = nvcc_version(a.nvcc)
    for mode, w in CASES:
        write_record(name(mode, w), ptx, f"_Z5k_mixILi{MODES.index(mode)}EEvPyjjj", src="mio_mix.cu",
                     generator="microbench/make_mio_mix_records.py",
                     what=f"MIX mode={mode} warps={w}: out[0] = 100 x SM cycles per iteration per warp",
                     hardware={"results": RESULTS, "bench": "mio_mix", "params": {"mode": mode, "warps": w}},
                     compiler=nv, grid=(1, 1, 1), block=(32 * w, 1, 1),
                     buffers={"out": {"dtype": "uint64", "shape": [8], "init": "poison"}},
                     params=[{"ptr": "out"}, {"u32": 0x3F800000}, {"u32": 0}, {"u32": 32}])
    print(f"wrote {len(CASES)} records")


if __name__ == "__main__":
    main()
