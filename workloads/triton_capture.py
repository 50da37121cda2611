"""Capture a Triton kernel launch as a launch record, offline (no GPU), with Triton's exact specialization.

    from warpgraph.workloads.triton_capture import capture, Buf
    rec = capture(kernels.gemm_ptr, grid=(4,), args=[a, b, c, 256, 256, 256, 256, 1, 256, 1, 256, 1],
                  target="sm_90a", num_warps=8, num_stages=3, out_dir="rec/gemm_small",
                  BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8)

Args may be numpy arrays, CPU torch tensors, :class:`Buf` (a buffer described by dtype/shape/init without
data), ``triton.tools.tensor_descriptor.TensorDescriptor`` over any of those, ints, floats and None.
Specialization runs through Triton's own binder (``create_function_from_signature`` + ``_pack_args``), as
``kernel[grid](...)`` would on a GPU, with buffers at the 256-byte aligned addresses
``DeviceMemory`` uses (so pointers get ``tt.divisibility = 16``; ints divisible by 16 get it too; ints
equal to 1 become constexprs). The result's PTX equals the GPU launcher's apart from ``.file`` lines and
DWARF path strings. Needs the optional extra ``triton`` (``pip install triton==3.6.0``); Triton's compile
pipeline runs ``ptxas`` for the cubin stage — the wheel bundles it (``triton/backends/nvidia/bin``).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from warpgraph.core.errors import RecordError, UserError
from warpgraph.workloads.record import DTYPES, LaunchRecord, entry_params, record_from_dict, save_record

_TARGETS = {"sm_80": 80, "sm_86": 86, "sm_89": 89, "sm_90": 90, "sm_90a": 90, "sm_100": 100, "sm_100a": 100,
            "sm_120": 120}


class CaptureError(UserError):
    """A Triton kernel that cannot be captured (bad args, Triton missing, compile failure)."""


class _DTypeName(str):
    """A dtype name that also answers ``itemsize`` / ``is_floating_point`` (for TensorDescriptor)."""

    @property
    def itemsize(self):
        return DTYPES[str(self)].itemsize

    @property
    def is_floating_point(self):
        return DTYPES[str(self)].is_float


@dataclass
class Buf:
    """A device buffer without data: ``Buf("float16", [256, 256], init={"normal": 0.1})``. Usable as the
    base of a ``TensorDescriptor``."""

    dtype: str
    shape: list[int]
    init: Any = field(default_factory=lambda: {"normal": 1.0})

    def __post_init__(self):
        self.dtype = _DTypeName(self.dtype)
        self.shape = [int(x) for x in self.shape]

    @property
    def itemsize(self):
        return DTYPES[self.dtype].itemsize

    def data_ptr(self):  # any 256-aligned address; the real one is assigned at capture
        return 0

    def stride(self):
        return tuple(int(np.prod(self.shape[d + 1:], dtype=np.int64)) for d in range(len(self.shape)))


def tensor_descriptor(base, block_shape, padding: str = "zero"):
    """A ``triton.tools.tensor_descriptor.TensorDescriptor`` over the whole of ``base`` (numpy array, CPU
    tensor or :class:`Buf`), dense row-major, without Triton's host-pointer checks."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    shape = list(base.shape)
    strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
    d = object.__new__(TensorDescriptor)
    d.base, d.shape, d.strides, d.block_shape, d.padding = base, shape, strides, list(block_shape), padding
    return d


class _DType:
    """Just enough of a torch dtype for Triton's specializer and TensorDescriptor."""

    def __init__(self, name: str):
        self.name = name
        self.itemsize = DTYPES[name].itemsize
        self.is_floating_point = DTYPES[name].is_float

    def __str__(self):
        return "torch." + self.name

    __repr__ = __str__


class _DevPtr:
    """A fake device tensor: ``data_ptr()`` + ``dtype`` (what Triton specializes pointers on)."""

    def __init__(self, ptr: int, dtype: str, shape):
        self.ptr = ptr
        self.dtype = _DType(dtype)
        self.shape = list(shape)

    def data_ptr(self):
        return self.ptr


def _require_triton():
    try:
        import triton  # noqa: F401
    except ImportError:
        raise CaptureError("Triton is not installed", hint="pip install 'warpgraph[triton]' (triton==3.6.0)") from None
    import triton

    return triton


def _as_buf(x, pname: str) -> tuple[Buf, np.ndarray | None] | None:
    """numpy / torch / Buf -> (Buf, data or None); None if x is not a buffer."""
    if isinstance(x, Buf):
        if x.dtype not in DTYPES:
            raise CaptureError(f"argument {pname}: unknown dtype {x.dtype!r}", hint="one of " + ", ".join(DTYPES))
        return x, None
    if isinstance(x, np.ndarray):
        name = x.dtype.name
        if name not in DTYPES:
            raise CaptureError(f"argument {pname}: numpy dtype {name} not supported", hint=", ".join(DTYPES))
        return Buf(name, list(x.shape), _guess_init(x, name)), x
    mod = type(x).__module__
    if mod.startswith("torch") and hasattr(x, "data_ptr"):
        import torch

        if x.device.type != "cpu":
            x = x.cpu()
        if not x.is_contiguous():
            raise CaptureError(f"argument {pname}: tensor is not contiguous", hint="contiguous tensors (row-major)")
        name = str(x.dtype).removeprefix("torch.")
        if name not in DTYPES:
            raise CaptureError(f"argument {pname}: torch dtype {x.dtype} not supported", hint=", ".join(DTYPES))
        arr = x.view(torch.int16).numpy().view(np.uint16) if name == "bfloat16" else x.numpy()
        return Buf(name, list(x.shape), _guess_init(arr, name)), arr
    return None


def _guess_init(arr: np.ndarray, dtype: str):
    if arr.size == 0 or not np.any(arr.view(np.uint8)):
        return "zeros"
    if DTYPES[dtype].is_float and dtype in ("float16", "float32", "float64") and np.isnan(arr).any():
        return "poison"
    if DTYPES[dtype].is_float and dtype in ("float16", "float32", "float64"):
        s = float(np.std(arr.astype(np.float64)))
        return {"normal": float(f"{s:.2g}")} if s > 0 else "zeros"
    return {"normal": 1.0}


def capture(kernel, grid, args, *, target: str = "sm_90a", num_warps: int = 4, num_stages: int = 3,
            out_dir: str | Path | None = None, name: str | None = None, check: dict | None = None,
            inits: dict[str, Any] | None = None, buffer_names: dict[str, str] | None = None,
            **constexprs) -> LaunchRecord:
    """Compile ``kernel`` (a ``@triton.jit`` function) for ``target`` as ``kernel[grid](*args, **constexprs,
    num_warps=…, num_stages=…)`` would, and return (and save to ``out_dir`` if given) its launch record.

    Buffers are named after the kernel parameter, minus a ``_ptr`` / ``_desc`` suffix (``a_ptr`` -> ``a``),
    or per ``buffer_names`` ({param: name}); ``inits`` ({buffer: init}) overrides the guessed ``init``
    (zeros if all-zero, poison if it holds NaN, else normal(std)); ``Buf`` args carry their own."""
    triton = _require_triton()
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource, make_backend
    from triton.runtime.jit import create_function_from_signature
    from triton.tools.tensor_descriptor import TensorDescriptor

    from warpgraph.workloads.memory import ALIGN, GLOBAL_BASE, GUARD_BYTES

    if target not in _TARGETS:
        raise CaptureError(f"unknown target {target!r}", hint="one of " + ", ".join(_TARGETS))
    if not hasattr(kernel, "params") or not hasattr(kernel, "signature"):
        raise CaptureError(f"{kernel!r} is not a @triton.jit function")
    pnames = [p.name for p in kernel.params]
    nonconst = [p.name for p in kernel.params if not p.is_constexpr]
    if len(args) > len(pnames):
        raise CaptureError(f"{len(args)} args for a kernel with {len(pnames)} parameters ({', '.join(pnames)})")
    grid = [int(g) for g in (grid if isinstance(grid, (list, tuple)) else [grid])]
    if not 1 <= len(grid) <= 3:
        raise CaptureError(f"grid {grid}", hint="1 to 3 positive ints")
    grid += [1] * (3 - len(grid))

    # ---- buffers at DeviceMemory's addresses (same order, same alignment rule)
    buffers: dict[str, dict] = {}
    addr_of: dict[int, tuple[str, int]] = {}   # id(obj) -> (buffer name, address)
    off = 0
    tl_args = []
    descs: list[tuple[int, str, Any]] = []     # (arg position, buffer, TensorDescriptor)

    def alloc(obj, pname):
        nonlocal off
        if id(obj) in addr_of:
            return addr_of[id(obj)]
        bname = (buffer_names or {}).get(pname) or pname.removesuffix("_ptr").removesuffix("_desc") or pname
        if bname in buffers:
            bname = pname
        got = _as_buf(obj, pname)
        if got is None:
            raise CaptureError(f"argument {pname}: cannot use {type(obj).__name__} as a buffer",
                               hint="numpy array, CPU torch tensor or warpgraph Buf")
        b, _ = got
        if inits and bname in inits:
            b.init = inits[bname]
        off = (off + ALIGN - 1) // ALIGN * ALIGN
        addr = GLOBAL_BASE + off
        nbytes = int(np.prod(b.shape, dtype=np.int64)) * b.itemsize
        off += nbytes + GUARD_BYTES
        buffers[bname] = {"dtype": str(b.dtype), "shape": list(b.shape), "init": b.init}
        addr_of[id(obj)] = (bname, addr)
        return bname, addr

    for i, a in enumerate(args):
        pname = pnames[i]
        if isinstance(a, TensorDescriptor):
            bname, addr = alloc(a.base, pname)
            b = buffers[bname]
            if list(a.shape) != b["shape"]:
                raise CaptureError(f"argument {pname}: descriptor shape {list(a.shape)} != buffer shape {b['shape']}",
                                   hint="a descriptor over the whole buffer (launch-record/1 tensormaps are)")
            dense = [int(np.prod(b["shape"][d + 1:], dtype=np.int64)) for d in range(len(b["shape"]))]
            if list(a.strides) != dense:
                raise CaptureError(f"argument {pname}: strides {list(a.strides)} are not dense row-major {dense}")
            fake = _DevPtr(addr, b["dtype"], b["shape"])
            tl_args.append(TensorDescriptor(fake, list(a.shape), list(a.strides), list(a.block_shape), a.padding))
            descs.append((i, bname, a))
        elif isinstance(a, (bool, np.bool_)):
            tl_args.append(bool(a))
        elif isinstance(a, (int, np.integer)):
            tl_args.append(int(a))
        elif isinstance(a, (float, np.floating)):
            tl_args.append(float(a))
        elif a is None:
            tl_args.append(None)
        else:
            bname, addr = alloc(a, pname)
            tl_args.append(_DevPtr(addr, buffers[bname]["dtype"], buffers[bname]["shape"]))
    missing = [n for n in nonconst[len(args):] if n not in constexprs]
    if missing:
        raise CaptureError(f"missing arguments: {', '.join(missing)}")

    # ---- Triton's own specialization and compile
    gt = GPUTarget("cuda", _TARGETS[target], 32)
    backend = make_backend(gt)
    binder = create_function_from_signature(kernel.signature, kernel.params, backend)
    kw = dict(constexprs, num_warps=num_warps, debug=False, instrumentation_mode="")
    if num_stages is not None:
        kw["num_stages"] = num_stages
    try:
        bound, spec, opts = binder(*tl_args, **kw)
        options, signature, cexprs, attrs = kernel._pack_args(backend, kw, bound, spec, opts)
        ck = triton.compile(ASTSource(kernel, signature, cexprs, attrs), target=gt, options=options.__dict__)
    except UserError:
        raise
    except Exception as e:  # compile errors carry the Triton source location in their text
        raise CaptureError(f"Triton failed to compile {kernel.fn.__name__}: {type(e).__name__}: {e}") from None
    ptx = ck.asm["ptx"]
    entry = ck.metadata.name

    # ---- params in PTX order
    params: list[dict] = []
    tmeta = list(getattr(ck.metadata, "tensordesc_meta", None) or [])
    di = 0
    for i, pname in enumerate(pnames[:len(args)]):
        sig = signature[pname]
        v = bound[pname]
        if sig == "constexpr":
            continue
        if sig.startswith("tensordesc"):
            _, bname, d = descs[di]
            meta = tmeta[di] if di < len(tmeta) else None
            di += 1
            box = list(meta["block_size"]) if meta else list(d.block_shape)
            sw = {0: 0, 1: 32, 2: 64, 3: 128}[meta["swizzle"]] if meta else 0
            params.append({"tensormap": {"buffer": bname, "box": box, "swizzle_bytes": sw,
                                         "oob_fill": "nan" if d.padding == "nan" else "zero"}})
            params += [{"u32": int(s)} for s in d.shape] + [{"u64": int(s)} for s in d.strides]
        elif sig.startswith("*"):
            params.append({"ptr": addr_of[id(args[i])][0]} if args[i] is not None else {"ptr": None})
        elif sig in ("i32", "i16", "i8"):
            params.append({"u32" if v >= 0 else "s32": int(v)})
        elif sig == "u32":
            params.append({"u32": int(v)})
        elif sig in ("i64",):
            params.append({"u64" if v >= 0 else "s64": int(v)})
        elif sig == "u64":
            params.append({"u64": int(v)})
        elif sig in ("fp32", "f32"):
            params.append({"f32": float(v)})
        elif sig in ("fp64", "f64"):
            params.append({"f64": float(v)})
        else:
            raise CaptureError(f"argument {pname}: Triton type {sig!r} has no launch-record/1 param kind",
                               hint="pointers, tensor descriptors, 32/64-bit ints, fp32/fp64 scalars")
    ptx_params = entry_params(ptx, entry)
    for q in ptx_params[len(params):]:  # Triton's trailing global/profile scratch pointers
        if q["type"] not in ("u64", "b64"):
            raise CaptureError(f"PTX param {q['name']} ({q['decl']}) has no matching argument")
        params.append({"ptr": None})

    src_file = inspect.getsourcefile(kernel.fn) or "?"
    cx_public = {}
    for path, v in cexprs.items():
        if len(path) == 1 and kernel.params[path[0]].is_constexpr:  # not the ints specialized to 1
            v = getattr(v, "value", v)
            cx_public[pnames[path[0]]] = v if isinstance(v, (int, float, bool, str)) or v is None else str(v)
    rec_dict = {
        "format": "launch-record/1",
        "name": name or f"{entry}_{target}",
        "source": {"compiler": f"triton {triton.__version__}", "kernel": f"{Path(src_file).name}:{kernel.fn.__name__}",
                   "target": target, "constexprs": cx_public, "num_warps": num_warps, "num_stages": num_stages,
                   "captured_by": "warpgraph.workloads.triton_capture"},
        "ptx": "kernel.ptx",
        "entry": entry,
        "grid": grid,
        "block": [num_warps * 32, 1, 1],
        "cluster": list(getattr(ck.metadata, "cluster_dims", None) or (1, 1, 1))[:3],
        "shared_bytes": int(ck.metadata.shared),
        "buffers": buffers,
        "params": params,
    }
    if check is not None:
        rec_dict["check"] = check
    rec_dict["compiled"] = _compiled_block(ptx, entry, target)
    rec = record_from_dict(rec_dict, ptx_text=ptx)
    rec.validate_against(None)
    if out_dir is not None:
        rec = save_record(rec, out_dir, ptx)
    return rec


def _compiled_block(ptx: str, entry: str, target: str) -> dict:
    """ptxas facts (registers, spills) recorded at capture, for the GPU ISA the record runs on: the target itself
    for Blackwell, sm_90a (H100/H200) for Hopper and older targets, which Hopper runs (workloads/compiled.py)."""
    from warpgraph.workloads.compiled import ptxas_facts

    isa = target if _TARGETS[target] >= 100 else "sm_90a"
    f, why = ptxas_facts(ptx, entry, isa, prefer="triton")
    if f is None:
        import warnings

        warnings.warn(f"capture: no compiler facts recorded for {isa} ({why})", stacklevel=3)
        return {}
    return {isa: f.to_json()}

