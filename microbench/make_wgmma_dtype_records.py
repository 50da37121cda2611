"""Launch records (workloads/microbench/wgdt_*) of microbench/src/wgmma_dtype.cu's kernels for the replay tests
(tests/test_wgmma_dtype_replay.py): the PTX the H200 ran (nvcc -ptx -arch=sm_90a -O3), launched as the host code
does (one CTA of 128 x warpgroups threads), 64 throughput / 32 latency iterations instead of 2,048 / 512.
source.hardware names the line in microbench/results/h200_wgmma_dtype_2026-12-04.json.
usage: python3 microbench/make_wgmma_dtype_records.py [--nvcc nvcc]"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_records import compile_ptx, nvcc_version, write_record  # noqa: E402

RESULTS = "microbench/results/h200_wgmma_dtype_2026-12-04.json"
K = {"f16": 16, "e4m3": 32, "e5m2": 32, "tf32": 8}


def cases():
    out = []
    for dt in ("f16", "e4m3", "tf32"):
        for wgs in (1, 2):
            out.append((f"wgdt_tput_{dt}_n128_wg{wgs}", f"tput_{dt}_n128", 128 * wgs, 64,
                        {"mode": "tput", "dtype": dt, "n": 128, "k": K[dt], "warpgroups": wgs, "grid": 1}))
    out.append(("wgdt_tput_e5m2_n256_wg1", "tput_e5m2_n256", 128, 64,
                {"mode": "tput", "dtype": "e5m2", "n": 256, "k": 32, "warpgroups": 1, "grid": 1}))
    for dt in ("e4m3", "tf32"):
        out.append((f"wgdt_lat_{dt}_n128", f"lat_{dt}_n128", 128, 32,
                    {"mode": "lat", "dtype": dt, "n": 128, "k": K[dt]}))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", default="nvcc")
    a = ap.parse_args()
    ptx = compile_ptx(a.nvcc, os.path.join(HERE, "src", "wgmma_dtype.cu"))
    nv = nvcc_version(a.nvcc)
    for name, entry, threads, iters, hw in cases():
        write_record(name, ptx, entry, src="wgmma_dtype.cu", generator="microbench/make_wgmma_dtype_records.py",
                     what="out[0] = 100 x SM cycles per wgmma (tput) or per fence+wgmma+commit+wait 0 (lat)",
                     hardware={"results": RESULTS, "bench": "wgmma_dtype", "params": hw}, compiler=nv,
                     grid=(1, 1, 1), block=(threads, 1, 1),
                     buffers={"out": {"dtype": "uint64", "shape": [1], "init": "poison"},
                              "sink": {"dtype": "float32", "shape": [threads], "init": "poison"}},
                     params=[{"ptr": "out"}, {"ptr": "sink"}, {"u32": iters}])
    print(f"wrote {len(cases())} records")


if __name__ == "__main__":
    main()
