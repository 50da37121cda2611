"""Bundle two of the cluster GEMM timing records as replay records (workloads/microbench/cgt_*): the kernel of
make_timing_record.py (%clock64 sums of thread 0's k loop in `tim`) at M = N = K = 2048 launched on 16 CTAs (8
clusters of 2), with both stage releases `.release.cluster` (`cgt_rel_M2048_g16`) or `.relaxed`
(`cgt_rlx_M2048_g16`). The H100 measured them on 2026-12-08 (microbench/results/h100_cluster_gemm_timing_2026-12-08/
run2, summary.json, `cluster_gemm_timing_{rel,rlx}_M2048_g16`); tests/test_cluster_gemm_timing_replay.py compares
the model's per-iteration phases with them. Needs nvcc; run `warpgraph compile --write` on the two folders after.
usage: python3 microbench/cluster_gemm/make_timing_replay_records.py"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEST = os.path.join(ROOT, "workloads", "microbench")
RESULT = "microbench/results/h100_cluster_gemm_timing_2026-12-08/run2/summary.json"


def main():
    tmp = tempfile.mkdtemp()
    subprocess.run([sys.executable, os.path.join(HERE, "make_timing_record.py"), tmp, "2048"], check=True,
                   env=dict(os.environ, CG_GRIDS="16"), stdout=subprocess.DEVNULL)
    for v in ("rel", "rlx"):
        src = os.path.join(tmp, "h200_cluster_timing_grids", f"cluster_gemm_timing_{v}_M2048_g16")
        name = f"cgt_{v}_M2048_g16"
        d = os.path.join(DEST, name)
        os.makedirs(d, exist_ok=True)
        shutil.copy(os.path.join(src, "kernel.ptx"), d)
        rec = json.load(open(os.path.join(src, "launch.json")))
        rec["name"] = name
        rec.pop("check", None)     # replay records carry no output check (the kernel's clock sums are the result)
        rec["source"]["hardware"] = {"results": RESULT, "bench": "cluster_gemm_timing",
                                     "params": {"record": f"cluster_gemm_timing_{v}_M2048_g16"},
                                     "card": "NVIDIA H100 80GB HBM3, 1980 MHz as found"}
        json.dump(rec, open(os.path.join(d, "launch.json"), "w"), indent=1)
        print("wrote", d)


if __name__ == "__main__":
    main()
