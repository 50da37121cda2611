"""Run launch records on a real GPU from the record alone (clusters included), check each output against torch,
time it with CUDA events. Used for workloads/records/h200_cluster/ (TMA-multicast cluster GEMM) and
workloads/records/h200_large/ (full-size FlashAttention).

Buffers, params and tensormaps are built by microbench/gallery/run_gallery_gpu.py's helpers (imported by path:
make_buffers, param_holders); added here: cluster launches (cuLaunchKernelEx with a cluster-dimension attribute,
the record's `cluster`) and torch references for `gemm_nt` and `attention` (fp32 on the GPU).
usage: python3 run_records_gpu.py [--results OUT.json] [--reps N] [--no-check] [--dump BUF:DIR] RECORD_DIR...
(--dump BUF:DIR saves buffer BUF after the last timed launch of seed 0 as DIR/<record dir>.npy: the timing
records of microbench/cluster_gemm/make_timing_record.py)
Needs torch (CUDA), cuda-python (cuda.bindings), numpy; never warpgraph.
"""
import argparse
import importlib.util
import json
import os

import numpy as np
import torch
from cuda.bindings import driver as cu

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("run_gallery_gpu", os.path.join(HERE, "..", "gallery", "run_gallery_gpu.py"))
G = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(G)


def reference(rec, bufs):
    chk = rec["check"]
    ins = [bufs[n] for n in chk["inputs"]]
    if chk["reference"] == "gemm_nt":
        a, b = ins
        return a.float() @ b.float().T
    if chk["reference"] == "attention":
        q, k, v = (x.float() for x in ins)
        args = chk.get("args", {})
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=bool(args.get("causal")),
                                                                scale=args.get("scale"))
    raise ValueError(f"no torch reference for {chk['reference']}")


def launcher(fn, rec, argp):
    """A function that launches ``fn`` as the record says (its grid, block, dynamic shared memory and cluster shape:
    cuLaunchKernelEx with a cluster-dimension attribute, non-portable sizes allowed beyond 8) with the packed
    parameters ``argp``. microbench/probe/run_probes_gpu.py launches through it too."""
    sh = int(rec.get("shared_bytes", 0))
    if sh > 48 * 1024:
        G.ck((cu.cuFuncSetAttribute(fn, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, sh)[0], None))
    gx, gy, gz = rec["grid"]
    bx, by, bz = rec["block"]
    cx, cy, cz = rec.get("cluster", [1, 1, 1])
    if cx * cy * cz > 8:
        G.ck((cu.cuFuncSetAttribute(fn, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)[0], None))
    cfg = attr = None
    if cx * cy * cz > 1:
        attr = cu.CUlaunchAttribute()
        attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = cx, cy, cz
        cfg = cu.CUlaunchConfig()
        cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = gx, gy, gz
        cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = bx, by, bz
        cfg.sharedMemBytes = sh
        cfg.hStream = cu.CUstream(0)
        cfg.attrs = [attr]
        cfg.numAttrs = 1

    def launch(_keep=(cfg, attr)):      # the launch config and its attribute live as long as the function
        if cfg is None:
            G.ck((cu.cuLaunchKernel(fn, gx, gy, gz, bx, by, bz, sh, 0, argp.ctypes.data, 0)[0], None))
        else:
            G.ck((cu.cuLaunchKernelEx(cfg, fn, argp.ctypes.data, 0)[0], None))
    return launch


def run(d, reps, do_check, seed, dump=None):
    rec = json.load(open(os.path.join(d, "launch.json")))
    ptx = open(os.path.join(d, rec["ptx"]), "rb").read() + b"\0"
    gen = torch.Generator(device="cuda").manual_seed(seed)
    bufs = G.make_buffers(rec, gen)
    holders = G.param_holders(rec, bufs)
    argp = np.array([h.ctypes.data for h in holders], dtype=np.uint64)
    mod = G.ck(cu.cuModuleLoadData(ptx))
    fn = G.ck(cu.cuModuleGetFunction(mod, rec["entry"].encode()))
    launch = launcher(fn, rec, argp)

    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        launch()
        e1.record()
        torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1) * 1e3)
    res = {"name": rec["name"], "dir": os.path.basename(os.path.normpath(d)), "entry": rec["entry"],
           "cluster": rec.get("cluster", [1, 1, 1]), "event_timed_us": times,
           "event_timed_median_us": float(np.median(times)) if times else None}
    if dump and dump[0] in bufs:
        os.makedirs(dump[1], exist_ok=True)
        np.save(os.path.join(dump[1], os.path.basename(os.path.normpath(d)) + ".npy"), bufs[dump[0]].cpu().numpy())
    if do_check and rec.get("check"):
        o = rec["check"]["output"]
        out = bufs[o].double()
        ref = reference(rec, bufs).double().reshape(out.shape)
        nan = int(torch.isnan(out).sum())
        err = float((out - ref).norm() / ref.norm())
        tol = rec["check"].get("max_rel_err", 0.01)
        res["outputs"] = {o: {"rel_err": err, "nan": nan, "tolerance": {"max_rel_err": tol}}}
        res["check_ok"] = bool(nan == 0 and err <= tol)
        res["seed"] = seed
    G.ck((cu.cuModuleUnload(mod)[0], None))
    del bufs
    torch.cuda.empty_cache()
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--results", default=None)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--seeds", type=int, default=1, help="checks on this many fresh random inputs")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--dump", default=None, help="BUF:DIR: save buffer BUF of each record (seed 0) as DIR/<record>.npy")
    a = ap.parse_args()
    dump = tuple(a.dump.split(":", 1)) if a.dump else None
    torch.zeros(1, device="cuda")
    dirs = []
    for x in a.dirs:
        if os.path.exists(os.path.join(x, "launch.json")):
            dirs.append(x)
        else:
            dirs += sorted(os.path.join(x, y) for y in os.listdir(x) if os.path.exists(os.path.join(x, y, "launch.json")))
    out = []
    for d in dirs:
        for seed in range(a.seeds):
            try:
                r = run(d, a.reps if seed == 0 else 1, not a.no_check, seed, dump if seed == 0 else None)
                print(("OK  " if r.get("check_ok", True) else "FAIL") + f" {r['name']:45s} seed {seed} "
                      f"{r['event_timed_median_us']:10.1f} us " + " ".join(f"{k}={v['rel_err']:.2e} nan={v['nan']}"
                                                                          for k, v in r.get("outputs", {}).items()),
                      flush=True)
            except Exception as e:
                r = {"dir": os.path.basename(os.path.normpath(d)), "error": repr(e)[:500], "seed": seed}
                print("ERROR", d, repr(e)[:300], flush=True)
            if seed == 0:
                out.append(r)
            else:
                out[-1].setdefault("more_checks", []).append({k: r.get(k) for k in ("seed", "outputs", "check_ok", "error")})
            if a.results:
                json.dump(out, open(a.results, "w"), indent=1)


if __name__ == "__main__":
    main()
