"""Run gallery launch records on a real GPU from the record alone, check each output, time it.

Provenance: adapted from the project's calibration tooling (/work/shared/calibration/measure/run_records_gpu.py,
device_run.sh, make_records.py): PTX loaded through the driver API, buffers and params built from launch.json,
tensormaps encoded with cuTensorMapEncodeTiled. Added here: every launch-record/1 init kind (normal, uniform,
values, addresses, zeros, poison), more dtypes (bf16, fp8, ints, global scratch), the gallery's numpy
references (workloads/gallery/cases.py, imported with numpy alone) for the output check.

usage: python3 run_gallery_gpu.py [--results OUT.json] [--reps N] [--no-check] RECORD_DIR...
Needs torch (CUDA), cuda-python (cuda.bindings), numpy. One launch per record when --reps 1 (under ncu).
"""
import argparse
import ctypes
import importlib.util
import json
import os
import sys
import time

import numpy as np
import torch
from cuda.bindings import driver as cu

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_PY = os.path.join(HERE, "..", "..", "workloads", "gallery", "cases.py")

TORCH_DT = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
            "float64": torch.float64, "float8_e4m3fn": torch.float8_e4m3fn, "float8_e5m2": torch.float8_e5m2,
            "int8": torch.int8, "uint8": torch.uint8, "int16": torch.int16, "int32": torch.int32,
            "int64": torch.int64, "bool": torch.uint8,
            # no full torch support for these: same-size signed storage
            "uint16": torch.int16, "uint32": torch.int32, "uint64": torch.int64}
TMAP_DT = {"float16": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
           "bfloat16": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
           "float32": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
           "float8_e4m3fn": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_UINT8,
           "float8_e5m2": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_UINT8,
           "uint8": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_UINT8}
SW = {0: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE, 32: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_32B,
      64: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_64B, 128: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B}


def ck(res):
    err = res[0]
    if int(err) != 0:
        raise RuntimeError(f"CUDA driver error {err}")
    return res[1] if len(res) == 2 else res[1:]


def load_cases():
    try:
        spec = importlib.util.spec_from_file_location("gallery_cases", CASES_PY)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["gallery_cases"] = mod
        spec.loader.exec_module(mod)
        return mod
    except Exception as e:  # the check is optional; the measurement is not
        print("cannot import the gallery cases (no output check):", repr(e), flush=True)
        return None


def as_f64(t, dtype):
    if dtype in ("uint64",):
        return t.cpu().numpy().view(np.uint64).astype(np.float64)
    return t.float().cpu().numpy().astype(np.float64) if t.dtype != torch.float64 else t.cpu().numpy()


def make_buffers(rec, gen):
    bufs = {}
    later = []
    for name, b in rec["buffers"].items():
        dt, shape, init = b["dtype"], b["shape"], b["init"]
        tdt = TORCH_DT[dt]
        n = int(np.prod(shape)) if shape else 1
        is_float = dt.startswith("float") or dt == "bfloat16"
        if init == "zeros":
            t = torch.zeros(shape, dtype=tdt, device="cuda")
        elif init == "poison":
            t = torch.empty(shape, dtype=tdt, device="cuda")
            t.view(torch.uint8).fill_(0xFF) if not is_float or dt.startswith("float8") else t.fill_(float("nan"))
        elif "normal" in init:
            x = torch.randn(shape, generator=gen, device="cuda", dtype=torch.float32) * init["normal"]
            t = x.to(tdt) if is_float else torch.round(x).to(tdt)
        elif "uniform" in init:
            lo, hi = init["uniform"]
            if is_float:
                t = (torch.rand(shape, generator=gen, device="cuda") * (hi - lo) + lo).to(tdt)
            else:
                t = torch.randint(int(np.ceil(lo)), int(np.floor(hi)) + 1, shape, generator=gen, device="cuda").to(tdt)
        elif "values" in init:
            v = torch.tensor(init["values"], dtype=torch.float64 if is_float else torch.int64)
            t = v.to(torch.float32).to(tdt).reshape(shape).cuda() if is_float else v.to(tdt).reshape(shape).cuda()
        elif "addresses" in init:
            t = torch.zeros(shape, dtype=tdt, device="cuda")
            later.append((name, init["addresses"]))
        else:
            raise ValueError(f"{name}: init {init}")
        assert t.numel() == n
        bufs[name] = t
    for name, entries in later:
        vals = []
        for e in entries:
            bn, _, off = e.partition("+")
            vals.append(bufs[bn.strip()].data_ptr() + (int(off, 0) if off.strip() else 0))
        bufs[name].copy_(torch.tensor(np.array(vals, dtype=np.uint64).view(np.int64), device="cuda"))
    return bufs


def param_holders(rec, bufs):
    holders = []
    for p in rec["params"]:
        (kind, v), = p.items()
        if kind == "ptr":
            holders.append(np.array([0 if v is None else bufs[v].data_ptr()], dtype=np.uint64))
        elif kind in ("u32", "s32"):
            holders.append(np.array([v], dtype=np.uint32 if kind == "u32" else np.int32))
        elif kind in ("u64", "s64"):
            holders.append(np.array([v], dtype=np.uint64 if kind == "u64" else np.int64))
        elif kind == "f32":
            holders.append(np.array([v], dtype=np.float32))
        elif kind == "f64":
            holders.append(np.array([v], dtype=np.float64))
        elif kind == "tensormap":
            b = rec["buffers"][v["buffer"]]
            t = bufs[v["buffer"]]
            esz = t.element_size()
            shape = list(b["shape"])
            rank = len(shape)
            dims = [cu.cuuint64_t(x) for x in reversed(shape)]
            strides = [cu.cuuint64_t(s * esz) for s in reversed(t.stride()[:-1])]
            box = [cu.cuuint32_t(x) for x in reversed(v["box"])]
            estr = [cu.cuuint32_t(1)] * rank
            fill = (cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                    if v.get("oob_fill") == "nan" else cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
            tmap = ck(cu.cuTensorMapEncodeTiled(TMAP_DT[b["dtype"]], rank, t.data_ptr(), dims, strides, box, estr,
                                                cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
                                                SW[v["swizzle_bytes"]],
                                                cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_128B, fill))
            raw = np.zeros(128, dtype=np.uint8)
            ctypes.memmove(raw.ctypes.data, tmap.getPtr(), 128)
            holders.append(raw)
        else:
            raise ValueError(kind)
    return holders


def run(d, cases, reps, do_check):
    rec = json.load(open(os.path.join(d, "launch.json")))
    ptx = open(os.path.join(d, rec["ptx"]), "rb").read() + b"\0"
    gen = torch.Generator(device="cuda").manual_seed(0)
    bufs = make_buffers(rec, gen)
    case = None
    gc = rec.get("source", {}).get("gallery_case")
    if cases is not None and gc:
        try:
            case = cases.CASES[gc["name"]](gc["scale"])
        except Exception as e:
            print(f"{rec['name']}: no reference ({e!r}); measured without a check", flush=True)
    inputs = None
    if do_check and case is not None:
        inputs = {n: as_f64(t, rec["buffers"][n]["dtype"]) for n, t in bufs.items()}
        derived = getattr(case, "derived", None)
        if derived is not None:  # e.g. layer-norm mean / rstd of this device's x
            for n, v in derived(inputs).items():
                inputs[n] = v
                bufs[n].copy_(torch.tensor(np.asarray(v, np.float32)).to(bufs[n].dtype).reshape(bufs[n].shape))
    holders = param_holders(rec, bufs)
    argp = np.array([h.ctypes.data for h in holders], dtype=np.uint64)
    mod = ck(cu.cuModuleLoadData(ptx))
    fn = ck(cu.cuModuleGetFunction(mod, rec["entry"].encode()))
    sh = int(rec.get("shared_bytes", 0))
    if sh > 48 * 1024:
        ck((cu.cuFuncSetAttribute(fn, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                  sh)[0], None))
    gx, gy, gz = rec["grid"]
    bx, by, bz = rec["block"]
    # outputs of kernels that accumulate (atomics into zero-initialised buffers) must see one launch only:
    # keep the initial state and restore it before each timed repetition
    init_state = {n: t.clone() for n, t in bufs.items()} if reps > 1 else None

    def launch():
        ck((cu.cuLaunchKernel(fn, gx, gy, gz, bx, by, bz, sh, 0, argp.ctypes.data, 0)[0], None))

    torch.cuda.synchronize()
    times = []
    for i in range(reps):
        if init_state is not None and i:
            for n, t in bufs.items():
                t.copy_(init_state[n])
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        launch()
        e1.record()
        torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1) * 1e3)
    if init_state is not None:  # leave the outputs of exactly one launch for the check
        for n, t in bufs.items():
            t.copy_(init_state[n])
        launch()
        torch.cuda.synchronize()
    res = {"name": rec["name"], "dir": os.path.basename(os.path.normpath(d)), "entry": rec["entry"],
           "event_timed_median_us": float(np.median(times)) if times else None}
    if do_check and case is not None:
        t0 = time.time()
        ref = case.ref({k: v.astype(np.float32) if isinstance(v, np.ndarray) else v for k, v in inputs.items()})
        errs = {}
        for o, r in ref.items():
            out = as_f64(bufs[o], rec["buffers"][o]["dtype"]).reshape(np.shape(r))
            r = np.asarray(r, dtype=np.float64)
            nan = int(np.isnan(out).sum())
            den = float(np.linalg.norm(r))
            errs[o] = {"rel_err": float(np.linalg.norm(out - r) / den) if den else float(np.abs(out - r).max()),
                       "nan": nan, "tolerance": case.tol[o]}
        res["outputs"] = errs
        tol_ok = all(e["nan"] == 0 and e["rel_err"] <= (e["tolerance"].get("max_rel_err") or 1e9) * 2
                     for e in errs.values())
        res["check_ok"] = bool(tol_ok)
        res["check_seconds"] = time.time() - t0
    ck((cu.cuModuleUnload(mod)[0], None))
    del bufs
    torch.cuda.empty_cache()
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--results", default=None)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--no-check", action="store_true")
    a = ap.parse_args()
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    dirs = []
    for x in a.dirs:
        if os.path.exists(os.path.join(x, "launch.json")):
            dirs.append(x)
        else:
            dirs += sorted(os.path.join(x, y) for y in os.listdir(x) if os.path.exists(os.path.join(x, y, "launch.json")))
    cases = None if a.no_check else load_cases()
    out = []
    for d in dirs:
        try:
            r = run(d, cases, a.reps, not a.no_check)
            print(("OK  " if r.get("check_ok", True) else "FAIL") + f" {r['name']:55s} {r['event_timed_median_us']:10.1f} us "
                  + " ".join(f"{k}={v['rel_err']:.2e}" for k, v in r.get("outputs", {}).items()), flush=True)
        except Exception as e:
            r = {"dir": os.path.basename(os.path.normpath(d)), "error": repr(e)[:500]}
            print("ERROR", d, repr(e)[:300], flush=True)
        out.append(r)
        if a.results:
            json.dump(out, open(a.results, "w"), indent=1)


if __name__ == "__main__":
    main()
