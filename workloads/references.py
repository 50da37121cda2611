"""Numpy references for a launch record's ``check`` block, and :func:`check`.

Same functions and the same error metric as the calibration set's ``references.py`` /
``run_records_gpu.py``: float64 math, ``rel_err = ||out - ref|| / ||ref||`` over the whole output, and any
NaN in the output fails the check (poisoned outputs show unwritten elements).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from warpgraph.core.errors import RecordError


# ------------------------------------------------------------------------------------ bf16 helpers
def bf16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    """bfloat16 stored as uint16 bits -> float32."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bits (uint16), round to nearest even; NaN stays a (quiet) NaN."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32)
    r = ((u + np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1))) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    if nan.any():
        r = np.where(nan, np.uint16(0x7FC0), r)
    return r


def _fp8_table(exp_bits: int, man_bits: int, bias: int, fn: bool) -> np.ndarray:
    v = np.arange(256, dtype=np.int64)
    s = np.where(v >> 7, -1.0, 1.0)
    e = (v >> man_bits) & ((1 << exp_bits) - 1)
    m = v & ((1 << man_bits) - 1)
    val = np.where(e == 0, m / (1 << man_bits) * 2.0 ** (1 - bias), (1 + m / (1 << man_bits)) * 2.0 ** (e - bias))
    val = s * val
    if fn:  # e4m3fn: only S.1111.111 is NaN, no infinities
        val = np.where((v & 0x7F) == 0x7F, np.nan, val)
    else:  # e5m2: IEEE-like
        top = (1 << exp_bits) - 1
        val = np.where((e == top) & (m == 0), s * np.inf, val)
        val = np.where((e == top) & (m != 0), np.nan, val)
    return val


_FP8 = {"float8_e4m3fn": _fp8_table(4, 3, 7, True), "float8_e5m2": _fp8_table(5, 2, 15, False)}


def to_float64(arr: np.ndarray, dtype: str) -> np.ndarray:
    """A buffer's storage array (as ``DeviceMemory.view`` returns it) as float64 values."""
    if dtype == "bfloat16":
        return bf16_bits_to_f32(arr).astype(np.float64)
    if dtype in _FP8:
        return _FP8[dtype][np.asarray(arr, dtype=np.uint8)]
    return np.asarray(arr).astype(np.float64)


# -------------------------------------------------------------------------------------- references
def gemm(a, b):
    """C = A @ B with A [M, K], B [K, N]."""
    return a.astype(np.float64) @ b.astype(np.float64)


def gemm_nt(a, b):
    """C = A @ B^T with A [M, K], B [N, K]."""
    return a.astype(np.float64) @ b.astype(np.float64).T


def attention(q, k, v, scale, causal):
    """softmax(Q K^T * scale [+ causal mask]) V over the last two axes; q, k, v are [..., S, D]."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = np.matmul(q, np.swapaxes(k, -1, -2)) * scale
    if causal:
        nq, nk = s.shape[-2], s.shape[-1]
        s = np.where(np.tril(np.ones((nq, nk), dtype=bool)), s, -np.inf)
    s = s - s.max(-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(-1, keepdims=True)
    return np.matmul(p, v)


def rmsnorm(x, w, eps):
    x = x.astype(np.float64)
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w.astype(np.float64)


def swiglu(a, b):
    a = a.astype(np.float64)
    return a / (1.0 + np.exp(-a)) * b.astype(np.float64)


REFERENCES = {"gemm": gemm, "gemm_nt": gemm_nt, "attention": attention, "rmsnorm": rmsnorm, "swiglu": swiglu}


# ------------------------------------------------------------------------------------------- check
@dataclass(frozen=True)
class CheckResult:
    ok: bool
    rel_err: float
    max_rel_err: float
    message: str
    nan_count: int = 0

    def __bool__(self):
        return self.ok


def rel_err(out: np.ndarray, ref: np.ndarray) -> float:
    out = np.asarray(out, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    den = float(np.linalg.norm(ref))
    num = float(np.linalg.norm(out - ref))
    if den == 0.0:
        return 0.0 if num == 0.0 else float("inf")
    return num / den


def check(record, outputs: dict[str, np.ndarray]) -> CheckResult:
    """Compare ``outputs[record.check.output]`` with the reference computed from the input buffers
    (``outputs`` holds every buffer after the run, storage arrays as ``DeviceMemory.view`` gives them)."""
    c = record.check
    if c is None:
        return CheckResult(True, 0.0, 0.0, f"{record.name}: no check block (nothing to compare)")
    fn = REFERENCES.get(c.reference)
    if fn is None:
        raise RecordError(f"unknown reference {c.reference!r}", location=record._loc("check.reference"),
                          hint="one of " + ", ".join(REFERENCES))
    arrays = {}
    for n in [c.output] + list(c.inputs):
        if n not in outputs:
            raise RecordError(f"buffer {n!r} missing from the run's outputs", location=record._loc("check"),
                              hint="outputs with every buffer the check names")
        b = record.buffers[n]
        a = np.asarray(outputs[n])
        if a.size != b.numel:
            raise RecordError(f"output {n!r} has {a.size} elements, buffer declares shape {b.shape}",
                              location=record._loc(f"buffers.{n}.shape"))
        arrays[n] = to_float64(a.reshape(b.shape), b.dtype)
    try:
        ref = fn(*[arrays[n] for n in c.inputs], **c.args)
    except TypeError as e:
        raise RecordError(f"reference {c.reference!r} cannot be called with these inputs/args: {e}",
                          location=record._loc("check"), hint="check.inputs and check.args matching the reference") from None
    out = arrays[c.output]
    ref = np.asarray(ref, dtype=np.float64)
    if ref.shape != out.shape:
        if ref.size != out.size:
            raise RecordError(f"reference result shape {ref.shape} does not match output shape {out.shape}",
                              location=record._loc("check"))
        ref = ref.reshape(out.shape)
    nan = int(np.isnan(out).sum())
    finite = bool(np.isfinite(out).all())
    err = rel_err(out, ref) if finite else float("inf")
    ok = finite and err <= c.max_rel_err
    if nan:
        msg = f"{record.name}: FAIL {nan} of {out.size} output elements of {c.output!r} are NaN (unwritten?)"
    elif not finite:
        msg = f"{record.name}: FAIL output {c.output!r} holds infinities"
    else:
        msg = (f"{record.name}: {'OK' if ok else 'FAIL'} rel_err={err:.3e} "
               f"{'<=' if ok else '>'} max_rel_err={c.max_rel_err:g} ({c.reference})")
    return CheckResult(ok, err, c.max_rel_err, msg, nan)
