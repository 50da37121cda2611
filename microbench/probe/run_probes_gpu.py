"""Launch records as they are and with clock64 probes (probe_ptx.py), cold L2 and warm, on a real GPU; keep
every CTA's probe timeline and the CUDA-event times (so the probes' own cost shows as probed vs plain).

Buffers, params and tensormaps come from microbench/gallery/run_gallery_gpu.py (make_buffers, param_holders), the
launch (clusters included) is cuLaunchKernel / cuLaunchKernelEx as in microbench/cluster_gemm/run_records_gpu.py.
"Cold" reads a 1 GiB buffer first (evicting the 50-60 MB L2 without leaving it dirty); "warm" relaunches at once.
usage: python3 run_probes_gpu.py OUTDIR RECORD_DIR... [--reps N] [--max-probes N] [--per-warp]
Writes OUTDIR/<record>.npz (probes: [mode, rep, cta, slot, (clock_lo, clock_hi, id, smid)] as uint32, with
--per-warp [mode, rep, cta * warps + warp, slot, ...] and the barriers probed (probe_ptx.py); plain_us /
probed_us: [mode, rep]) and OUTDIR/summary.json. Needs torch (CUDA), cuda-python, numpy; never warpgraph.
"""
import argparse
import importlib.util
import json
import os
import sys
import time

import numpy as np
import torch
from cuda.bindings import driver as cu

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import probe_ptx  # noqa: E402

_spec = importlib.util.spec_from_file_location("run_records_gpu", os.path.join(HERE, "..", "cluster_gemm", "run_records_gpu.py"))
R = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(R)
G = R.G          # microbench/gallery/run_gallery_gpu.py: make_buffers, param_holders, ck
MODES = ("cold", "warm")


def _timed(launch, flush, cold):
    if cold:
        flush()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    launch()
    e1.record()
    torch.cuda.synchronize()
    return e0.elapsed_time(e1) * 1e3


def run(d, out, reps, max_probes, flush, per_warp=False):
    rec = json.load(open(os.path.join(d, "launch.json")))
    ctas = int(np.prod(rec["grid"]))
    warps = -(-int(np.prod(rec["block"])) // 32) if per_warp else 0
    ptx = open(os.path.join(d, rec["ptx"])).read()
    probed, size, counts = probe_ptx.instrument(ptx, ctas, max_probes, warps)
    rows = ctas * max(warps, 1)
    bufs = G.make_buffers(rec, torch.Generator(device="cuda").manual_seed(0))
    holders = G.param_holders(rec, bufs)
    argp = np.array([h.ctypes.data for h in holders], dtype=np.uint64)
    mods = {k: G.ck(cu.cuModuleLoadData(t.encode() + b"\0")) for k, t in (("plain", ptx), ("probed", probed))}
    fns = {k: G.ck(cu.cuModuleGetFunction(m, rec["entry"].encode())) for k, m in mods.items()}
    gptr, gsize = G.ck(cu.cuModuleGetGlobal(mods["probed"], b"wg_probe"))
    assert int(gsize) == size
    launches = {k: R.launcher(f, rec, argp) for k, f in fns.items()}
    host = np.zeros(size // 4, dtype=np.uint32)
    probes = np.zeros((len(MODES), reps, rows, max_probes, 4), dtype=np.uint32)
    times = {k: np.zeros((len(MODES), reps)) for k in launches}
    for r in range(reps):
        for mi, mode in enumerate(MODES):
            for k, launch in launches.items():
                if k == "probed":
                    G.ck((cu.cuMemsetD8(gptr, 0, size)[0], None))
                if mode == "warm":
                    _timed(launch, flush, False)  # the first launch warms L2; the timed one follows at once
                times[k][mi, r] = _timed(launch, flush, mode == "cold")
                if k == "probed":
                    G.ck((cu.cuMemcpyDtoH(host.ctypes.data, gptr, size)[0], None))
                    probes[mi, r] = host.reshape(rows, max_probes, 4)
    used = int((probes[..., 2] != 0).sum(axis=-1).max())
    name = os.path.basename(os.path.normpath(d))
    np.savez_compressed(os.path.join(out, name + ".npz"), probes=probes[:, :, :, :used],
                        plain_us=times["plain"], probed_us=times["probed"], warps=max(warps, 1))
    for m in mods.values():
        G.ck((cu.cuModuleUnload(m)[0], None))
    del bufs
    torch.cuda.empty_cache()
    res = {"name": rec["name"], "dir": name, "ctas": ctas, "warps_probed": warps, "probes_placed": counts, "slots_used": used,
           **{f"{k}_us_median_{m}": float(np.median(times[k][mi])) for k in times for mi, m in enumerate(MODES)}}
    print(json.dumps(res), flush=True)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--max-probes", type=int, default=512)
    ap.add_argument("--per-warp", action="store_true", help="lane 0 of every warp records, barriers probed")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    big = torch.ones(1 << 28, dtype=torch.float32, device="cuda")  # 1 GiB

    def flush():
        big.sum()
    props = torch.cuda.get_device_properties(0)
    summary = {"gpu": props.name, "sms": props.multi_processor_count, "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
               "torch": torch.__version__, "records": []}
    for d in a.dirs:
        try:
            summary["records"].append(run(d, a.out, a.reps, a.max_probes, flush, a.per_warp))
        except Exception as e:
            print("ERROR", d, repr(e)[:400], flush=True)
            summary["records"].append({"dir": d, "error": repr(e)[:400]})
        json.dump(summary, open(os.path.join(a.out, "summary.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
