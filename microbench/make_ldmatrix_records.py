"""Launch records (workloads/microbench/ldsm_*) of microbench/src/ldmatrix.cu's kernels for the replay tests
(tests/test_ldmatrix_replay.py): the PTX the H200 ran (nvcc -ptx -arch=sm_90a -O3), launched as the host code does
(one CTA; 32 threads for the latency chains, 32 x W for the throughput loops). source.hardware names the line in
microbench/results/h200_ldmatrix_2026-12-04/ldmatrix.json.
usage: python3 microbench/make_ldmatrix_records.py [--nvcc nvcc]"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_records import compile_ptx, nvcc_version, write_record  # noqa: E402

RESULTS = "microbench/results/h200_ldmatrix_2026-12-04/ldmatrix.json"


def cases():
    out = [("ldsm_lat_lds32", "_Z5k_latILi1ELi0ELi1EEvPyj", 32, 1024, {"tag": "CTRL", "mode": "lat"})]
    for num in (1, 2, 4):
        out.append((f"ldsm_lat_x{num}", f"_Z5k_latILi{num}ELi0ELi0EEvPyj", 32, 1024,
                    {"tag": "LDSM", "mode": "lat", "num": num, "trans": 0}))
    for num in (1, 4):
        for w in (1, 8, 32):
            out.append((f"ldsm_tput_x{num}_w{w}", f"_Z6k_tputILi{num}ELi0EEvPyj", 32 * w, 64,
                        {"tag": "LDSM", "mode": "tput", "num": num, "warps": w}))
    for w in (1, 8, 32):
        out.append((f"ldsm_tput_lds128_w{w}", "_Z6k_tputILi4ELi1EEvPyj", 32 * w, 64,
                    {"tag": "LDS", "mode": "tput", "vec": 16, "warps": w}))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", default="nvcc")
    a = ap.parse_args()
    ptx = compile_ptx(a.nvcc, os.path.join(HERE, "src", "ldmatrix.cu"))
    nv = nvcc_version(a.nvcc)
    for name, entry, threads, iters, hw in cases():
        write_record(name, ptx, entry, src="ldmatrix.cu", generator="microbench/make_ldmatrix_records.py",
                     what="out[0] = 100 x cycles per link (lat) or SM cycles per instruction (tput)",
                     hardware={"results": RESULTS, "bench": "ldsm", "params": hw}, compiler=nv, grid=(1, 1, 1),
                     block=(threads, 1, 1), buffers={"out": {"dtype": "uint64", "shape": [2], "init": "poison"}},
                     params=[{"ptr": "out"}, {"u32": iters}])
    print(f"wrote {len(cases())} records")


if __name__ == "__main__":
    main()
