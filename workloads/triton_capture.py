"""Capture a Triton kernel launch as a launch record, offline (no GPU), with Triton's exact specialization.

    from warpgraph.workloads.triton_capture import capture, Buf
    rec = capture(kernels.gemm_ptr, grid=(4,), args=[a, b, c, 256, 256, 256, 256, 1, 256, 1, 256, 1],
                  target="sm_90a", num_warps=8, num_stages=3, out_dir="rec/gemm_small",
                  BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8)

Args may be numpy arrays, CPU torch tensors, :class:`Buf` (a buffer described by dtype/shape/init without
data), ``triton.tools.tensor_descriptor.TensorDescriptor`` over any of those, ints, floats, None, strings,
tuples and Triton dtypes; they bind by position (``args``) or name (``kwargs`` / keywords), defaults apply.
Kernels that build descriptors on the device (``tl.make_tensor_descriptor``) get a real ``global_scratch``
buffer; warp-specialized kernels get their ``.reqntid`` block.
Specialization runs through Triton's own binder (``create_function_from_signature`` + ``_pack_args``), as
``kernel[grid](...)`` would on a GPU, with buffers at the 256-byte aligned addresses
``DeviceMemory`` uses (so pointers get ``tt.divisibility = 16``; ints divisible by 16 get it too; ints
equal to 1 become constexprs). The result's PTX equals the GPU launcher's apart from ``.file`` lines and
DWARF path strings (and, for warp-specialized kernels, the two mbarrier offsets Triton 3.6 may swap between
fresh compiles). A host descriptor's box follows the TMA copies in the TTGIR where Triton's warp-specialized
data partitioning split its tile (:mod:`warpgraph.workloads.triton_tma_boxes`, with a warning). Needs the optional extra ``triton`` (``pip install triton==3.6.0``); Triton's compile
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
from warpgraph.workloads.triton_tma_boxes import host_desc_copy_shapes

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


_DTYPE_OBJS: dict[str, _DType] = {}


def _dtype_obj(name: str) -> _DType:
    """One long-lived object per dtype: Triton's specializer caches type strings by the dtype object's id, so
    short-lived dtype objects could alias (a bf16 pointer specialized as an earlier, freed fp16 one)."""
    if name not in _DTYPE_OBJS:
        _DTYPE_OBJS[name] = _DType(name)
    return _DTYPE_OBJS[name]


class _DevPtr:
    """A fake device tensor: ``data_ptr()`` + ``dtype`` (what Triton specializes pointers on)."""

    def __init__(self, ptr: int, dtype: str, shape):
        self.ptr = ptr
        self.dtype = _dtype_obj(dtype)
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


#: Triton launch options (``kernel[grid](..., num_warps=4)``) capture accepts; a kernel parameter with one of
#: these names takes the launch option's value too, as Triton binds the one keyword to both.
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "launch_cooperative_grid",
                  "launch_pdl")
_OPTION_DEFAULTS = {"num_warps": 4, "num_stages": 3}


def _reqntid(ptx: str, entry: str) -> list[int] | None:
    """The entry's ``.reqntid X[, Y[, Z]]`` (warp-specialized kernels declare their real block there)."""
    import re

    m = re.search(r"\.entry\s+" + re.escape(entry) + r"\s*\(", ptx)
    if m is None:
        return None
    end = ptx.find(")", m.end())
    brace = ptx.find("{", end)
    d = re.search(r"\.reqntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", ptx[end:brace])
    if d is None:
        return None
    return [int(x) if x else 1 for x in d.groups()]


def capture(kernel, grid, args=(), *, kwargs: dict | None = None, target: str = "sm_90a",
            num_warps: int | None = None, num_stages: int | None = None, options: dict | None = None,
            out_dir: str | Path | None = None, name: str | None = None, check: dict | None = None,
            inits: dict[str, Any] | None = None, buffer_names: dict[str, str] | None = None,
            extra_buffers: dict[str, Any] | None = None, **constexprs) -> LaunchRecord:
    """Compile ``kernel`` (a ``@triton.jit`` function) for ``target`` as ``kernel[grid](*args, **kwargs,
    **constexprs, num_warps=…, num_stages=…, **options)`` would, and return (and save to ``out_dir`` if given)
    its launch record.

    Arguments bind by position (``args``) and by name (``kwargs``, or keyword ``constexprs`` when the name does
    not clash with this function's own keywords); parameters left out take their Python defaults
    (``ACT: tl.constexpr = "none"``). String, tuple and dtype constexprs pass through unchanged. A kernel
    parameter named like a launch option (``num_stages: tl.constexpr``) also sets that option, as with
    Triton; giving both with different values is an error. ``num_warps`` / ``num_stages`` default to
    Triton's 4 / 3.

    Buffers are named after the kernel parameter, minus a ``_ptr`` / ``_desc`` suffix (``a_ptr`` -> ``a``),
    or per ``buffer_names`` ({param: name}); ``inits`` ({buffer: init}) overrides the guessed ``init``
    (zeros if all-zero, poison if it holds NaN, else normal(std)); ``Buf`` args carry their own.
    ``extra_buffers`` ({name: Buf or array}) adds buffers no parameter names, reached through device pointer
    tables (a ``uint64`` Buf with ``init={"addresses": [...]}``). Kernels that
    need global scratch (device-side tensor descriptors, ``triton.set_allocator``) get a zero-initialised
    ``global_scratch`` buffer of grid x num_ctas x ``metadata.global_scratch_size`` bytes, as Triton's
    launcher allocates; the block is the PTX ``.reqntid`` when the kernel declares one (warp
    specialization adds warps beyond ``num_warps``)."""
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
    if len(args) > len(pnames):
        raise CaptureError(f"{len(args)} args for a kernel with {len(pnames)} parameters ({', '.join(pnames)})")
    grid = [int(g) for g in (grid if isinstance(grid, (list, tuple)) else [grid])]
    if not 1 <= len(grid) <= 3 or any(g < 1 for g in grid):
        raise CaptureError(f"grid {grid}", hint="1 to 3 positive ints")
    grid += [1] * (3 - len(grid))

    # ---- every argument by name; launch options (and parameters that share their names)
    given: dict[str, Any] = {pnames[i]: a for i, a in enumerate(args)}
    for src in (kwargs or {}), constexprs:
        for k, v in src.items():
            if k in given:
                raise CaptureError(f"argument {k!r} given twice")
            given[k] = v
    opts: dict[str, Any] = dict(options or {})
    for k in opts:
        if k not in LAUNCH_OPTIONS:
            raise CaptureError(f"unknown launch option {k!r}", hint="one of " + ", ".join(LAUNCH_OPTIONS))
    for k, v in (("num_warps", num_warps), ("num_stages", num_stages)):
        if v is not None:
            if k in opts and opts[k] != v:
                raise CaptureError(f"launch option {k} given twice ({opts[k]} and {v})")
            opts[k] = v
    unknown = [k for k in given if k not in pnames]
    if unknown:
        raise CaptureError(f"unknown argument(s) {unknown}", hint="kernel parameters: " + ", ".join(pnames))
    for k in LAUNCH_OPTIONS:
        if k in pnames:  # the one keyword feeds the parameter and the option
            if k in given and k in opts and given[k] != opts[k]:
                raise CaptureError(f"kernel parameter {k}={given[k]!r} and launch option {k}={opts[k]!r} differ",
                                   hint=f"Triton passes one `{k}=` keyword to both; give it once")
            if k in given:
                opts[k] = given[k]
            elif k in opts:
                given[k] = opts[k]
    for k, v in _OPTION_DEFAULTS.items():
        opts.setdefault(k, v)
    missing = [p.name for p in kernel.params if p.name not in given and not p.has_default]
    if missing:
        raise CaptureError(f"missing arguments: {', '.join(missing)}", hint="kernel parameters: " + ", ".join(pnames))

    # ---- buffers at DeviceMemory's addresses (same order, same alignment rule)
    buffers: dict[str, dict] = {}
    addr_of: dict[int, tuple[str, int]] = {}   # id(obj) -> (buffer name, address)
    off = 0

    def place(bname, dtype, shape, init):
        nonlocal off
        off = (off + ALIGN - 1) // ALIGN * ALIGN
        addr = GLOBAL_BASE + off
        nbytes = int(np.prod(shape, dtype=np.int64)) * DTYPES[dtype].itemsize
        off += nbytes + GUARD_BYTES
        buffers[bname] = {"dtype": str(dtype), "shape": list(shape), "init": init}
        return addr

    def alloc(obj, pname):
        if id(obj) in addr_of:
            return addr_of[id(obj)]
        bname = (buffer_names or {}).get(pname) or pname.removesuffix("_ptr").removesuffix("_desc") or pname
        k = 1
        base = bname if bname not in buffers else pname
        bname = base
        while bname in buffers:
            k += 1
            bname = f"{base}_{k}"
        got = _as_buf(obj, pname)
        if got is None:
            raise CaptureError(f"argument {pname}: cannot use {type(obj).__name__} as a buffer",
                               hint="numpy array, CPU torch tensor or warpgraph Buf")
        b, _ = got
        if inits and bname in inits:
            b.init = inits[bname]
        addr = place(bname, b.dtype, b.shape, b.init)
        addr_of[id(obj)] = (bname, addr)
        return bname, addr

    def convert(a, pname):
        """A user argument -> what Triton's binder sees (fake device tensors at warpgraph addresses)."""
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
            fake.bname = bname
            td = TensorDescriptor(fake, list(a.shape), list(a.strides), list(a.block_shape), a.padding)
            return td
        if isinstance(a, (bool, np.bool_)):
            return bool(a)
        if isinstance(a, (int, np.integer)):
            return int(a)
        if isinstance(a, (float, np.floating)):
            return float(a)
        if a is None or isinstance(a, str):
            return a
        if isinstance(a, (tuple, list)) and not isinstance(a, np.ndarray):
            return tuple(convert(x, f"{pname}[{j}]") for j, x in enumerate(a))
        if type(a).__module__.startswith("triton"):  # tl.constexpr, tl.float16, ...
            return a
        bname, addr = alloc(a, pname)
        fake = _DevPtr(addr, buffers[bname]["dtype"], buffers[bname]["shape"])
        fake.bname = bname
        return fake

    tl_kw = {}
    for p in kernel.params:
        if p.name in given:
            tl_kw[p.name] = given[p.name] if p.is_constexpr else convert(given[p.name], p.name)

    for bname, obj in (extra_buffers or {}).items():
        if bname in buffers:
            raise CaptureError(f"extra buffer {bname!r} clashes with an argument's buffer")
        got = _as_buf(obj, bname)
        if got is None:
            raise CaptureError(f"extra buffer {bname}: cannot use {type(obj).__name__} as a buffer")
        b, _ = got
        if inits and bname in inits:
            b.init = inits[bname]
        place(bname, b.dtype, b.shape, b.init)

    # ---- Triton's own specialization and compile
    gt = GPUTarget("cuda", _TARGETS[target], 32)
    backend = make_backend(gt)
    binder = create_function_from_signature(kernel.signature, kernel.params, backend)
    kw = dict(tl_kw)
    for k, v in opts.items():
        kw.setdefault(k, v)
    kw.update(debug=False, instrumentation_mode="")
    try:
        bound, spec, bopts = binder(**kw)
        options_, signature, cexprs, attrs = kernel._pack_args(backend, kw, bound, spec, bopts)
        ck = triton.compile(ASTSource(kernel, signature, cexprs, attrs), target=gt, options=options_.__dict__)
    except UserError:
        raise
    except Exception as e:  # compile errors carry the Triton source location in their text
        raise CaptureError(f"Triton failed to compile {kernel.fn.__name__}: {type(e).__name__}: {e}") from None
    ptx = ck.asm["ptx"]
    entry = ck.metadata.name

    # ---- params in PTX order (tuples flattened, constexprs dropped)
    params: list[dict] = []
    tmeta = list(getattr(ck.metadata, "tensordesc_meta", None) or [])
    copy_shapes = host_desc_copy_shapes(ck.asm.get("ttgir", "")) if tmeta else []
    ti = [0]

    def add_param(pname, sig, v):
        if sig == "constexpr":
            return
        if isinstance(sig, (tuple, list)):
            for j, (s2, v2) in enumerate(zip(sig, v)):
                add_param(f"{pname}[{j}]", s2, v2)
            return
        if sig.startswith("tensordesc"):
            meta = tmeta[ti[0]] if ti[0] < len(tmeta) else None
            box = list(meta["block_size"]) if meta else list(v.block_shape)
            if meta and ti[0] < len(copy_shapes):
                box = _copied_box(pname, box, *copy_shapes[ti[0]])
            ti[0] += 1
            sw = {0: 0, 1: 32, 2: 64, 3: 128}[meta["swizzle"]] if meta else 0
            params.append({"tensormap": {"buffer": v.base.bname, "box": box, "swizzle_bytes": sw,
                                         "oob_fill": "nan" if v.padding == "nan" else "zero"}})
            params.extend([{"u32": int(s)} for s in v.shape] + [{"u64": int(s)} for s in v.strides])
        elif sig.startswith("*"):
            params.append({"ptr": v.bname} if v is not None else {"ptr": None})
        elif sig in ("i32", "i16", "i8", "i1"):
            params.append({"u32" if int(v) >= 0 else "s32": int(v)})
        elif sig in ("u32", "u16", "u8"):
            params.append({"u32": int(v)})
        elif sig == "i64":
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

    for pname in pnames:
        add_param(pname, signature[pname], bound[pname])
    ptx_params = entry_params(ptx, entry)
    # Triton's trailing global / profile scratch pointers, allocated as its launcher does
    num_ctas = int(getattr(ck.metadata, "num_ctas", 1) or 1)
    n_prog = grid[0] * grid[1] * grid[2] * num_ctas
    scratch = [("global_scratch", int(getattr(ck.metadata, "global_scratch_size", 0) or 0),
                int(getattr(ck.metadata, "global_scratch_align", 1) or 1)),
               ("profile_scratch", int(getattr(ck.metadata, "profile_scratch_size", 0) or 0),
                int(getattr(ck.metadata, "profile_scratch_align", 1) or 1))]
    for j, q in enumerate(ptx_params[len(params):]):
        if q["type"] not in ("u64", "b64"):
            raise CaptureError(f"PTX param {q['name']} ({q['decl']}) has no matching argument")
        sname, size, align = scratch[j] if j < len(scratch) else (None, 0, 1)
        if size > 0:
            if align > ALIGN:
                raise CaptureError(f"{sname} alignment {align} exceeds the {ALIGN}-byte buffer alignment")
            bname = sname if sname not in buffers else "_" + sname
            place(bname, "uint8", [n_prog * size], "zeros")
            params.append({"ptr": bname})
        else:
            params.append({"ptr": None})

    block = _reqntid(ptx, entry) or [int(getattr(ck.metadata, "num_warps", opts["num_warps"])) * 32, 1, 1]
    src_file = inspect.getsourcefile(kernel.fn) or "?"
    cx_public = {}
    for path, v in cexprs.items():
        if len(path) == 1 and kernel.params[path[0]].is_constexpr:  # not the ints specialized to 1
            v = getattr(v, "value", v)
            cx_public[pnames[path[0]]] = _jsonable(v)
    rec_dict = {
        "format": "launch-record/1",
        "name": name or f"{entry}_{target}",
        "source": {"compiler": f"triton {triton.__version__}", "kernel": f"{Path(src_file).name}:{kernel.fn.__name__}",
                   "target": target, "constexprs": cx_public, "num_warps": int(options_.num_warps),
                   "num_stages": int(options_.num_stages), "captured_by": "warpgraph.workloads.triton_capture"},
        "ptx": "kernel.ptx",
        "entry": entry,
        "grid": grid,
        "block": block,
        "cluster": list(getattr(ck.metadata, "cluster_dims", None) or (1, 1, 1))[:3],
        "shared_bytes": int(ck.metadata.shared),
        "buffers": buffers,
        "params": params,
    }
    extra = {k: v for k, v in opts.items() if k not in ("num_warps", "num_stages")}
    if extra:
        rec_dict["source"]["options"] = {k: _jsonable(v) for k, v in extra.items()}
    if check is not None:
        rec_dict["check"] = check
    rec_dict["compiled"] = _compiled_block(ptx, entry, target)
    rec = record_from_dict(rec_dict, ptx_text=ptx)
    rec.validate_against(None)
    if out_dir is not None:
        rec = save_record(rec, out_dir, ptx)
    return rec


def _copied_box(pname: str, box: list[int], block: tuple[int, ...], shapes: set[tuple[int, ...]]) -> list[int]:
    """The box of host descriptor ``pname``: Triton's metadata ``box`` (its argument's ``block`` type, each
    dimension clamped as the TMA lowering splits copies: innermost to the swizzle span) unless every TMA copy
    through it moves one shape other than ``block``: Triton 3.6's warp-specialized data partitioning splits the
    tile but keeps the argument's type (triton-lang/triton#11587), and the PTX's ``expect_tx`` counts the split
    copy, whose shape (clamped the same way) becomes the box. Copies of several sizes cannot share one tensormap
    and are refused."""
    odd = sorted(s for s in shapes if s != tuple(block))
    if not odd:
        return box
    fix = ("build the descriptor on the device (tl.make_tensor_descriptor: its box follows the split), or keep the "
           "tile one consumer warp group wide (a smaller block or no warp_specialize)")
    b = "x".join(map(str, block))
    if len(shapes) > 1 or len(odd[0]) != len(box):
        raise CaptureError(f"argument {pname}: the compiled kernel copies this {b} host tensor descriptor as "
                           f"{' and '.join('x'.join(map(str, s)) for s in sorted(shapes))} boxes, which one "
                           f"tensormap cannot serve (Triton's warp-specialized data partitioning split the tile: "
                           f"triton-lang/triton#11587)", hint=fix)
    new = [min(int(c), int(m)) for c, m in zip(odd[0], box)]
    import warnings

    warnings.warn(f"capture: argument {pname}: Triton's metadata gives a {'x'.join(map(str, box))} box (the one its "
                  f"own launcher builds) but the warp-specialized kernel copies {'x'.join(map(str, odd[0]))} tiles "
                  f"of this {b} descriptor (triton-lang/triton#11587); the record uses the "
                  f"{'x'.join(map(str, new))} box the PTX expects, so a GPU launch through Triton 3.6 will not "
                  f"match it: {fix}", stacklevel=4)
    return new


def _compiled_block(ptx: str, entry: str, target: str) -> dict:
    """ptxas facts (registers, spills) recorded at capture, for the GPU ISA the record runs on: the target itself
    for Blackwell, sm_90a (H100/H200) for Hopper and older targets, which Hopper runs (workloads/compiled.py); with
    nvdisasm also each PTX instruction's place in the SASS (the issue order, workloads/issue_order.py)."""
    from warpgraph.workloads.compiled import ptxas_facts
    from warpgraph.workloads.ptx import parse_ptx
    from warpgraph.workloads.sass import listing_places

    isa = target if _TARGETS[target] >= 100 else "sm_90a"
    f, why = ptxas_facts(ptx, entry, isa, prefer="triton")
    if f is None:
        import warnings

        warnings.warn(f"capture: no compiler facts recorded for {isa} ({why})", stacklevel=3)
        return {}
    block = f.to_json()
    places = listing_places(ptx, entry, parse_ptx(ptx).entry(entry), isa, "triton")
    if places is not None:
        block.update(places)
    return {isa: block}


def _jsonable(v):
    if isinstance(v, (int, float, bool, str)) or v is None:
        return v
    if isinstance(v, (tuple, list)):
        return [_jsonable(getattr(x, "value", x)) for x in v]
    return str(v)
