"""Write full-size FlashAttention forward launch records (workloads/records/h200_large/<name>/) from the bundled
calibration record's PTX (workloads/records/h200/attn_B4_H16_S1024_D128_causal1: Triton 3.6.0 attn_fwd, sm_90a,
HEAD_DIM 128, BLOCK_M 128, BLOCK_N 64, causal, 8 warps, 3 stages). The PTX is size-generic (N_CTX is a u32
param, batch x heads is the grid's y): only grid, buffers and the N_CTX param change. stdlib only.
(WG_RECORDS_OUT=DIR writes DIR/h200_... instead.)
usage: python3 microbench/large_fa/make_record.py
"""
import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
BASE = os.path.join(ROOT, "workloads", "records", "h200", "attn_B4_H16_S1024_D128_causal1")
OUT = os.path.join(os.environ.get("WG_RECORDS_OUT") or os.path.join(ROOT, "workloads", "records"), "h200_large")
# (B, H, S): FLOPs 4 B H S^2 D / 2 (causal); the calibration record (B4 H16 S1024) ran 125 k cycles
SHAPES = [(2, 16, 4096), (4, 16, 4096), (2, 16, 8192)]


def main():
    base = json.load(open(os.path.join(BASE, "launch.json")))
    ptx = open(os.path.join(BASE, base["ptx"])).read()
    for b, h, s in SHAPES:
        rec = copy.deepcopy(base)
        d_ = rec["source"]["constexprs"]["HEAD_DIM"]
        bm = rec["source"]["constexprs"]["BLOCK_M"]
        name = f"attn_B{b}_H{h}_S{s}_D{d_}_causal1"
        rec["name"] = name
        rec["source"]["ptx_from"] = "workloads/records/h200/attn_B4_H16_S1024_D128_causal1/kernel.ptx (unchanged)"
        rec["source"]["generator"] = "microbench/large_fa/make_record.py"
        rec["grid"] = [s // bm, b * h, 1]
        for k in ("q", "k", "v", "o"):
            rec["buffers"][k]["shape"] = [b, h, s, d_]
        n_ctx = [i for i, p in enumerate(rec["params"]) if "u32" in p]
        assert len(n_ctx) == 1, rec["params"]
        rec["params"][n_ctx[0]] = {"u32": s}
        rec.pop("compiled", None)
        od = os.path.join(OUT, name)
        os.makedirs(od, exist_ok=True)
        open(os.path.join(od, "kernel.ptx"), "w").write(ptx)
        json.dump(rec, open(os.path.join(od, "launch.json"), "w"), indent=1)
        print("wrote", od)


if __name__ == "__main__":
    main()
