"""``warpgraph capture``: compile a Triton kernel offline and write its launch record.

    warpgraph capture kernels.py:gemm_ptr --grid 4 --target sm_90a --num-warps 8 --num-stages 3 \\
        -a a=float16[256,256]:normal=0.1 -a b=float16[256,256]:normal=0.1 -a c=float16[256,256]:poison \\
        -a M=256 -a N=256 -a K=256 -a stride_am=256 -a stride_ak=1 -a stride_bk=256 -a stride_bn=1 \\
        -a stride_cm=256 -a stride_cn=1 -a BLOCK_M=128 -a BLOCK_N=128 -a BLOCK_K=64 -a GROUP_M=8 \\
        --out records/gemm_small

Argument values: an int, a float, ``true``/``false``, ``none``, or a buffer ``DTYPE[d0,d1,...]`` with an
optional TMA block ``@B0xB1`` (the argument becomes a tensor descriptor) and an optional ``:zeros``,
``:poison`` or ``:normal=SIGMA`` init (default ``normal=1``). Needs the ``triton`` extra.
"""
from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Optional

from warpgraph.core.errors import UserError

_BUF = re.compile(r"^(\w+)\[([\d,\s]*)\](?:@([\dx]+))?(?::(zeros|poison|normal=([0-9.eE+-]+)))?$")


class CaptureArgError(UserError):
    pass


def parse_value(text: str, where: str):
    """One ``-a NAME=VALUE`` value -> python value, ``Buf`` or ``("desc", Buf, block)``."""
    from warpgraph.workloads.record import DTYPES

    t = text.strip()
    low = t.lower()
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

        dtype, dims, block, init, sigma = m.groups()
        if dtype not in DTYPES:
            raise CaptureArgError(f"unknown dtype {dtype!r}", location=where, hint="one of " + ", ".join(DTYPES))
        shape = [int(x) for x in dims.split(",") if x.strip()]
        if init is None or init.startswith("normal"):
            ini = {"normal": float(sigma) if sigma else 1.0}
        else:
            ini = init
        b = Buf(dtype, shape, ini)
        if block:
            return ("desc", b, [int(x) for x in block.split("x")])
        return b
    raise CaptureArgError(f"cannot read value {text!r}", location=where,
                          hint="an int, a float, none, true/false, or DTYPE[d0,d1][@B0xB1][:zeros|:poison|:normal=S]")


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


def run_capture(kernel_spec: str, grid: str, args: list[str], target: str, num_warps: int,
                num_stages: Optional[int], out: str, name: Optional[str]):
    from warpgraph.workloads.triton_capture import tensor_descriptor, capture

    kernel = load_kernel(kernel_spec)
    given = {}
    for a in args:
        if "=" not in a:
            raise CaptureArgError(f"argument {a!r}", hint="NAME=VALUE")
        k, v = a.split("=", 1)
        given[k.strip()] = parse_value(v, f"-a {a}")
    names = [p.name for p in kernel.params]
    unknown = set(given) - set(names)
    if unknown:
        raise CaptureArgError(f"unknown argument(s) {sorted(unknown)}", hint="kernel parameters: " + ", ".join(names))
    pos = []  # every parameter in kernel order (constexprs too: Triton binds them positionally)
    for p in kernel.params:
        if p.name not in given:
            if p.has_default:
                break
            raise CaptureArgError(f"missing argument {p.name!r}", hint="-a NAME=VALUE for: " + ", ".join(names))
        v = given[p.name]
        if isinstance(v, tuple) and v[0] == "desc":
            v = tensor_descriptor(v[1], v[2])
        pos.append(v)
    later = [n for n in names[len(pos):] if n in given]
    if later:
        raise CaptureArgError(f"argument(s) {later} follow a parameter left at its default",
                              hint="give every parameter before them too")
    try:
        g = [int(x) for x in grid.replace("x", ",").split(",") if x.strip()]
    except ValueError:
        raise CaptureArgError(f"grid {grid!r}", hint="e.g. 256 or 8,64,1") from None
    rec = capture(kernel, g, pos, target=target, num_warps=num_warps, num_stages=num_stages, out_dir=out,
                  name=name or Path(out).name)
    return rec


def register(app) -> None:
    import typer

    @app.command("capture")
    def capture_cmd(
        kernel: str = typer.Argument(..., help="FILE.py:FUNCTION of a @triton.jit kernel"),
        grid: str = typer.Option(..., "--grid", "-g", help="grid, e.g. 256 or 8,64,1"),
        arg: list[str] = typer.Option([], "--arg", "-a", help="NAME=VALUE per kernel parameter (incl. constexprs)"),
        target: str = typer.Option("sm_90a", "--target", "-t", help="sm_90a | sm_80 | sm_100a"),
        num_warps: int = typer.Option(4, "--num-warps"),
        num_stages: int = typer.Option(3, "--num-stages"),
        out: str = typer.Option(..., "--out", "-o", help="record folder to write (launch.json + kernel.ptx)"),
        name: Optional[str] = typer.Option(None, "--name", help="record name (default: the folder name)"),
    ):
        """Compile a Triton kernel offline (no GPU) and write its launch record."""
        rec = run_capture(kernel, grid, arg, target, num_warps, num_stages, out, name)
        typer.echo(f"wrote {rec.dir}/launch.json ({rec.entry}, {len(rec.params)} params, grid {rec.grid}, "
                   f"block {rec.block}, {rec.shared_bytes} B shared)")
