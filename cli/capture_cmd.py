"""``warpgraph capture``: compile a Triton kernel offline and write its launch record.

    warpgraph capture kernels.py:gemm_ptr --grid 4 --target sm_90a --num-warps 8 --num-stages 3 \\
        -a a=float16[256,256]:normal=0.1 -a b=float16[256,256]:normal=0.1 -a c=float16[256,256]:poison \\
        -a M=256 -a N=256 -a K=256 -a stride_am=256 -a stride_ak=1 -a stride_bk=256 -a stride_bn=1 \\
        -a stride_cm=256 -a stride_cn=1 -a BLOCK_M=128 -a BLOCK_N=128 -a BLOCK_K=64 -a GROUP_M=8 \\
        --out records/gemm_small

Argument values: an int, a float, ``true``/``false``, ``none``, a quoted string (``ACT="leaky_relu"``; a bare
word also reads as a string), a tuple ``(64,128)`` of values, a Triton dtype ``tl.float16``, or a buffer
``DTYPE[d0,d1,...]`` with an optional TMA block ``@B0xB1`` (the argument becomes a tensor descriptor) and an
optional init ``:zeros``, ``:poison``, ``:normal=SIGMA`` (default ``normal=1``), ``:uniform=LO,HI``,
``:values=V0,V1,...`` or ``:addresses=BUF0,BUF1,...`` (a uint64 table of buffer addresses). Arguments bind by
name, so any order works and parameters with defaults may be left out; a parameter named like a launch option
(``num_stages``) also sets that option. ``--buffer NAME=DTYPE[...]:init`` adds a buffer no parameter names
(reached through a pointer table). Needs the ``triton`` extra.
"""
from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Optional

from warpgraph.core.errors import UserError

_BUF = re.compile(r"^(\w+)\[([\d,\s]*)\](?:@([\dx]+))?(?::(zeros|poison|normal=([0-9.eE+-]+)|uniform=([^:]+)"
                  r"|values=([^:]*)|addresses=([^:]*)))?$")


class CaptureArgError(UserError):
    pass


def parse_value(text: str, where: str):
    """One ``-a NAME=VALUE`` value -> python value, ``Buf`` or ``("desc", Buf, block)``."""
    from warpgraph.workloads.record import DTYPES

    t = text.strip()
    low = t.lower()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'":
        return t[1:-1]
    if t.startswith("(") and t.endswith(")"):
        inner = t[1:-1].strip()
        if not inner:
            return ()
        return tuple(parse_value(x, where) for x in _split_top(inner))
    if t.startswith("tl."):
        try:
            import triton.language as tl
        except ImportError:
            raise CaptureArgError("Triton is not installed", location=where, hint="pip install 'warpgraph[triton]'") from None
        v = getattr(tl, t[3:], None)
        if v is None:
            raise CaptureArgError(f"triton.language has no {t[3:]!r}", location=where, hint="e.g. tl.float16")
        return v
    if low in ("none", "null"):
        return None
    if low in ("true", "false"):
        return low == "true"
    if re.fullmatch(r"[+-]?\d+", t):
        return int(t)
    if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?", t):
        return float(t)
    m = _BUF.match(t)
    if m:
        from warpgraph.workloads.triton_capture import Buf

        dtype, dims, block, init, sigma, uni, vals, addrs = m.groups()
        if dtype not in DTYPES:
            raise CaptureArgError(f"unknown dtype {dtype!r}", location=where, hint="one of " + ", ".join(DTYPES))
        shape = [int(x) for x in dims.split(",") if x.strip()]
        try:
            if init is None or init.startswith("normal"):
                ini = {"normal": float(sigma) if sigma else 1.0}
            elif uni is not None:
                lo, hi = (float(x) for x in uni.split(","))
                ini = {"uniform": [lo, hi]}
            elif vals is not None:
                ini = {"values": [float(x) if any(c in x for c in ".eE") else int(x) for x in vals.split(",") if x.strip()]}
            elif addrs is not None:
                ini = {"addresses": [x.strip() for x in addrs.split(",") if x.strip()]}
            else:
                ini = init
        except ValueError:
            raise CaptureArgError(f"cannot read init {init!r}", location=where,
                                  hint="uniform=LO,HI | values=V0,V1,... | addresses=BUF0,BUF1,...") from None
        b = Buf(dtype, shape, ini)
        if block:
            return ("desc", b, [int(x) for x in block.split("x")])
        return b
    if re.fullmatch(r"[A-Za-z_]\w*", t):  # a bare word: a string constexpr (ACT=leaky_relu)
        return t
    raise CaptureArgError(f"cannot read value {text!r}", location=where,
                          hint="an int, a float, none, true/false, \"string\", (tuple), tl.DTYPE, or "
                               "DTYPE[d0,d1][@B0xB1][:zeros|:poison|:normal=S|:uniform=LO,HI|:values=...|:addresses=...]")


def _split_top(text: str) -> list[str]:
    """Split on commas outside (), [] and quotes."""
    out, depth, cur, q = [], 0, "", None
    for ch in text:
        if q:
            q = None if ch == q else q
        elif ch in "\"'":
            q = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        cur += ch
    out.append(cur)
    return [x for x in out if x.strip()]


def load_kernel(spec: str):
    """``path/to/kernels.py:fn`` -> the ``@triton.jit`` function."""
    if ":" not in spec:
        raise CaptureArgError(f"kernel {spec!r}", hint="FILE.py:FUNCTION")
    path, fn = spec.rsplit(":", 1)
    p = Path(path)
    if not p.is_file():
        raise CaptureArgError(f"no file {path}", location=spec, hint="a Python file defining @triton.jit kernels")
    modname = f"_warpgraph_capture_{p.stem}"
    s = importlib.util.spec_from_file_location(modname, p)
    mod = importlib.util.module_from_spec(s)
    sys.modules[modname] = mod
    try:
        s.loader.exec_module(mod)
    except ImportError as e:
        raise CaptureArgError(f"cannot import {path}: {e}", location=spec,
                              hint="pip install 'warpgraph[triton]' (triton==3.6.0)") from None
    k = getattr(mod, fn, None)
    if k is None or not hasattr(k, "params"):
        raise CaptureArgError(f"{fn!r} is not a @triton.jit function in {path}", location=spec)
    return k


def _pairs(items: list[str], what: str) -> dict:
    out = {}
    for a in items:
        if "=" not in a:
            raise CaptureArgError(f"{what} {a!r}", hint="NAME=VALUE")
        k, v = a.split("=", 1)
        k = k.strip()
        if k in out:
            raise CaptureArgError(f"{what} {k!r} given twice", location=f"{what} {a}")
        out[k] = parse_value(v, f"{what} {a}")
    return out


def run_capture(kernel_spec: str, grid: str, args: list[str], target: str, num_warps: Optional[int],
                num_stages: Optional[int], out: str, name: Optional[str], options: list[str] | None = None,
                buffers: list[str] | None = None):
    from warpgraph.workloads.triton_capture import Buf, capture, tensor_descriptor

    kernel = load_kernel(kernel_spec)
    given = _pairs(args, "-a")
    names = [p.name for p in kernel.params]
    unknown = set(given) - set(names)
    if unknown:
        raise CaptureArgError(f"unknown argument(s) {sorted(unknown)}", hint="kernel parameters: " + ", ".join(names))
    missing = [p.name for p in kernel.params if p.name not in given and not p.has_default]
    if missing:
        raise CaptureArgError(f"missing argument(s) {missing}", hint="-a NAME=VALUE for: " + ", ".join(names))
    kw = {}
    for k, v in given.items():
        if isinstance(v, tuple) and len(v) == 3 and v[0] == "desc":
            v = tensor_descriptor(v[1], v[2])
        kw[k] = v
    extra = {}
    for k, v in _pairs(buffers or [], "--buffer").items():
        if not isinstance(v, Buf):
            raise CaptureArgError(f"--buffer {k}: not a buffer", hint="NAME=DTYPE[d0,...][:init]")
        extra[k] = v
    opts = _pairs(options or [], "--option")
    try:
        g = [int(x) for x in grid.replace("x", ",").split(",") if x.strip()]
    except ValueError:
        raise CaptureArgError(f"grid {grid!r}", hint="e.g. 256 or 8,64,1") from None
    rec = capture(kernel, g, kwargs=kw, target=target, num_warps=num_warps, num_stages=num_stages, options=opts,
                  out_dir=out, name=name or Path(out).name, extra_buffers=extra)
    return rec


def register(app) -> None:
    import typer

    @app.command("capture")
    def capture_cmd(
        kernel: str = typer.Argument(..., help="FILE.py:FUNCTION of a @triton.jit kernel"),
        grid: str = typer.Option(..., "--grid", "-g", help="grid, e.g. 256 or 8,64,1"),
        arg: list[str] = typer.Option([], "--arg", "-a", help="NAME=VALUE per kernel parameter (incl. constexprs)"),
        target: str = typer.Option("sm_90a", "--target", "-t", help="sm_90a | sm_80 | sm_100a"),
        num_warps: Optional[int] = typer.Option(None, "--num-warps", help="launch option (Triton's default 4)"),
        num_stages: Optional[int] = typer.Option(None, "--num-stages", help="launch option (Triton's default 3)"),
        option: list[str] = typer.Option([], "--option", help="another launch option NAME=VALUE "
                                         "(num_ctas, maxnreg, enable_fp_fusion, launch_pdl, ...)"),
        buffer: list[str] = typer.Option([], "--buffer", help="NAME=DTYPE[d0,...][:init] for a buffer no "
                                         "parameter names (reached through a pointer table)"),
        out: str = typer.Option(..., "--out", "-o", help="record folder to write (launch.json + kernel.ptx)"),
        name: Optional[str] = typer.Option(None, "--name", help="record name (default: the folder name)"),
    ):
        """Compile a Triton kernel offline (no GPU) and write its launch record."""
        rec = run_capture(kernel, grid, arg, target, num_warps, num_stages, out, name, option, buffer)
        typer.echo(f"wrote {rec.dir}/launch.json ({rec.entry}, {len(rec.params)} params, grid {rec.grid}, "
                   f"block {rec.block}, {rec.shared_bytes} B shared)")
