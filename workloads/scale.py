"""Shrink (or grow) a launch record whose PTX is size-generic, for fast functional tests.

Triton specialises a kernel on each int argument's divisibility by 16 (``tt.divisibility``) and on ints
equal to 1 (specialised away). The same PTX is therefore valid for other sizes as long as every int param
that was a multiple of 16 stays one (and none becomes 1 — its param would not exist). This module knows
the calibration kernel families (``workloads/records/measure_src/kernels.py``), re-derives buffers, params
and grid from the sizes with the same formulas the records were made with, and checks first that those
formulas reproduce the original record exactly (so it refuses records it does not understand).

    scale_record(rec, M=256, N=256, K=256)      # explicit sizes (others kept)
    scale_record(rec, factor=8)                 # every size / 8, rounded to what the kernel allows
    small_variant(rec)                          # sizes that run functionally in seconds
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from warpgraph.core.errors import RecordError
from warpgraph.workloads.record import LaunchRecord


def _cdiv(a, b):
    return -(-a // b)


@dataclass(frozen=True)
class Family:
    name: str
    sizes: tuple[str, ...]                          # names of the scalable sizes
    current: Callable[[LaunchRecord], dict]         # sizes of a record of this family
    build: Callable[[LaunchRecord, dict], dict]     # -> {"buffers":…, "params":…, "grid":…}
    granule: Callable[[LaunchRecord, str, int], int]  # multiple the size must keep (given its current value)
    small: dict                                      # default small sizes
    name_of: Callable[[dict], str]
    int_params: tuple[str, ...] = ()                 # sizes passed to the kernel as int params


def _cx(rec: LaunchRecord, key: str, default=None):
    c = rec.source.get("constexprs") or {}
    if key not in c and default is None:
        raise rec.error(f"source.constexprs has no {key!r}", "source.constexprs",
                        f"the Triton constexprs of the kernel (needed to rescale), including {key}")
    return c.get(key, default)


def _div16(rec, size, value):
    return 16 if value % 16 == 0 else 1


def _nulls(rec: LaunchRecord, n_before: int) -> list:
    return [p.model_dump() for p in rec.params[n_before:]]


def _buf(rec, name, shape):
    b = rec.buffers[name].model_dump(mode="json")
    b["shape"] = list(shape)
    return b


# ---------------------------------------------------------------------------- gemm_ptr (+ gemm80)
def _gemm_ptr_current(rec):
    M, K = rec.buffers["a"].shape
    _, N = rec.buffers["b"].shape
    return dict(M=M, N=N, K=K)


def _gemm_ptr_build(rec, s):
    M, N, K = s["M"], s["N"], s["K"]
    bm, bn = _cx(rec, "BLOCK_M"), _cx(rec, "BLOCK_N")
    params = [{"ptr": "a"}, {"ptr": "b"}, {"ptr": "c"}, {"u32": M}, {"u32": N}, {"u32": K},
              {"u32": K}, {"u32": N}, {"u32": N}] + _nulls(rec, 9)
    return dict(buffers={"a": _buf(rec, "a", [M, K]), "b": _buf(rec, "b", [K, N]), "c": _buf(rec, "c", [M, N])},
                params=params, grid=[_cdiv(M, bm) * _cdiv(N, bn), 1, 1])


# ------------------------------------------------------------------------------------- gemm_tma
def _gemm_tma_current(rec):
    M, K = rec.buffers["a"].shape
    N, _ = rec.buffers["b"].shape
    return dict(M=M, N=N, K=K)


def _gemm_tma_build(rec, s):
    M, N, K = s["M"], s["N"], s["K"]
    bm, bn = _cx(rec, "BLOCK_M"), _cx(rec, "BLOCK_N")
    tm = [p.model_dump() for p in rec.params if p.kind == "tensormap"]
    params = []
    for t, (d0, d1) in zip(tm, [(M, K), (N, K), (M, N)]):
        params += [t, {"u32": d0}, {"u32": d1}, {"u64": d1}, {"u64": 1}]
    params += [{"u32": M}, {"u32": N}, {"u32": K}] + _nulls(rec, 18)
    return dict(buffers={"a": _buf(rec, "a", [M, K]), "b": _buf(rec, "b", [N, K]), "c": _buf(rec, "c", [M, N])},
                params=params, grid=[_cdiv(M, bm) * _cdiv(N, bn), 1, 1])


def _gemm_tma_granule(rec, size, value):
    # TMA: row pitches must stay multiples of 16 bytes; keep 16-divisibility of every int arg as well
    return 16 if value % 16 == 0 else 8


# ------------------------------------------------------------------------------------- attention
def _attn_current(rec):
    B, H, S, D = rec.buffers["q"].shape
    return dict(B=B, H=H, S=S)


def _attn_build(rec, s):
    B, H, S = s["B"], s["H"], s["S"]
    D = rec.buffers["q"].shape[3]
    bm = _cx(rec, "BLOCK_M")
    bufs = {n: _buf(rec, n, [B, H, S, D]) for n in "qkvo"}
    params = [p.model_dump() for p in rec.params[:5]] + [{"u32": S}] + _nulls(rec, 6)
    return dict(buffers=bufs, params=params, grid=[_cdiv(S, bm), B * H, 1])


def _attn_granule(rec, size, value):
    if size == "S":  # no masking in the kernel: whole BLOCK_M / BLOCK_N tiles only
        return math.lcm(_cx(rec, "BLOCK_M"), _cx(rec, "BLOCK_N"), 16)
    return 1


# --------------------------------------------------------------------------------------- rmsnorm
def _rms_current(rec):
    R, C = rec.buffers["x"].shape
    return dict(rows=R, cols=C)


def _rms_build(rec, s):
    R, C = s["rows"], s["cols"]
    if C > _cx(rec, "BLOCK"):
        raise rec.error(f"cols={C} exceeds the compiled BLOCK={_cx(rec, 'BLOCK')}", "source.constexprs.BLOCK",
                        "cols <= BLOCK (one CTA handles one whole row)")
    params = [p.model_dump() for p in rec.params[:3]] + [{"u32": C}, {"u32": C}] + \
        [p.model_dump() for p in rec.params[5:6]] + _nulls(rec, 6)
    return dict(buffers={"x": _buf(rec, "x", [R, C]), "w": _buf(rec, "w", [C]), "y": _buf(rec, "y", [R, C])},
                params=params, grid=[R, 1, 1])


def _rms_granule(rec, size, value):
    return _div16(rec, size, value) if size == "cols" else 1


# ---------------------------------------------------------------------------------------- swiglu
def _swiglu_current(rec):
    return dict(n=rec.buffers["a"].shape[0])


def _swiglu_build(rec, s):
    n = s["n"]
    params = [p.model_dump() for p in rec.params[:3]] + [{"u32": n}] + _nulls(rec, 4)
    return dict(buffers={k: _buf(rec, k, [n]) for k in "abc"}, params=params,
                grid=[_cdiv(n, _cx(rec, "BLOCK")), 1, 1])


def _fmt(prefix):
    return lambda s: prefix + "_" + "_".join(f"{k}{v}" for k, v in s.items())


FAMILIES: dict[str, Family] = {
    "gemm_ptr": Family("gemm_ptr", ("M", "N", "K"), _gemm_ptr_current, _gemm_ptr_build, _div16,
                       dict(M=256, N=256, K=256), _fmt("gemm_ptr"), ("M", "N", "K")),
    "gemm_tma": Family("gemm_tma", ("M", "N", "K"), _gemm_tma_current, _gemm_tma_build, _gemm_tma_granule,
                       dict(M=256, N=256, K=256), _fmt("gemm_tma"), ("M", "N", "K")),
    "attn_fwd": Family("attn_fwd", ("B", "H", "S"), _attn_current, _attn_build, _attn_granule,
                       dict(B=1, H=2, S=256), _fmt("attn"), ("S",)),
    "rmsnorm": Family("rmsnorm", ("rows", "cols"), _rms_current, _rms_build, _rms_granule,
                      dict(rows=8), _fmt("rmsnorm"), ("cols",)),
    "swiglu": Family("swiglu", ("n",), _swiglu_current, _swiglu_build, lambda r, s, v: _div16(r, s, v),
                     dict(n=8192), _fmt("swiglu"), ("n",)),
}


def family_of(rec: LaunchRecord) -> Family:
    kern = str(rec.source.get("kernel", ""))
    key = kern.rsplit(":", 1)[-1] if kern else rec.entry
    fam = FAMILIES.get(key) or FAMILIES.get(rec.entry)
    if fam is None:
        raise rec.error(f"don't know how to rescale kernel {key!r}", "source.kernel",
                        "one of the calibration kernel families: " + ", ".join(FAMILIES))
    return fam


def _matches(rec: LaunchRecord, built: dict) -> bool:
    cur = rec.to_json_dict()
    return (built["grid"] == cur["grid"] and built["params"] == cur["params"]
            and built["buffers"] == cur["buffers"])


def _round(value: int, granule: int, keep_not16: bool) -> int:
    v = max(granule, _cdiv(value, granule) * granule)
    if keep_not16 and v % 16 == 0:  # a size that was not a multiple of 16: keep it so (same code path)
        v += granule if granule % 16 else 8
    return v


def _new_name(record: LaunchRecord, fam: Family, cur: dict, new: dict) -> str:
    """``attn80_B4_H16_S1024_D64_causal0`` -> ``attn80_B1_H2_S256_D64_causal0`` (tokens replaced in place)."""
    import re

    name = record.name
    for k in fam.sizes:
        name, n = re.subn(rf"(?<=_){re.escape(k)}{cur[k]}(?=_|$)", f"{k}{new[k]}", name, count=1)
        if not n:
            return fam.name_of(new)
    return name


def scale_record(record: LaunchRecord, factor: int | float | None = None, **sizes: int) -> LaunchRecord:
    """A copy of ``record`` at other sizes (same PTX). ``sizes`` override named sizes (see
    ``family_of(record).sizes``); ``factor`` divides every size not given explicitly."""
    fam = family_of(record)
    unknown = set(sizes) - set(fam.sizes)
    if unknown:
        raise RecordError(f"unknown size(s) {sorted(unknown)} for kernel family {fam.name}",
                          location=record._loc("source.kernel"), hint="sizes " + ", ".join(fam.sizes))
    cur = fam.current(record)
    if not _matches(record, fam.build(record, cur)):
        raise record.error(f"record does not follow the {fam.name} layout of the calibration kernels; "
                           "cannot rescale it safely", "params",
                           f"buffers/params/grid as make_records.py builds them for {fam.name}")
    new = dict(cur)
    for k in fam.sizes:
        g = fam.granule(record, k, cur[k])
        if k in sizes:
            v = int(sizes[k])
            if v < 1:
                raise record.error(f"size {k}={v}", "source", "positive sizes")
            if v % g:
                raise record.error(f"{k}={v} is not a multiple of {g}", "params",
                                   f"{k} a multiple of {g}: the PTX was specialised on {k}={cur[k]} "
                                   "(Triton keeps divisibility by 16 of int args; tiles without masks)")
            new[k] = v
        elif factor is not None:
            new[k] = _round(max(1, int(cur[k] / factor)), g, k in fam.int_params and cur[k] % 16 != 0 and g < 16)
    built = fam.build(record, new)
    # every int param that was a multiple of 16 must remain one; none may become 1 (specialised away)
    for i, (old, p) in enumerate(zip(record.params, built["params"])):
        (kind, v), = p.items()
        if kind in ("u32", "s32", "u64", "s64") and old.value != v:
            if old.value % 16 == 0 and v % 16:
                raise record.error(f"param {i} would become {v}, not a multiple of 16 like {old.value}",
                                   f"params[{i}]", "sizes that keep each int param's divisibility by 16")
            if v == 1:
                raise record.error(f"param {i} would become 1 (Triton specialises 1 away)", f"params[{i}]",
                                   "sizes > 1")
    source = dict(record.source)
    source["scaled_from"] = record.name
    source["sizes"] = new
    out = record.derive(name=_new_name(record, fam, cur, new), source=source, **built)
    out.validate_against(None if record._program is None else record._program)
    return out


def small_variant(record: LaunchRecord) -> LaunchRecord:
    """Sizes that run functionally in seconds: GEMM 256^3 (N kept non-multiple-of-16 when it was, e.g. 200),
    attention B1 H2 S256, rmsnorm 8 rows, swiglu 8192 elements."""
    fam = family_of(record)
    cur = fam.current(record)
    sizes = {}
    for k, v in fam.small.items():
        g = fam.granule(record, k, cur[k])
        if k in fam.int_params and cur[k] % 16 and g < 16:
            v = v - 56  # e.g. N=3000 -> 200: keep a non-multiple of 16 (masked, unvectorised code path)
        sizes[k] = min(v, cur[k])
        if sizes[k] % g:
            sizes[k] = _cdiv(sizes[k], g) * g
    return scale_record(record, **sizes)
