"""Launch records (workloads/microbench/alu_*) of microbench/src/alu_latency.cu's kernels for the replay tests
(tests/test_alu_latency_replay.py): the PTX the H200 ran (nvcc -ptx -arch=sm_90a -O3), launched as the host code
does (one CTA: 32 threads for a latency chain, 32 x W for a throughput loop or the bar.sync loop), with the same
iteration counts. source.hardware names the line in microbench/results/h200_alu_latency_2026-12-04.json.
usage: python3 microbench/make_alu_latency_records.py [--nvcc nvcc]"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_records import compile_ptx, nvcc_version, write_record  # noqa: E402

RESULTS = "microbench/results/h200_alu_latency_2026-12-04.json"
OPS = {0: "fadd", 1: "ffma", 2: "fmnmx", 3: "imad", 5: "hfma2", 6: "mufu_ex2", 8: "mufu_rsq", 9: "shfl_bfly",
       10: "cvt_f16_f32_pair", 12: "fsetp_sel"}
TPUT = (0, 2, 3, 6, 9, 10, 12)
ONE_F, HALF2_ONE = 0x3F800000, 0x3C003C00


def cases():
    out = []
    for op, name in OPS.items():
        a = 1 if op in (3, 4) else (HALF2_ONE if op == 5 else ONE_F)
        out.append((f"alu_lat_{name}", f"_Z5k_latILi{op}EEvPyjjj", 32, [a, 0, 8],
                    {"unit": "alu", "mode": "lat", "op": name}))
        if op in TPUT:
            out.append((f"alu_tput_{name}_w32", f"_Z6k_tputILi{op}EEvPyjjj", 1024, [a, 0, 4],
                        {"unit": "alu", "mode": "tput", "op": name, "warps": 32}))
    for w in (1, 4, 32):
        out.append((f"alu_bar_w{w}", "_Z5k_barPyj", 32 * w, [16], {"unit": "bar", "mode": "lat", "warps": w}))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", default="nvcc")
    a = ap.parse_args()
    ptx = compile_ptx(a.nvcc, os.path.join(HERE, "src", "alu_latency.cu"))
    nv = nvcc_version(a.nvcc)
    for name, entry, threads, args, hw in cases():
        write_record(name, ptx, entry, src="alu_latency.cu", generator="microbench/make_alu_latency_records.py",
                     what="out[0] = 100 x cycles per link (lat), SM cycles per warp-instruction (tput) or per "
                          "bar.sync (bar)",
                     hardware={"results": RESULTS, "bench": "alu_latency", "params": hw}, compiler=nv,
                     grid=(1, 1, 1), block=(threads, 1, 1),
                     buffers={"out": {"dtype": "uint64", "shape": [2], "init": "poison"}},
                     params=[{"ptr": "out"}] + [{"u32": v} for v in args])
    print(f"wrote {len(cases())} records")


if __name__ == "__main__":
    main()
