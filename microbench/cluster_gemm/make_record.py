"""Write the cluster-GEMM launch records (workloads/records/h200_cluster/<name>/launch.json + kernel.ptx).

The PTX is `nvcc -arch=sm_90a -ptx microbench/src/cluster_gemm.cu` (CUDA C++ with inline PTX: TMA multicast across
a 2-CTA cluster, wgmma.m64n128k16 bf16); the launch parameters say how it ran on the H200
(microbench/cluster_gemm/device_run.sh). Needs nvcc here; stdlib only.
(WG_RECORDS_OUT=DIR writes DIR/h200_... instead.)
usage: python3 microbench/cluster_gemm/make_record.py [SIZE ...]   (default 2048 4096)
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SRC = os.path.join(ROOT, "microbench", "src", "cluster_gemm.cu")
OUT = os.path.join(os.environ.get("WG_RECORDS_OUT") or os.path.join(ROOT, "workloads", "records"), "h200_cluster")
STAGES, STAGE_BYTES = 4, 32768
SHARED = STAGES * STAGE_BYTES + 2048  # SMEM_BYTES of cluster_gemm.cu: ring + barriers + alignment slack


def ptx_text():
    ver = subprocess.run(["nvcc", "--version"], capture_output=True, text=True, check=True).stdout.strip().splitlines()[-2]
    r = subprocess.run(["nvcc", "-arch=sm_90a", "-ptx", "-o", "-", SRC], capture_output=True, text=True)
    if r.returncode:
        sys.exit(r.stderr)
    return r.stdout, ver


def record(n, ver):
    name = f"cluster_gemm_tma_mc2_M{n}_N{n}_K{n}"
    return name, {
        "format": "launch-record/1",
        "name": name,
        "source": {
            "compiler": ver, "command": "nvcc -arch=sm_90a -ptx", "kernel": "microbench/src/cluster_gemm.cu:cluster_gemm",
            "target": "sm_90a", "generator": "microbench/cluster_gemm/make_record.py",
            "what": "C = A @ B^T, bf16, 128x128x64 tiles, one warpgroup per CTA (wgmma m64n128k16), 4-stage TMA "
                    "ring; clusters of 2 CTAs along M each load half of the shared B tile and multicast it "
                    "(cp.async.bulk.tensor .multicast::cluster, ctaMask 0b11); stages released to both producers "
                    "with remote mbarrier arrives",
        },
        "ptx": "kernel.ptx",
        "entry": "cluster_gemm",
        "grid": [(n // 128) * (n // 128), 1, 1],
        "block": [128, 1, 1],
        "cluster": [2, 1, 1],
        "shared_bytes": SHARED,
        "buffers": {
            "a": {"dtype": "bfloat16", "shape": [n, n], "init": {"normal": 0.1}},
            "b": {"dtype": "bfloat16", "shape": [n, n], "init": {"normal": 0.1}},
            "c": {"dtype": "bfloat16", "shape": [n, n], "init": "poison"},
        },
        "params": [
            {"tensormap": {"buffer": "a", "box": [128, 64], "swizzle_bytes": 128, "oob_fill": "zero"}},
            {"tensormap": {"buffer": "b", "box": [64, 64], "swizzle_bytes": 128, "oob_fill": "zero"}},
            {"ptr": "c"}, {"u32": n}, {"u32": n}, {"u32": n},
        ],
        "check": {"output": "c", "reference": "gemm_nt", "inputs": ["a", "b"], "max_rel_err": 0.01},
    }


def main(sizes):
    ptx, ver = ptx_text()
    if not re.search(r"\.entry cluster_gemm\(", ptx):
        sys.exit("no .entry cluster_gemm in the PTX")
    for n in sizes:
        name, rec = record(n, ver)
        d = os.path.join(OUT, name)
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "kernel.ptx"), "w").write(ptx)
        json.dump(rec, open(os.path.join(d, "launch.json"), "w"), indent=1)
        print("wrote", d)


if __name__ == "__main__":
    main([int(x) for x in sys.argv[1:]] or [2048, 4096])
