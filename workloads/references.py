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

#: references a user loaded from a file named on the command line (``--references my_refs.py``); a record
#: only names them, it never carries code
USER_REFERENCES: dict = {}


def known_references() -> dict:
    """Built-in references plus those loaded with :func:`load_user_references` (built-ins win on a clash)."""
    return {**USER_REFERENCES, **REFERENCES}


def load_user_references(path) -> list[str]:
    """Load a Python file of reference functions (``--references FILE.py``): its ``REFERENCES`` dict if it
    defines one, else every public function it defines. Each takes the ``check.inputs`` arrays (float64)
    and ``**check.args`` and returns the expected output. Returns the names registered."""
    import importlib.util
    import inspect
    from pathlib import Path

    p = Path(path)
    if not p.is_file() or p.suffix != ".py":
        raise RecordError(f"no reference file {p}", location=str(p), hint="--references a Python file (.py)")
    spec = importlib.util.spec_from_file_location(f"_warpgraph_user_refs_{p.stem}", p)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as e:
        raise RecordError(f"cannot load reference file: {type(e).__name__}: {e}", location=str(p)) from None
    table = getattr(mod, "REFERENCES", None)
    if table is None:
        table = {n: f for n, f in vars(mod).items()
                 if inspect.isfunction(f) and f.__module__ == mod.__name__ and not n.startswith("_")}
    if not isinstance(table, dict) or not all(callable(f) for f in table.values()):
        raise RecordError("REFERENCES must map names to functions", location=str(p))
    clash = [n for n in table if n in REFERENCES]
    if clash:
        raise RecordError(f"reference name(s) {clash} are built in", location=str(p),
                          hint="other names for your own references")
    if not table:
        raise RecordError("the reference file defines no functions", location=str(p))
    USER_REFERENCES.update(table)
    return sorted(table)


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
    """Compare the run's outputs with the record's check: ``outputs[check.output]`` with the named reference
    computed from the input buffers, and each ``check.expected`` output with its golden ``.npy``
    (``outputs`` holds every buffer after the run, storage arrays as ``DeviceMemory.view`` gives them).
    ``rel_err`` of the result is the worst ratio err / tolerance seen, scaled to the first tolerance."""
    c = record.check
    if c is None:
        return CheckResult(True, 0.0, 0.0, f"{record.name}: no check block (nothing to compare)")
    results = []
    if c.reference is not None:
        results.append(_check_reference(record, outputs))
    for name, e in c.expected.items():
        results.append(_check_expected(record, outputs, name, e))
    if len(results) == 1:
        return results[0]
    ok = all(r.ok for r in results)
    worst = max(results, key=lambda r: (not r.ok, r.rel_err / r.max_rel_err if r.max_rel_err else r.rel_err))
    msg = f"{record.name}: {'OK' if ok else 'FAIL'} " + "; ".join(r.message.split(": ", 1)[1] for r in results)
    return CheckResult(ok, worst.rel_err, worst.max_rel_err, msg, sum(r.nan_count for r in results))


def _output_array(record, outputs, n, where):
    if n not in outputs:
        raise RecordError(f"buffer {n!r} missing from the run's outputs", location=record._loc(where),
                          hint="outputs with every buffer the check names")
    b = record.buffers[n]
    a = np.asarray(outputs[n])
    if a.size != b.numel:
        raise RecordError(f"output {n!r} has {a.size} elements, buffer declares shape {b.shape}",
                          location=record._loc(f"buffers.{n}.shape"))
    return to_float64(a.reshape(b.shape), b.dtype)


def load_expected(record, name: str) -> np.ndarray:
    """The golden values of ``check.expected[name]`` as float64 in the buffer's shape."""
    e = record.check.expected[name]
    where = f"check.expected.{name}.file"
    if record.dir is None:
        raise RecordError("a record with expected outputs needs its folder", location=record._loc(where),
                          hint="load it with load_record(DIR)")
    f = record.dir / e.file
    try:
        ref = np.load(f, allow_pickle=False)
    except FileNotFoundError:
        raise RecordError(f"no golden output file {f}", location=record._loc(where),
                          hint="a .npy next to launch.json (np.save of the output)") from None
    except (ValueError, OSError) as err:
        raise RecordError(f"cannot read {f} as .npy: {err}", location=record._loc(where)) from None
    b = record.buffers[name]
    if ref.size != b.numel:
        raise RecordError(f"{e.file} holds {ref.size} values ({ref.shape}), buffer {name!r} has shape {b.shape}",
                          location=record._loc(where), hint="the output's values, in its shape")
    if ref.dtype.kind not in "fiub":
        raise RecordError(f"{e.file} has dtype {ref.dtype}", location=record._loc(where),
                          hint="float or integer values (bf16 / fp8 outputs: save them as float32)")
    return ref.astype(np.float64).reshape(b.shape)


def _check_expected(record, outputs, name, e) -> CheckResult:
    ref = load_expected(record, name)
    out = _output_array(record, outputs, name, f"check.expected.{name}")
    nan = int((np.isnan(out) & ~np.isnan(ref)).sum())
    both_nan = np.isnan(out) & np.isnan(ref)
    o, r = np.where(both_nan, 0.0, out), np.where(both_nan, 0.0, ref)
    finite = bool(np.isfinite(o).all())
    parts, ok = [], finite and nan <= 0
    err_rel = rel_err(o, r) if finite else float("inf")
    if e.max_rel_err is not None:
        ok &= err_rel <= e.max_rel_err
        parts.append(f"rel_err={err_rel:.3e} (max {e.max_rel_err:g})")
    if e.max_abs_err is not None:
        err_abs = float(np.abs(o - r).max()) if o.size and finite else (0.0 if finite else float("inf"))
        ok &= err_abs <= e.max_abs_err
        parts.append(f"abs_err={err_abs:.3e} (max {e.max_abs_err:g})")
    if nan > 0:
        msg = f"{record.name}: FAIL {nan} of {out.size} elements of {name!r} are NaN (unwritten?)"
    elif not finite:
        msg = f"{record.name}: FAIL output {name!r} holds infinities or NaNs the golden output lacks"
    else:
        msg = f"{record.name}: {'OK' if ok else 'FAIL'} {name}: " + ", ".join(parts)
    if e.max_rel_err is not None:
        return CheckResult(bool(ok), err_rel, e.max_rel_err, msg, max(nan, 0))
    return CheckResult(bool(ok), err_abs, e.max_abs_err or 1.0, msg, max(nan, 0))


def _check_reference(record, outputs) -> CheckResult:
    c = record.check
    fn = known_references().get(c.reference)
    if fn is None:
        raise RecordError(f"unknown reference {c.reference!r}", location=record._loc("check.reference"),
                          hint="one of " + ", ".join(known_references()) + ", or a function of a file given "
                               "with --references FILE.py")
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
    except Exception as e:  # a user's reference may raise anything: report it against the record
        raise RecordError(f"reference {c.reference!r} cannot be called with these inputs/args: "
                          f"{type(e).__name__}: {e}",
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
