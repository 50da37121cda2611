"""Roofline bound of a launch without any timing: FLOPs and minimum DRAM bytes against the spec's peaks.

Generic path: :func:`roofline_from_counts` ``(flops_by_dtype, min_dram_bytes, spec)``. Keys of
``flops_by_dtype`` are tensor dtype classes (``fp16`` -- also bf16 --, ``tf32``, ``fp8``, ``int8``, ``fp64``)
and ``simt_fp32`` for CUDA-core FLOPs. Tensor classes share the SM's tensor cores (their cycles add up); SIMT
runs beside them (compute bound = max(tensor, simt)).

:func:`roofline` ``(record, program, spec)`` finds the counts:

1. ``flops_by_dtype`` given -> used as is (``flops_source: "given"``);
2. ``trace`` given (a ``KernelTrace`` / ``FunctionalResult``) -> the dynamic FLOPs of every executed ``wgmma`` /
   ``mma.sync`` / ``tcgen05.mma`` (trace payload a0, Contract 2; tcgen05's M and N come from its runtime
   instruction descriptor), by the dtype of the instruction (``"trace"``; tcgen05 by its ``.kind::``);
3. else the record's ``check.reference`` names a known computation (``gemm``, ``gemm_nt``, ``attention``,
   ``rmsnorm``, ``swiglu``) -> useful FLOPs from buffer shapes (``"reference:<name>"``; the tensor dtype class
   from the PTX's tensor instructions, fp16 when the PTX has none); masked-out causal blocks and OOB tiles are
   not counted, so this is a lower bound;
4. else no FLOPs (``"none"``): memory bound only.

Peak tensor rate per SM per cycle, by dtype class: ``tensor_core.dense_<cls>_flop_per_cycle_per_sm``. When the
kernel's tensor instructions are only ``mma.sync`` (sm_80 code), the rate is capped by the mma.sync issue rate:
``units_per_sm × 2mnk / tensor_core.mma_sync["<type>.<shape>"].issue_gap_cycles`` (``mma_sync_default`` when
the key is missing) -- Hopper runs mma.sync at ~2/3 of the wgmma peak. A spec without dense fields (mma_sync
tensor cores, e.g. RTX 5090) uses that issue rate alone; with neither, no rate is guessed: the class is listed in
``unbounded_dtypes`` and left out of the compute bound.
SIMT FP32 peak: ``sm.subpartitions × 32 lanes × 2 / latencies.fp32.interval_cycles``.

Minimum DRAM bytes: every input buffer read once + every output written once. Outputs: ``check.output`` and
every buffer with init ``"poison"``; inputs: ``check.inputs`` if there is a check block, else all other buffers.
(A buffer in both lists counts twice.) Peak HBM bytes per SM cycle: ``hbm.bandwidth_gb_per_s × 1e3 /
clock_mhz`` (``clock_mhz`` defaults to ``clocks.sm_mhz``; pass the measured clock to compare with hardware).
The measured ``dram_write_bytes`` of small kernels can be below the output size (dirty lines stay in L2 at the
end of the launch); the bound still counts them (the standard roofline).

Fields missing in a spec fall back to H100/H200 values with ``"fallback"`` noted in ``sources``.
"""
from __future__ import annotations

import math
from typing import Any

__all__ = ["roofline", "roofline_from_counts", "with_simulated", "tensor_instructions", "flops_from_trace",
           "reference_flops", "min_dram_bytes", "peak_rates", "DTYPE_CLASS"]

DTYPE_CLASS = {"f16": "fp16", "bf16": "fp16", "tf32": "tf32", "e4m3": "fp8", "e5m2": "fp8", "e4m3x2": "fp8",
               "s8": "int8", "u8": "int8", "s4": "int8", "u4": "int8", "b1": "int8", "f64": "fp64"}
_ACC = {"f32", "s32", "f16"}
TENSOR_CLASSES = ("fp16", "tf32", "fp8", "int8", "fp64")
_FALLBACK = {"sm_mhz": 1755.0, "n_sms": 132, "subpartitions": 4, "hbm_gb_per_s": 3350.0, "units_per_sm": 4,
             "fp32_interval": 1}


def _get(obj, path, default=None):
    cur = obj
    for p in path.split("."):
        if cur is None:
            return default
        cur = cur.get(p) if isinstance(cur, dict) else getattr(cur, p, None)
    return default if cur is None else cur


def _shape_flops(shape: str) -> int:
    """2·m·n·k of ``m16n8k16``-style shape tokens (0 when not parseable)."""
    import re

    m = re.fullmatch(r"m(\d+)n(\d+)k(\d+)", shape)
    return 2 * int(m.group(1)) * int(m.group(2)) * int(m.group(3)) if m else 0


#: tcgen05.mma ``.kind::`` -> dtype class (PTX ISA "tcgen05.mma" kinds; f16 covers f16 and bf16, f8f6f4 the
#: modelled fp8 formats; the shape is in the runtime instruction descriptor, the FLOPs in the trace payload)
_TCGEN05_KIND = {"f16": "fp16", "tf32": "tf32", "f8f6f4": "fp8", "i8": "int8"}


def _mma_info(inst) -> tuple[str, str, str]:
    """(family "wgmma"|"mma_sync"|"tcgen05", A-type ("f16"...), shape) of a tensor instruction."""
    if str(inst.opcode).startswith("tcgen05"):
        kind = next((m[6:] for m in inst.mods if m.startswith("kind::")), "f16")
        return "tcgen05", kind, ""
    fam = "wgmma" if str(inst.opcode).startswith("wgmma") else "mma_sync"
    shape = ""
    types = []
    for m in inst.mods:
        if len(m) > 1 and m[0] == "m" and m[1].isdigit() and "n" in m and "k" in m:
            shape = m
        elif m in DTYPE_CLASS or m in _ACC:
            types.append(m)
    # mma: .dtype.atype.btype.ctype ; wgmma: .dtype.atype.btype -> A's type is the second type token
    a = types[1] if len(types) >= 2 else (types[0] if types else "f16")
    return fam, a, shape


def _is_tensor(inst) -> bool:
    if inst.opcode == "tcgen05.mma":
        return True
    name = getattr(inst.kind, "name", str(inst.kind))
    if name in ("WGMMA", "MMA_SYNC"):
        return True
    return inst.opcode in ("mma", "wgmma.mma_async") and name not in ("WGMMA_FENCE", "WGMMA_COMMIT", "WGMMA_WAIT")


def tensor_instructions(program) -> list[dict]:
    """The static tensor instructions of a Program: ``[{index, line, family, atype, dtype_class, shape}]``."""
    out = []
    if program is None:
        return out
    for inst in program.instructions:
        if _is_tensor(inst):
            fam, a, shape = _mma_info(inst)
            cls = _TCGEN05_KIND.get(a, "fp16") if fam == "tcgen05" else DTYPE_CLASS.get(a, "fp16")
            out.append({"index": inst.index, "line": inst.line, "family": fam, "atype": a,
                        "dtype_class": cls, "shape": shape})
    return out


def flops_from_trace(trace) -> dict[str, int]:
    """Dynamic tensor FLOPs by dtype class from a KernelTrace (or an object with ``.trace``)."""
    import numpy as np

    trace = getattr(trace, "trace", trace)
    ti = {d["index"]: d["dtype_class"] for d in tensor_instructions(trace.program)}
    out: dict[str, int] = {}
    if not ti:
        return out
    idx = np.fromiter(ti.keys(), dtype=np.int64)
    for b in trace.batches:
        pc = np.asarray(b.pc)
        sel = np.isin(pc, idx) & (np.asarray(b.pay) >= 0)
        if not sel.any():
            continue
        steps = np.nonzero(sel)[0]
        part = np.asarray(b.part)[np.asarray(b.mask)[steps]]           # (steps, W) participating warps
        a0 = np.asarray(b.payload_arr)[np.asarray(b.pay)[steps], :, 0]  # (steps, W)
        per_step = (a0 * part).sum(axis=1)
        for s, f in zip(pc[steps].tolist(), per_step.tolist()):
            c = ti[s]
            out[c] = out.get(c, 0) + int(f)
    return out


def _numel(shape) -> int:
    n = 1
    for x in shape:
        n *= int(x)
    return n


def reference_flops(record) -> tuple[dict[str, int], str] | None:
    """Useful FLOPs of the record's reference computation from buffer shapes: ``({"tensor": n, "simt_fp32": m},
    source)`` or None when the reference is unknown. ("tensor" is re-keyed by dtype class by the caller.)"""
    chk = getattr(record, "check", None)
    if chk is None:
        return None
    ref = chk.reference
    bufs = record.buffers
    try:
        ins = [bufs[n] for n in chk.inputs]
        out = bufs[chk.output]
    except KeyError:
        return None
    if ref in ("gemm", "gemm_nt") and len(ins) >= 2:
        k = int(ins[0].shape[-1])
        return {"tensor": 2 * _numel(out.shape) * k}, f"reference:{ref}"
    if ref == "attention" and len(ins) >= 3:
        q, kk, v = ins[0].shape, ins[1].shape, ins[2].shape
        s, d = int(q[-2]), int(q[-1])
        sk, dv = int(kk[-2]), int(v[-1])
        heads = _numel(q[:-2])
        causal = bool((chk.args or {}).get("causal", False))
        # reference masks with np.tril(ones(S, Sk)): row i sees min(i + 1, Sk) keys
        pairs = sum(min(i + 1, sk) for i in range(s)) if causal else s * sk
        return {"tensor": heads * pairs * 2 * (d + dv)}, f"reference:{ref}"
    if ref == "rmsnorm":
        x = ins[0].shape
        # x*x, sum, scale by rstd, multiply by w (4 FLOP/element) + one sqrt/div per row
        return {"simt_fp32": 4 * _numel(x) + 2 * _numel(x[:-1])}, f"reference:{ref}"
    if ref == "swiglu":
        # a / (1 + exp(-a)) * b: neg, exp, add, div, mul (exp/div on the SFU; counted as 1 each)
        return {"simt_fp32": 5 * _numel(out.shape)}, f"reference:{ref}"
    return None


def min_dram_bytes(record) -> dict[str, Any]:
    """``{read_bytes, write_bytes, total, inputs, outputs}`` (see module docstring)."""
    bufs = record.buffers
    chk = getattr(record, "check", None)
    outputs = [n for n, b in bufs.items() if b.init == "poison"]
    if chk is not None and chk.output in bufs and chk.output not in outputs:
        outputs.append(chk.output)
    for n in (chk.expected if chk is not None else ()):  # golden outputs are outputs too
        if n in bufs and n not in outputs:
            outputs.append(n)
    if chk is not None and chk.reference is not None:
        inputs = [n for n in chk.inputs if n in bufs]
    else:
        inputs = [n for n in bufs if n not in outputs]
    rd = sum(int(bufs[n].nbytes) for n in inputs)
    wr = sum(int(bufs[n].nbytes) for n in outputs)
    return {"read_bytes": rd, "write_bytes": wr, "total": rd + wr, "inputs": inputs, "outputs": outputs}


def peak_rates(spec, *, tensor_instrs: list[dict] | None = None, clock_mhz: float | None = None) -> dict[str, Any]:
    """Peaks per SM per cycle (tensor by class, simt_fp32) and GPU-wide HBM bytes per cycle, with sources."""
    sources: dict[str, str] = {}
    sm_mhz = _get(spec, "clocks.sm_mhz")
    if sm_mhz is None:
        sm_mhz = _FALLBACK["sm_mhz"]
        sources["clock_mhz"] = "fallback"
    clk = float(clock_mhz) if clock_mhz else float(sm_mhz)
    sources.setdefault("clock_mhz", "given" if clock_mhz else "spec.clocks.sm_mhz")
    n_sms = _get(spec, "sm.count")
    if n_sms is None:
        n_sms = _FALLBACK["n_sms"]
        sources["n_sms"] = "fallback"
    nsp = _get(spec, "sm.subpartitions", _FALLBACK["subpartitions"])
    bw = _get(spec, "hbm.bandwidth_gb_per_s")
    if bw is None:
        bw = _FALLBACK["hbm_gb_per_s"]
        sources["hbm"] = "fallback"
    else:
        sources["hbm"] = "spec.hbm.bandwidth_gb_per_s"
    tc = _get(spec, "tensor_core")
    units = int(_get(tc, "units_per_sm", _FALLBACK["units_per_sm"]))
    tensor: dict[str, float | None] = {}
    for cls in TENSOR_CLASSES:
        v = _get(tc, f"dense_{cls}_flop_per_cycle_per_sm")
        tensor[cls] = float(v) if v else None
        if v:
            sources[f"tensor.{cls}"] = f"spec.tensor_core.dense_{cls}_flop_per_cycle_per_sm"
    # mma.sync-only kernels: cap by the mma.sync issue rate (per shape key actually used)
    instrs = tensor_instrs or []
    if instrs and all(d["family"] == "mma_sync" for d in instrs):
        table = _get(tc, "mma_sync", {}) or {}
        default = _get(tc, "mma_sync_default")
        for d in instrs:
            key = f"{'s8' if d['atype'] == 'u8' else d['atype']}.{d['shape']}"
            t = table.get(key) if isinstance(table, dict) else None
            t = t if t is not None else default
            gap = _get(t, "issue_gap_cycles")
            f = _shape_flops(d["shape"])
            if not gap or not f:
                continue
            rate = units * f / float(gap)
            cls = d["dtype_class"]
            cur = tensor.get(cls)
            if cur is None or rate < cur:
                tensor[cls] = rate
                sources[f"tensor.{cls}"] = (f"mma.sync issue rate: units_per_sm {units} × {f} FLOP / "
                                            f"issue_gap_cycles {gap} (tensor_core.mma_sync[{key!r}])")
    fp32_ii = _get(spec, "latencies.fp32.interval_cycles", _FALLBACK["fp32_interval"])
    simt = int(nsp) * 32 * 2 / float(fp32_ii)
    return {"clock_mhz": clk, "n_sms": int(n_sms), "tensor_flop_per_cycle_per_sm": tensor,
            "simt_fp32_flop_per_cycle_per_sm": simt, "hbm_bytes_per_cycle": float(bw) * 1e3 / clk,
            "hbm_gb_per_s": float(bw), "sources": sources}


def roofline_from_counts(flops_by_dtype: dict[str, float], min_dram_bytes: float, spec, *,
                         clock_mhz: float | None = None, tensor_instrs: list[dict] | None = None,
                         peaks: dict | None = None) -> dict[str, Any]:
    """Roofline bound from counts (see module docstring). ``peaks``: a :func:`peak_rates` result to reuse."""
    pk = peaks or peak_rates(spec, tensor_instrs=tensor_instrs, clock_mhz=clock_mhz)
    n = pk["n_sms"]
    tensor_cycles = 0.0
    per_class: dict[str, float] = {}
    unbounded = []
    for cls, f in sorted(flops_by_dtype.items()):
        if cls == "simt_fp32" or not f:
            continue
        rate = pk["tensor_flop_per_cycle_per_sm"].get(cls)
        if not rate:
            unbounded.append(cls)
            continue
        c = float(f) / (rate * n)
        per_class[cls] = c
        tensor_cycles += c
    simt_flops = float(flops_by_dtype.get("simt_fp32", 0) or 0)
    simt_cycles = simt_flops / (pk["simt_fp32_flop_per_cycle_per_sm"] * n) if simt_flops else 0.0
    compute = max(tensor_cycles, simt_cycles)
    mem = float(min_dram_bytes) / pk["hbm_bytes_per_cycle"] if pk["hbm_bytes_per_cycle"] else 0.0
    bound = max(compute, mem)
    flops = float(sum(v for v in flops_by_dtype.values() if v))
    tensor_flops = float(sum(v for k, v in flops_by_dtype.items() if k != "simt_fp32" and v))
    # ridge point of the dominant tensor class (FLOP per DRAM byte where compute and memory bounds meet)
    dom = max(per_class, key=per_class.get) if per_class else None
    ridge = (pk["tensor_flop_per_cycle_per_sm"][dom] * n / pk["hbm_bytes_per_cycle"]) if dom else None
    clk = pk["clock_mhz"]
    return {
        "flops": flops,
        "tensor_flops": tensor_flops,
        "simt_flops": simt_flops,
        "flops_by_dtype": {k: float(v) for k, v in sorted(flops_by_dtype.items())},
        "min_dram_bytes": float(min_dram_bytes),
        "arithmetic_intensity": flops / float(min_dram_bytes) if min_dram_bytes else math.inf,
        "ridge_flop_per_byte": ridge,
        "compute_bound_cycles": compute,
        "tensor_bound_cycles": tensor_cycles,
        "tensor_bound_cycles_by_dtype": per_class,
        "simt_bound_cycles": simt_cycles,
        "memory_bound_cycles": mem,
        "bound_cycles": bound,
        "bound_us": bound / clk if clk else None,
        "bound_by": "compute" if compute > mem else "memory",
        "unbounded_dtypes": unbounded,
        "peak_tensor_flop_per_cycle": {k: (v * n if v else None) for k, v in pk["tensor_flop_per_cycle_per_sm"].items()},
        "peak_hbm_bytes_per_cycle": pk["hbm_bytes_per_cycle"],
        "clock_mhz": clk,
        "n_sms": n,
        "sources": dict(pk["sources"]),
    }


def _load_spec(spec):
    if spec is None or isinstance(spec, str):
        from warpgraph.topologies import load_arch

        return load_arch(spec or "h200")
    return spec


def roofline(record, program=None, spec=None, *, trace=None, flops_by_dtype: dict | None = None,
             clock_mhz: float | None = None) -> dict[str, Any]:
    """Roofline bound of one launch record (see module docstring). ``spec``: ArchSpec, arch name or None (h200).
    ``program``: the parsed PTX entry (default ``record.program()`` when loadable)."""
    spec = _load_spec(spec)
    if program is None:
        try:
            program = record.program()
        except Exception:  # no PTX available: dtype classes default to fp16
            program = None
    if program is None and trace is not None:
        program = getattr(getattr(trace, "trace", trace), "program", None)
    instrs = tensor_instructions(program)
    dram = min_dram_bytes(record)
    if flops_by_dtype is not None:
        counts, src = dict(flops_by_dtype), "given"
    elif trace is not None:
        counts, src = flops_from_trace(trace), "trace"
    else:
        r = reference_flops(record)
        if r is None:
            counts, src = {}, "none"
        else:
            raw, src = r
            counts = {}
            if raw.get("tensor"):
                cls = instrs[0]["dtype_class"] if instrs else "fp16"
                counts[cls] = raw["tensor"]
            if raw.get("simt_fp32"):
                counts["simt_fp32"] = raw["simt_fp32"]
    res = roofline_from_counts(counts, dram["total"], spec, clock_mhz=clock_mhz, tensor_instrs=instrs)
    fams = sorted({d["family"] for d in instrs})
    res.update({
        "record": getattr(record, "name", None),
        "flops_source": src,
        "min_dram_read_bytes": float(dram["read_bytes"]),
        "min_dram_write_bytes": float(dram["write_bytes"]),
        "inputs": dram["inputs"],
        "outputs": dram["outputs"],
        "tensor_path": "+".join(fams) if fams else "none",
    })
    return res


def with_simulated(bound, cycles: float) -> float:
    """Fraction of the roofline reached: ``bound_cycles / cycles`` (1.0 = at the bound; > 1 is unphysical).
    ``bound``: a roofline dict or a number of cycles."""
    b = bound["bound_cycles"] if isinstance(bound, dict) else float(bound)
    if not cycles or cycles <= 0:
        raise ValueError(f"cycles must be > 0, got {cycles!r}")
    return float(b) / float(cycles)
